"""What matches a list query (`query.Query`): the ids of the matching records, in list
order. Events are filtered in the in-memory columns of `eventtable.EventTable` (text
search from the reader's); venues, organizers and terms are few and filtered in memory.
Only what the reader may read is selected (statuses, `policy.may_read`)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..model.records import Record
from ..model.resources import STATUSES
from .eventtable import seconds
from .version import CatalogVersion

if TYPE_CHECKING:  # lists imports this module: the query type is only annotated here
    from .query import Query

_EDITOR_DEFAULT = ("publish", "future", "draft", "pending", "private")
GEOLOC_RADIUS_KM = 50.0
_EARTH_KM = 6371.0088


def select(q: Query) -> list[int]:
    """Ids of the records of `q.resource` matching `q`, in list order."""
    return _SELECT[q.resource.name](q)


# ------------------------------------------------------------------ visibility
def _status_set(q: Query) -> tuple[str, ...]:
    if "status" in q.values:
        return tuple(q.values["status"])
    return _EDITOR_DEFAULT if q.editor else ("publish",)


def _readable(q: Query, record: Record) -> bool:
    return record.status in _status_set(q) and (
        record.status == "publish" or q.ctx.reader.may_read(q.user, record))


# ------------------------------------------------------------------ selection
def _select_events(q: Query) -> list[int]:
    """Ids of the matching events, in list order."""
    reader, view = q.ctx.reader, q.ctx.view
    table = reader.table(view)
    v = q.values
    n = len(table)
    lo, hi = 0, n
    if "start_date" in v:
        lo = max(lo, table.first_starting_at(seconds(v["start_date"])))
    if "starts_after" in v:
        lo = max(lo, table.first_starting_at(seconds(v["starts_after"]) + 1))
    if "starts_before" in v:
        hi = min(hi, table.first_starting_at(seconds(v["starts_before"])))
    if hi <= lo:
        return []
    part = slice(lo, hi)
    mask = ~table.hidden[part]
    # Status and readability.
    codes = {s: i for i, s in enumerate(STATUSES)}
    wanted = [codes[s] for s in _status_set(q) if s in codes]
    status = table.status[part]
    ok = np.isin(status, wanted)
    user = q.user
    if user is not None:
        own = table.author[part] == user.id
        pub = status == codes["publish"]
        private = status == codes["private"]
        others_ok = user.can("edit") and user.can("edit_others")
        ok &= pub | own | (private & user.can("read_private")) | (~private & others_ok)
    else:
        ok &= status == codes["publish"]
    mask &= ok
    if "end_date" in v:
        mask &= table.end[part] <= seconds(v["end_date"])
    if "ends_before" in v:
        mask &= table.end[part] < seconds(v["ends_before"])
    if "ends_after" in v:
        mask &= table.end[part] > seconds(v["ends_after"])
    if "featured" in v:
        mask &= table.featured[part] == v["featured"]
    if "geoloc" in v or ("geoloc_lat" in v and "geoloc_lng" in v):
        lat, lng = _readable_coordinates(q, table, part)
        if "geoloc" in v:
            has = ~np.isnan(lat)
            mask &= has if v["geoloc"] else ~has
        if "geoloc_lat" in v and "geoloc_lng" in v:
            mask &= _within(lat, lng, v["geoloc_lat"], v["geoloc_lng"],
                            v.get("geoloc_radius", GEOLOC_RADIUS_KM))
    if "post_parent" in v:
        # The occurrences of a recurring event (Pro's recurrence children); a single
        # event has none.
        parent = v["post_parent"].id
        mask &= (table.series[part] == parent) & (table.ids[part] != parent)
    linked: list[tuple[str, list[Record]]] = [
        (c, v[p]) for p, c in (("categories", "categories"), ("tags", "tags"),
                               ("venue", "venues"), ("organizer", "organizers")) if p in v]
    for collection, records in linked:
        ids: set[int] = set()
        for record in _with_children(view, records) if collection == "categories" else records:
            ids.update(view.backlinks.get((collection, record.slug), ()))
        mask &= table.mask_of(ids)[part]
    if "include" in v:
        mask &= table.mask_of(v["include"])[part]
    if "search" in v:
        found = reader.search_events(view, v["search"])
        mask &= table.mask_of(found)[part]
    rows = np.flatnonzero(mask) + lo
    if "include" in v:
        rows = rows[np.lexsort((table.ids[rows], table.pubdate[rows]))]
    return table.ids[rows].tolist()


def _readable_coordinates(q: Query, table, part: slice) -> tuple[np.ndarray, np.ndarray]:
    """The events' venue coordinates, unknown where the reader may not read the venue
    (the event then shows no venue): geoloc filters must not locate a draft venue."""
    view, reader = q.ctx.view, q.ctx.reader
    lat, lng = table.lat[part], table.lng[part]
    hidden: set[int] = set()
    for venue in view.all("venues"):
        if not reader.may_read(q.user, venue):
            hidden.update(view.backlinks.get(("venues", venue.slug), ()))
    if hidden:
        unseen = table.mask_of(hidden)[part]
        lat, lng = np.where(unseen, np.nan, lat), np.where(unseen, np.nan, lng)
    return lat, lng


def _with_children(view: CatalogVersion, categories: list[Record]) -> list[Record]:
    out, todo, seen = [], list(categories), set()
    while todo:
        record = todo.pop()
        if record.id in seen:
            continue
        seen.add(record.id)
        out.append(record)
        # By the children's `parent`, not by what links to the category: that is
        # thousands of events at 100,000 (4-5 ms a query).
        todo += [r for r in view.all("categories") if r.data.get("parent") == record.slug]
    return out


def _within(lat: np.ndarray, lng: np.ndarray, lat0: float, lng0: float,
            radius_km: float) -> np.ndarray:
    """Haversine distance from (lat0, lng0) at most radius_km; NaN never matches."""
    p1, p2 = np.radians(lat), math.radians(lat0)
    dphi = p1 - p2
    dlmb = np.radians(lng) - math.radians(lng0)
    a = np.sin(dphi / 2) ** 2 + np.cos(p1) * math.cos(p2) * np.sin(dlmb / 2) ** 2
    with np.errstate(invalid="ignore"):
        dist = 2 * _EARTH_KM * np.arcsin(np.sqrt(np.clip(a, 0, 1)))
        return dist <= radius_km


def _select_linked_posts(q: Query) -> list[int]:
    """Venues or organizers: in-memory filters (hundreds to a few thousand records)."""
    reader, catalog = q.ctx.reader, q.ctx.view
    name = q.resource.name
    v = q.values
    records = [r for r in catalog.all(name) if _readable(q, r)]
    if "search" in v:
        words = [w for w in re.split(r"[^\w-]+", v["search"].lower()) if w]
        fields = q.resource.search_fields
        records = [r for r in records if any(
            all(w in str(r.data.get(f) or "").lower() for w in words) for f in fields)]
    if "event" in v:
        event = v["event"]
        key = "venue" if name == "venues" else "organizer"
        slugs = event.data.get(key) or []
        slugs = set(slugs if isinstance(slugs, list) else [slugs])
        records = [r for r in records if r.slug in slugs]
    if "has_events" in v:
        def has(r: Record) -> bool:
            return any(e.status not in ("draft", "pending")
                       for e in catalog.linked(name, r.slug) if e.collection == "events")
        records = [r for r in records if has(r) == v["has_events"]]
    if v.get("only_with_upcoming"):
        now = reader.site_now()

        # Every upcoming event the reader may read counts: an editor's drafts, pending
        # and private events too, as in the plugin's acceptance tests.
        def upcoming(r: Record) -> bool:
            return any(e.collection == "events" and e.status != "trash"
                       and not e.get("hide_from_listings") and e.data["start_date"] >= now
                       and reader.may_read(q.user, e) for e in catalog.linked(name, r.slug))
        records = [r for r in records if upcoming(r)]
    records.sort(key=lambda r: (r.get("date") or dt.datetime.min, r.id), reverse=True)
    return [r.id for r in records]


_TERM_ORDER: dict[str, Callable[[Record, dict], object]] = {
    "id": lambda r, c: r.id,
    "name": lambda r, c: r.name.lower(),
    "slug": lambda r, c: r.slug,
    "count": lambda r, c: c[r.id],
    "description": lambda r, c: str(r.get("description", "")).lower(),
    "term_group": lambda r, c: 0,
}


def _select_terms(q: Query) -> list[int]:
    catalog = q.ctx.view
    v = q.values
    records = catalog.all(q.resource.name)
    counts = {r.id: catalog.term_count(r) for r in records}
    if v.get("hide_empty", True):
        records = [r for r in records if counts[r.id] > 0]
    if "search" in v:
        needle = v["search"].lower()
        records = [r for r in records if needle in r.name.lower() or needle in r.slug]
    if "include" in v:
        keep = {r.id for r in v["include"]}
        records = [r for r in records if r.id in keep]
    if "exclude" in v:
        drop = {r.id for r in v["exclude"]}
        records = [r for r in records if r.id not in drop]
    if "slug" in v:
        records = [r for r in records if r.slug == v["slug"]]
    if "parent" in v:
        records = [r for r in records if r.get("parent") == v["parent"].slug]
    event = v.get("event") or v.get("post")
    if event is not None:
        slugs = event.data.get(q.resource.name) or []
        records = [r for r in records if r.slug in slugs]
    orderby = v.get("orderby", "name")
    if orderby == "include" and "include" in v:
        position = {r.id: i for i, r in enumerate(v["include"])}
        key: Callable[[Record], object] = lambda r: position.get(r.id, 0)
    else:
        by = _TERM_ORDER.get(orderby, _TERM_ORDER["name"])
        key = lambda r: (by(r, counts), r.name.lower(), r.id)
    records.sort(key=key, reverse=v.get("order", "asc").lower() != "asc")
    return [r.id for r in records]


_SELECT: dict[str, Callable[[Query], list[int]]] = {
    "events": _select_events, "venues": _select_linked_posts,
    "organizers": _select_linked_posts, "categories": _select_terms, "tags": _select_terms}
