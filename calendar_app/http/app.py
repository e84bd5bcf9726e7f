"""Application factory: one calendar (`wiring.open_calendar`) per Flask app."""

from __future__ import annotations

import atexit
from pathlib import Path

from flask import Flask

from ..importing.sources import Scheduler
from ..store import gitfast
from ..store.locations import DEFAULT_BASE_PATH, default_users_file
from ..store.starter import ensure_demo
from ..store.users import DEFAULT_HASH_N
from ..sync.idlease import DEFAULT_BLOCK, LEASE_TIMEOUT
from ..sync.settings import NETWORK_TIMEOUT, SyncSettings, seconds
from ..wiring import Calendar, open_calendar, subscribe_follower


def create_app(config: dict | None = None) -> Flask:
    """Config keys: CONTENT_DIR, USERS_FILE, CACHE_DIR, BASE_PATH, SITE_URL, NOW,
    MAX_CONTENT_LENGTH (bytes), WATCH (follow the tree with watchdog; default on unless
    TESTING), INDEX_IN_BACKGROUND (write the search index from a thread; default on
    unless TESTING, where `calendar.index.flush()` writes it), SYNC_REMOTE (a remote's
    name or URL: clone it into CONTENT_DIR when empty, push writes, integrate what
    others push), SYNC_BRANCH ("main"), SYNC_WEBHOOK_SECRET, SYNC_POLL (seconds, 0 =
    off), SYNC_PUSH ("wait" or "queue"), SYNC_TIMEOUT (seconds for the network calls of
    one exchange, below the worker timeout); see docs/deployment.md. With a remote, new ids
    come from blocks of ID_BLOCK (100) ids leased there (idlease.py), so instances never
    share one; ID_LEASE_TIMEOUT (10) bounds in seconds each lease's talk with the remote.
    SECRET_KEY signs the editing pages' sessions (default: a key kept beside the users
    file), SESSION_COOKIE_SECURE (set it behind HTTPS); see editing/auth.py.
    SITE (default on unless TESTING): serve the calendar's website at `/`, built into
    CACHE_DIR/site and kept in step with every change (site/live.py); its address is
    SITE_URL, else LOCAL_URL (the address `serve` listens at), else calendar.yaml's
    `url`.
    SOURCES_TICK (60): seconds between looks for import sources that are due (0 = none
    run while serving; importing/sources.py).
    PASSWORD_HASH_N (2**14): scrypt's cost for passwords set through the app and for
    the check of unknown names; for tests only, which lower it (store/users.py).
    COMPILED_TEMPLATES: where the editing pages' compiled templates are kept (default
    CACHE_DIR/editing-templates; the tests share one folder per process)."""
    app = Flask(__name__)
    app.config.update(
        CONTENT_DIR=None,  # the per-user demo calendar, never the bundled sample
        USERS_FILE=None,
        CACHE_DIR=None,
        BASE_PATH=DEFAULT_BASE_PATH,
        SITE_URL=None,
        NOW=None,
        MAX_CONTENT_LENGTH=1 << 20,
        SYNC_REMOTE=None,
        SYNC_BRANCH="main",
        SYNC_WEBHOOK_SECRET="",
        SYNC_POLL=0,
        SYNC_PUSH="wait",
        SYNC_TIMEOUT=NETWORK_TIMEOUT,
        ID_BLOCK=DEFAULT_BLOCK,
        ID_LEASE_TIMEOUT=LEASE_TIMEOUT,
        LOCAL_URL=None,
        SOURCES_TICK=60,
        PASSWORD_HASH_N=DEFAULT_HASH_N,
        COMPILED_TEMPLATES=None,
    )
    app.config.update(config or {})
    users_file = Path(app.config["USERS_FILE"] or default_users_file())
    cache = app.config["CACHE_DIR"]
    testing = bool(app.config.get("TESTING"))
    watch = app.config.get("WATCH")
    background = app.config.get("INDEX_IN_BACKGROUND")
    sync = _sync_settings(app.config)
    content = Path(app.config["CONTENT_DIR"] or ensure_demo()[0])
    calendar = open_calendar(
        content, users_file, Path(cache) if cache else None,
        app.config["NOW"], watch=not testing if watch is None else bool(watch),
        index_in_background=not testing if background is None else bool(background),
        sync=sync, id_block=int(app.config["ID_BLOCK"]),
        id_lease_timeout=seconds(app.config["ID_LEASE_TIMEOUT"], "ID_LEASE_TIMEOUT"),
        password_hash_n=int(app.config["PASSWORD_HASH_N"]))
    app.extensions["calendar"] = calendar
    gitfast.preload()  # before gunicorn forks: not in a first write, under the lock
    atexit.register(calendar.close)

    @app.before_request
    def _follow_changes() -> None:
        calendar.ensure_started()
        calendar.sync()
        # Every lookup of this request reads this one version (and its own writes).
        calendar.catalog.pin()

    @app.teardown_request
    def _release_version(_exc: BaseException | None) -> None:
        calendar.catalog.unpin()

    _install_views(app)
    _install_background(app, calendar, testing)
    return app


