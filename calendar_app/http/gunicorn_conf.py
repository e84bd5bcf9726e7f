"""gunicorn settings for the calendar, shipped in the package so an installed copy has
them too:

    gunicorn -c python:calendar_app.http.gunicorn_conf -w 2 -b 127.0.0.1:8000 calendar_app.http.wsgi:app

Command-line options given after `-c` override these.
"""

# -- request limits -----------------------------------------------------------------
# gunicorn's defaults (request line 4094, one header 8190 bytes, 100 headers) sit
# below the interface's own limits (guard.py: MAX_QUERY_LENGTH 4096 characters,
# MAX_HEADER_BYTES 16 KiB), so gunicorn answered first, with an HTML page. Raised
# above them, the interface's limits and its JSON error shape apply; still finite, so
# gunicorn keeps bounding what a worker buffers (here ~8 MB of headers at most).
limit_request_line = 8190  # gunicorn's largest finite value (0 would mean unlimited)
limit_request_field_size = 32768  # one header alone may exceed MAX_HEADER_BYTES
limit_request_fields = 256

# gunicorn's default, stated because sync.py keeps every network git call of a request
# below it (NETWORK_TIMEOUT, SYNC_TIMEOUT): a worker killed mid-request would leave
# its git process behind.
timeout = 30

# -- preloading -----------------------------------------------------------------------
# The master loads the calendar (imports calendar_app.http.wsgi) once, before forking: at
# 100,000 events a first load without a cache takes a minute or more, and a worker
# loading it inside its first request was killed by the worker timeout (30 s), again
# and again. Workers share the loaded records copy-on-write; each opens its own index
# searcher, journal name and background threads right after the fork (post_fork).
preload_app = True


def _calendar(wsgi_app):
    """The calendar of a preloaded app, if the app is ours."""
    extensions = getattr(wsgi_app, "extensions", None) or {}
    return extensions.get("calendar")


def when_ready(server):
    calendar = _calendar(server.app.callable)  # None unless preloaded
    if calendar is not None:
        calendar.warm()  # before the workers are forked: they share what it makes
        server.log.info("calendar loaded before forking: %d records (pid %d)",
                        len(calendar.catalog.current.records), calendar.loaded_in)
    _start_site_builder(server)


# -- the website's builder ---------------------------------------------------------------
# A process of its own (site/child.py), started before the workers are forked so that it
# holds site.lock first: no serving worker builds (a second catalog, the GIL) while it
# lives. If it dies, a worker takes over the lock, as before.
_site_builder = None


def _start_site_builder(server) -> None:
    global _site_builder
    extensions = getattr(server.app.callable, "extensions", None) or {}
    site = extensions.get("site")  # None unless the app serves its website
    if site is None or _site_builder is not None:
        return
    from calendar_app.site import child

    _site_builder = child.start(site.content, site.cache_dir, site.base_url, site.now)
    if _site_builder is not None:
        server.log.info("site builder started: pid %d", _site_builder.pid)


def on_exit(server):
    global _site_builder
    if _site_builder is not None:
        from calendar_app.site import child

        child.stop(_site_builder)
        _site_builder = None


def post_fork(server, worker):
    calendar = _calendar(worker.app.callable)
    if calendar is not None:
        calendar.after_fork()
        server.log.info("worker %d ready: calendar loaded by pid %d", worker.pid,
                        calendar.loaded_in)
