"""WSGI entry point for production servers: `gunicorn -w 2 calendar_app.wsgi:app`.

Configured from the environment: CALENDAR_CONTENT (content tree, default the per-user
demo calendar made from the bundled sample), CALENDAR_USERS (users file), CALENDAR_CACHE
(index and cache folder), CALENDAR_SITE_URL (public address used in URLs; default: the request's host).
"""

import os

from .app import create_app
from .starter import serving_content

app = create_app({
    "CONTENT_DIR": str(serving_content(None)[0]),
    "USERS_FILE": os.environ.get("CALENDAR_USERS"),
    "CACHE_DIR": os.environ.get("CALENDAR_CACHE"),
    "SITE_URL": os.environ.get("CALENDAR_SITE_URL"),
})