def _sync_settings(config: dict) -> SyncSettings | None:
    """The shared remote's settings from the SYNC_* keys; None without a remote."""
    if not config["SYNC_REMOTE"]:
        return None
    if not config["CONTENT_DIR"]:
        raise ValueError("SYNC_REMOTE needs CONTENT_DIR: the folder to clone into")
    return SyncSettings(config["SYNC_REMOTE"], config["SYNC_BRANCH"] or "main",
                        config["SYNC_WEBHOOK_SECRET"] or "",
                        seconds(config["SYNC_POLL"] or 0, "SYNC_POLL"),
                        config["SYNC_PUSH"],
                        seconds(config["SYNC_TIMEOUT"], "SYNC_TIMEOUT"))


def _install_background(app: Flask, calendar: Calendar, testing: bool) -> None:
    """The parts that work beside the requests: import sources on their schedule, the
    website kept in step."""
    if app.config["SOURCES_TICK"]:
        calendar.background.append(Scheduler(calendar, float(app.config["SOURCES_TICK"])))
    serve_site = app.config.get("SITE")
    if not testing if serve_site is None else bool(serve_site):
        _install_site(app, calendar)


def _install_views(app: Flask) -> None:
    """The editing pages, then the interface in both namespaces and WordPress's routes,
    then submissions and their moderation."""
    from ..editing import auth, endpoints, language, moderation, submit, views
    from ..site.render import CompiledTemplates
    from . import api, tec_api, wp_core

    # The editing pages' templates compiled once per cache folder, not once per
    # process: each page's first showing compiled its templates again (0.26 s for all).
    # Set before anything makes Flask's environment.
    folder = app.config["COMPILED_TEMPLATES"] or \
        app.extensions["calendar"].cache_dir / "editing-templates"
    app.jinja_options = {**app.jinja_options,
                         "bytecode_cache": CompiledTemplates.within(Path(folder), "editing")}
    # The pages' words in the calendar's language (editing/language.py).
    language.install(app, lambda: app.extensions["calendar"].catalog.settings)
    # First, so that its after-request hook runs last: the pages' own policy and
    # caching win over the interface's defaults.
    auth.init_app(app)
    app.register_blueprint(views.bp)  # the editing pages (/admin/)
    app.register_blueprint(endpoints.bp)
    api.install(app)
    tec_api.install(app)  # the plugin's newer namespace, over the same calendar
    wp_core.install(app)  # WordPress's own routes its clients call
    # The interface keeps Basic auth and application passwords: no CSRF token there.
    for view in (api.bp, tec_api.bp, wp_core.bp, wp_core.site_index, api.sync_webhook):
        auth.csrf.exempt(view)
    submit.install(app)  # public submissions (/submit/) and their queue (/admin/pending/)
    moderation.install(app)


def _install_site(app: Flask, calendar: Calendar) -> None:
    from ..site.live import LiveSite
    from . import site_files

    site = LiveSite(calendar.tree.root, calendar.cache_dir,
                    app.config["SITE_URL"] or app.config["LOCAL_URL"], app.config["NOW"],
                    catch_up=calendar.journal.catch_up)
    subscribe_follower(calendar, site)
    site_files.install(app, site)
