"""The calendar's website at `/`: the files the served site builds (`site/live.py`), as
a static host would serve them, plus the plugin's `?ical=1` on a page for its feed.

Only paths inside the site folder are served (no `..`, no hidden files such as the
build manifest); a folder is its `index.html` (without its slash: a redirect to it);
anything else is the site's own 404 page. Files go out with their type, ETag and
Last-Modified, and revalidated (`no-cache`): a page changes with every write. The
interface keeps `/wp-json/`: a path there that no API route takes is the API's 404.
"""

from __future__ import annotations

import datetime as dt
import mimetypes
import os
import re
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, current_app, redirect, request, send_file
from werkzeug.exceptions import RequestedRangeNotSatisfiable
from werkzeug.http import is_resource_modified
from werkzeug.security import safe_join

from ..site.live import LiveSite

bp = Blueprint("site_files", __name__)

# The builder's outputs (werkzeug adds `charset=utf-8` to the text ones); other files
# (images) by their extension.
TYPES = {
    ".html": "text/html", ".css": "text/css", ".js": "text/javascript",
    ".ics": "text/calendar", ".xml": "application/xml", ".txt": "text/plain",
    ".json": "application/json", ".svg": "image/svg+xml", ".webp": "image/webp",
    ".avif": "image/avif",
}
HTML = "text/html; charset=utf-8"
RETRY_AFTER = 2  # seconds: the demo calendar builds in about one
_PAGINATED = re.compile(r"page/\d+/$")
# Pages whose feed is the whole calendar's (the home page and the lists).
_WHOLE_CALENDAR = ("", "events/list/", "events/past/")
BUILDING = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Building the calendar</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{seconds}"></head>
<body><main><h1>Building the calendar</h1>
<p>The calendar's pages are being made. This page reloads in a moment.</p>
<p>The interface already answers at <a href="/wp-json/tribe/events/v1/">/wp-json/tribe/events/v1/</a>.</p>
</main></body></html>
"""


def _site() -> LiveSite:
    return current_app.extensions["site"]


def content_type(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    return TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"


@bp.route("/", defaults={"path": ""}, methods=["GET"])
@bp.route("/<path:path>", methods=["GET"])
def site_file(path: str) -> Response:
    if path.split("/", 1)[0].lower() == "wp-json":
        abort(404)  # the interface's own answer: rest_no_route
    site = _site()
    if not site.ready:
        response = Response(BUILDING.format(seconds=RETRY_AFTER), 503,
                            content_type=HTML)
        response.headers["Retry-After"] = str(RETRY_AFTER)
        response.headers["Cache-Control"] = "no-store"
        return response
    root = str(site.out)
    parts = path.split("/")
    target = safe_join(root, path) if path else root
    if target is None or any(p.startswith(".") for p in parts if p):
        return _not_found(root)
    if os.path.isdir(target):
        if path and not path.endswith("/"):
            query = request.query_string.decode("latin-1")
            return redirect("/" + path + "/" + ("?" + query if query else ""), 308)
        if request.args.get("ical"):
            return _feed(root, path)
        target = os.path.join(target, "index.html")
    if not os.path.isfile(target):
        return _not_found(root)
    return _send(target)


def _send(target: str, download: str = "") -> Response:
    # One open file for the length, the validators and the bytes: the builder replaces
    # pages by renaming new files over them, and a send by path (stat, then open) could
    # announce the old page's length and send the new one's bytes. The file is streamed,
    # not read whole (a large image or feed costs a buffer, not its size); werkzeug only
    # knows a file object's length when told, so ranges and 304s are worked out here.
    fh = open(target, "rb")  # noqa: SIM115 (the response closes it when sent)
    try:
        stat = os.fstat(fh.fileno())
        etag = f"{stat.st_mtime_ns:x}-{stat.st_size:x}-{stat.st_ino:x}"
        response = send_file(fh, mimetype=content_type(target), conditional=False,
                             etag=etag, last_modified=stat.st_mtime, max_age=None,
                             download_name=download or None, as_attachment=bool(download))
        response.content_length = stat.st_size
        # The validators before the range (RFC 9110, 13.2.2): a copy still fresh is a
        # 304 even when a range is asked; werkzeug would answer the range first.
        fresh = not is_resource_modified(
            request.environ, etag=etag,
            last_modified=dt.datetime.fromtimestamp(stat.st_mtime, dt.UTC))
        response = response.make_conditional(request.environ, accept_ranges=True,
                                             complete_length=None if fresh else stat.st_size)
    except RequestedRangeNotSatisfiable:
        fh.close()
        # As a static host answers: the file's length, for the client's next range.
        return Response(b"", 416, headers={"Content-Range": f"bytes */{stat.st_size}"})
    except BaseException:
        fh.close()
        raise
    response.headers["Cache-Control"] = "no-cache"
    return response


def _feed(root: str, folder: str) -> Response:
    """`?ical=1` on a page: its feed, as the plugin answers on its views (an event's
    page: its .ics; a month's or a day's: their events; a venue's, organizer's or
    term's: its feed; the lists: the calendar's)."""
    folder = _PAGINATED.sub("", folder)
    names = ["event.ics", "events.ics", "calendar.ics"]
    candidates = [folder + name for name in names]
    if folder in _WHOLE_CALENDAR:
        candidates.append("calendar.ics")
    for relpath in candidates:
        target = safe_join(root, relpath)
        if target is not None and os.path.isfile(target):
            name = "-".join(p for p in folder.split("/") if p) or "calendar"
            return _send(target, download=f"{name}.ics")
    return _not_found(root)


def _not_found(root: str) -> Response:
    page = Path(root) / "404.html"
    body = page.read_bytes() if page.is_file() else b"Not found\n"
    kind = HTML if page.is_file() else "text/plain; charset=utf-8"
    return Response(body, 404, content_type=kind)


def install(app: Flask, site: LiveSite) -> None:
    app.extensions["site"] = site
    app.register_blueprint(bp)
