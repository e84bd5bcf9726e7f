"""gunicorn settings for the calendar, shipped in the package so an installed copy has
them too:

    gunicorn -c python:calendar_app.gunicorn_conf -w 2 -b 127.0.0.1:8000 calendar_app.wsgi:app

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
