"""WSGI entry point for production servers: `gunicorn -w 2 calendar_app.http.wsgi:app`.

Configured from the environment: CALENDAR_CONTENT (content tree, default the per-user
demo calendar made from the bundled sample), CALENDAR_USERS (users file), CALENDAR_CACHE
(index and cache folder), CALENDAR_SITE_URL (public address used in URLs; default: the request's host).
With a shared repository (docs/deployment.md): CALENDAR_REMOTE (remote name or URL;
CALENDAR_CONTENT is then required, cloned into when empty), CALENDAR_BRANCH (main),
CALENDAR_WEBHOOK_SECRET, CALENDAR_POLL (seconds), CALENDAR_PUSH (wait or queue),
CALENDAR_SYNC_TIMEOUT (seconds, 10), CALENDAR_ID_BLOCK (ids leased at a time, 100),
CALENDAR_ID_LEASE_TIMEOUT (seconds for one lease's fetch and push, 10).
CALENDAR_SITE=0 serves the interface alone, without the website at `/`.
"""

import os

from ..store.content import NETWORK_TIMEOUT
from ..store.starter import serving_content
from .app import create_app

_remote = os.environ.get("CALENDAR_REMOTE")
app = create_app({
    # With a remote, the folder to clone into must be named: never the demo calendar.
    "CONTENT_DIR": os.environ.get("CALENDAR_CONTENT") if _remote
    else str(serving_content(None)[0]),
    "USERS_FILE": os.environ.get("CALENDAR_USERS"),
    "CACHE_DIR": os.environ.get("CALENDAR_CACHE"),
    "SITE_URL": os.environ.get("CALENDAR_SITE_URL"),
    "SYNC_REMOTE": _remote,
    "SYNC_BRANCH": os.environ.get("CALENDAR_BRANCH") or "main",
    "SYNC_WEBHOOK_SECRET": os.environ.get("CALENDAR_WEBHOOK_SECRET") or "",
    "SYNC_POLL": os.environ.get("CALENDAR_POLL") or 0,  # checked by SyncSettings
    "SYNC_PUSH": os.environ.get("CALENDAR_PUSH") or "wait",
    "SYNC_TIMEOUT": os.environ.get("CALENDAR_SYNC_TIMEOUT") or NETWORK_TIMEOUT,
    "ID_BLOCK": int(os.environ.get("CALENDAR_ID_BLOCK") or 100),
    "ID_LEASE_TIMEOUT": os.environ.get("CALENDAR_ID_LEASE_TIMEOUT") or NETWORK_TIMEOUT,
    "SITE": os.environ.get("CALENDAR_SITE", "1") != "0",
})
