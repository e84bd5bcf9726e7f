"""Where every output lives, and relative links between outputs.

Public pages sit where the plugin's permalinks point (`event/<slug>/`,
`venue/<slug>/`, `events/category/<parent>/<child>/`, `tag/<slug>/`), so the `url`
members of the JSON representation are the static site's pages. Every page is a
folder's `index.html`, and internal links name that file explicitly: a static host
serves it and so does a browser reading the folder from `file://`.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from functools import lru_cache
from urllib.parse import quote

HOME = "index.html"
UPCOMING = "events/list/"
PAST = "events/past/"
ASSETS = "assets/"
ALL_ICS = "calendar.ics"
ATOM = "feed.xml"
SITEMAP = "sitemap.xml"
ROBOTS = "robots.txt"
NOT_FOUND = "404.html"
REST_DIR = "wp-json/tribe/events/v1/"


def page(folder: str) -> str:
    """The file of a page folder: `event/x/` -> `event/x/index.html`."""
    return folder + "index.html" if folder.endswith("/") or not folder else folder


def folder(path: str) -> str:
    """The public URL path of an output: `event/x/index.html` -> `event/x/`."""
    return path.removesuffix("index.html")


def list_page(base: str, number: int) -> str:
    return page(base if number == 1 else f"{base}page/{number}/")


def month(day: dt.date) -> str:
    return page(f"events/month/{day.year:04d}-{day.month:02d}/")


def day(day: dt.date) -> str:
    return page(f"events/{day.isoformat()}/")


def relative(target: str, source: str) -> str:
    """A link from output `source` to output `target`, both relative to the site root."""
    return _relative(target, posixpath.dirname(source))


@lru_cache(maxsize=262144)
def _relative(target: str, start: str) -> str:
    # Keyed by the source's folder: every output of a folder shares the answers.
    if ".." in target or ".." in start or target.startswith("/") or start.startswith("/"):
        return _slow_relative(target, start)
    # posixpath.relpath without abspath() (a getcwd() per call made it most of the
    # cost of rendering a page): both paths are relative to the same root.
    norm = posixpath.normpath(target or ".")
    to = [] if norm == "." else norm.split("/")
    norm = posixpath.normpath(start or ".")
    frm = [] if norm == "." else norm.split("/")
    common = 0
    for a, b in zip(to, frm):
        if a != b:
            break
        common += 1
    parts = [".."] * (len(frm) - common) + to[common:]
    rel = "/".join(parts) if parts else "."
    if target.endswith("/") and not rel.endswith("/"):
        rel += "/"
    return quote(rel, safe="/#?=&%.-_~")


def _slow_relative(target: str, start: str) -> str:
    rel = posixpath.relpath(target or ".", start or ".")
    if target.endswith("/") and not rel.endswith("/"):
        rel += "/"
    return quote(rel, safe="/#?=&%.-_~")
