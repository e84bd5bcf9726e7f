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
WEEK = "events/week/"  # its index.html: the week of the build day
PHOTO = "events/photo/"
EMBED = "embed/"  # the page about embedding; the views for iframes below it
EMBED_LIST = "embed/list/"


class OutsideOutput(ValueError):
    """An output path that would be written outside the output folder."""


def contained(relpath: str) -> str:
    """`relpath`, once sure that it names a file inside the output folder.

    Output paths are made from slugs and media paths, which come from files anyone
    may edit: one that is absolute, steps up (`..`), names the folder itself or holds
    a NUL is refused. The check is on the text (every output pays for it, so no
    system call): the builder never makes symbolic links in the output folder, and the
    folder itself is resolved once.
    """
    if (not relpath or relpath[0] == "/" or "\0" in relpath
            or ".." in relpath and ".." in relpath.split("/")
            or posixpath.normpath(relpath) == "."):
        raise OutsideOutput(f"refused to write {relpath!r}: it is outside the output folder")
    return relpath


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


def week(first: dt.date) -> str:
    return page(f"{WEEK}{first.isoformat()}/")


def embed_month(day: dt.date) -> str:
    return page(f"{EMBED}month/{day.year:04d}-{day.month:02d}/")


def day(day: dt.date) -> str:
    return page(f"events/{day.isoformat()}/")


def relative(target: str, source: str) -> str:
    """A link from output `source` to output `target`, both relative to the site root.

    Outputs in the source's folder are linked directly; any other goes up to the root
    and down again ("../../events/list/index.html" from an event page). Not always the
    shortest path, but one answer per target and depth: pages in their own folders
    (every event) share them instead of each working out its own.
    """
    folder, depth = _where(source)
    if not target or ".." in target or target.startswith("/") or ".." in folder:
        return _slow_relative(target, folder)
    if folder and target.startswith(folder + "/"):
        return _quote(target[len(folder) + 1:] or "./")
    return _from_depth(target, depth)


def root_of(source: str) -> str:
    """The relative way up from output `source` to the site root ("" at the root)."""
    return "../" * _where(source)[1]


@lru_cache(maxsize=1024)  # a page asks for a dozen links in a row
def _where(source: str) -> tuple[str, int]:
    folder = posixpath.dirname(source)
    return folder, folder.count("/") + 1 if folder else 0


@lru_cache(maxsize=65536)
def _from_depth(target: str, depth: int) -> str:
    return _quote("../" * depth + target)


def _quote(path: str) -> str:
    return quote(path, safe="/#?=&%.-_~")


def _slow_relative(target: str, start: str) -> str:
    rel = posixpath.relpath(target or ".", start or ".")
    if target.endswith("/") and not rel.endswith("/"):
        rel += "/"
    return _quote(rel)
