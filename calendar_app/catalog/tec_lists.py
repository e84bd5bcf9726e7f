"""`GET /tec/v1/{events,venues,organizers}`: the plugin's newer lists (spec tec-v1 §6)
over the same selection as `tribe/events/v1` (`selection.select`), with their own
parameters, order, paging and a bare JSON array.

The parameters are checked as the plugin's parameter types check them; all refusals
come together as WordPress's `rest_invalid_param`. Where the plugin and its own newest
client disagree (spec §12), our choices are here, in `CLIENT_CHOICES`, and only here.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlencode

from ..model import dates
from ..model.records import Record
from ..model.resources import Resource
from . import occurrences, selection
from .query import Context, Query
from .tec_bodies import BadArgument, checked, int_list, invalid, php_bool

STATUSES = ("publish", "pending", "draft", "future", "private")
MAX_PER_PAGE = 100  # the plugin declares it (and does not enforce it): we do
ORDERBY = ("date", "event_date", "title", "menu_order", "modified")

# Where the plugin and its newest client (mcp-server 4fcf794) disagree, decided once.
CLIENT_CHOICES = {
    # The client sends `asc`/`desc`, the plugin takes `ASC`/`DESC` only: either case.
    "order_any_case": True,
    # `categories=5` (one id) is a 400 in the plugin and 2+ ids do not filter there:
    # one id or several, events of any of these categories (or tags).
    "terms_filter": True,
    # `featured=false` is true to PHP: we read the words, so false means not featured.
    "featured_words": True,
}
_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False,
          "": False}


@dataclass(frozen=True)
class TecList:
    status: int
    body: object
    headers: dict


class PageNotFound(Exception):
    """A page past the last: the plugin's body, its code naming organizers on every list."""

    body: ClassVar[dict] = {"code": "tec_rest_organizers_page_not_found",
                            "message": "The requested page was not found."}


def _date(site: dt.tzinfo, now: dt.datetime) -> Callable[[object], dt.datetime]:
    def read(value: object) -> dt.datetime:
        if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
            raise BadArgument("tec_rest_invalid_date_time_argument")
        try:
            return dates.parse_datetime(value, site, now)
        except dates.DateError:
            raise BadArgument("tec_rest_invalid_date_time_argument") from None
    return read


def _featured(value: object) -> bool:
    if CLIENT_CHOICES["featured_words"] and isinstance(value, str) and (
            value.strip().lower() in _WORDS):
        return _WORDS[value.strip().lower()]
    return php_bool(value)


def _status(editor: bool) -> Callable[[object], list[str]]:
    def read(value: object) -> list[str]:
        items = value if isinstance(value, list) else str(value).split(",")
        items = [str(i).strip() for i in items if str(i).strip()]
        if not items or any(i not in STATUSES for i in items):
            raise BadArgument()
        # Honoured for those who may edit; everyone else gets the published only.
        return items if editor else ["publish"]
    return read


def _order(value: object) -> str:
    text = value if isinstance(value, str) else ""
    if CLIENT_CHOICES["order_any_case"]:
        text = text.upper()
    if text not in ("ASC", "DESC"):
        raise BadArgument()
    return text


def _records(q: Query, collection: str, must_exist: bool) -> Callable[[object], list]:
    def read(value: object) -> list[Record]:
        ids = int_list(value, single_ok=CLIENT_CHOICES["terms_filter"] or must_exist)
        if len(ids) > q.ctx.max_items:  # as MAX_INCLUDE_IDS bounds tribe/events/v1's lists
            raise BadArgument()
        found = [q.ctx.view.get(i, collection) for i in ids]
        if must_exist and any(r is None or not q.ctx.reader.may_read(q.user, r)
                              for r in found):
            raise BadArgument()
        return [r for r in found if r is not None]
    return read


def _readers(q: Query) -> dict[str, Callable[[object], object]]:
    """Parameter -> reader of its value (raises BadArgument), for this list."""
    positive = lambda v: checked(v, {"type": "integer"})
    common: dict[str, Callable[[object], object]] = {
        "page": positive, "per_page": positive, "search": lambda v: checked(v, {}),
        "status": _status(q.editor)}
    if q.resource.name != "events":
        return {**common, "event": positive, "has_events": php_bool,
                "only_with_upcoming": php_bool}
    read_date = _date(dates.zone(q.ctx.reader.site_zone_name), q.ctx.reader.clock())
    return {**common, **dict.fromkeys(("start_date", "end_date", "starts_before",
                                       "starts_after", "ends_before", "ends_after"),
                                      read_date),
            "categories": _records(q, "categories", False),
            "tags": _records(q, "tags", False),
            "venue": _records(q, "venues", True), "organizer": _records(q, "organizers", True),
            "featured": _featured, "post_parent": positive, "ticketed": php_bool,
            "orderby": lambda v: checked(v, {"enum": list(ORDERBY)}), "order": _order}


def parse(ctx: Context, resource: Resource, raw: dict) -> Query:
    """The list parameters, checked; unknown ones are dropped, as the plugin drops them."""
    user = ctx.user
    q = Query(ctx, resource, user, editor=user is not None and user.can("edit"))
    bad: dict[str, BadArgument] = {}
    for name, read in _readers(q).items():
        if name not in raw:
            continue
        q.given.add(name)
        try:
            q.values[name] = read(raw[name])
        except BadArgument as exc:
            bad[name] = exc
    if bad:
        raise invalid(bad)
    return q


def _selection_query(q: Query) -> Query | None:
    """The query `selection.select` answers (None: nothing can match)."""
    v = dict(q.values)
    sel = Query(q.ctx, q.resource, q.user, q.editor)
    sel.values["status"] = v.get("status", ["publish"])
    if "search" in v:
        sel.values["search"] = v["search"]
    if q.resource.name != "events":
        if "event" in v:
            event = q.ctx.view.get(v["event"], "events")
            if event is None or not q.ctx.reader.may_read(q.user, event):
                return None
            sel.values["event"] = event
        for name in ("has_events", "only_with_upcoming"):
            if name in v:
                sel.values[name] = v[name]
        return sel
    for name in ("start_date", "end_date", "starts_before", "starts_after", "ends_before",
                 "ends_after", "featured", "venue", "organizer"):
        if name in v:
            sel.values[name] = v[name]
    for name in ("categories", "tags"):
        if name in v:
            if not v[name]:  # ids of no term: nothing is in them
                return None
            sel.values[name] = v[name]
    if "post_parent" in v:
        parent = q.ctx.view.get(v["post_parent"], "events")
        if parent is None:
            return None
        sel.values["post_parent"] = parent
    if v.get("ticketed"):  # no Event Tickets here: no event has tickets
        return None
    return sel


def _record(q: Query, rid: int) -> Record:
    view = q.ctx.view
    return view.records.get(rid) or occurrences.of(
        view, q.ctx.reader.site_now().date()).get(rid)


def _ordered(q: Query, ids: list[int]) -> list[int]:
    """Events: by `orderby` (`event_date`: the start) and `order` (ASC by default).
    Venues and organizers keep the selection's order, newest post first."""
    if q.resource.name != "events":
        return ids
    orderby = q.values.get("orderby", "event_date")
    reverse = q.values.get("order", "ASC") == "DESC"
    if orderby == "event_date":
        return ids[::-1] if reverse else ids  # the selection's order is the start's
    keys: dict[str, Callable[[Record], object]] = {
        "title": lambda r: r.name.lower(),
        "date": lambda r: q.ctx.rep.published(r, dt.UTC),
        "modified": lambda r: r.get("modified") or dt.datetime.min,
        "menu_order": lambda r: 0,
    }
    key = keys[orderby]
    records = [_record(q, i) for i in ids]
    records.sort(key=lambda r: (key(r), r.id), reverse=reverse)
    return [r.id for r in records]


def answer(ctx: Context, resource: Resource, raw: dict, url: str,
           shape: Callable[[Record], dict]) -> TecList:
    """The list for these parameters: its page as a bare array, the totals in headers.
    `url`: the route's URL, for `Link`; `shape`: the representation of one record."""
    q = parse(ctx, resource, raw)
    default = int(ctx.view.settings.get("per_page") or 10)
    per_page = min(q.values.get("per_page", default), MAX_PER_PAGE)
    page = q.values.get("page", 1)
    sel = _selection_query(q)
    ids = _ordered(q, selection.select(sel)) if sel is not None else []
    total = len(ids)
    total_pages = math.ceil(total / per_page) if total else 0
    chunk = ids[(page - 1) * per_page: page * per_page]
    if page > 1 and not chunk:
        raise PageNotFound()
    headers = {"X-WP-Total": str(total), "X-WP-TotalPages": str(total_pages)}
    links = []
    if page < total_pages:
        links.append(f'<{_page_url(url, raw, page + 1)}>; rel="next"')
    if page > 1:
        links.append(f'<{_page_url(url, raw, page - 1)}>; rel="prev"')
    if links:
        headers["Link"] = ", ".join(links)
    return TecList(200, _shaped(q, chunk, shape), headers)


MAX_ITEMS = 20000


def _shaped(q: Query, chunk: list[int], shape: Callable[[Record], dict]) -> list[dict]:
    """The items of a page. Shapes are kept on the catalog version per reader and minute
    of "now" (`is_past`, `is_now`), as `lists` keeps `tribe/events/v1`'s."""
    ctx = q.ctx
    items: dict = ctx.view.derive("tec-list-items", dict)  # type: ignore[assignment]
    who = (ctx.user.id, ctx.user.role) if ctx.user is not None else None
    head = (ctx.rep.site_url, ctx.rep.rest_root, who, ctx.reader.clock().isoformat()[:16])
    out = []
    for rid in chunk:
        item = items.get((head, rid))
        if item is None:
            if len(items) > MAX_ITEMS:
                items.clear()
            item = items[(head, rid)] = shape(_record(q, rid))
        out.append(item)
    return out


def _page_url(url: str, raw: dict, page: int) -> str:
    """The route's URL with every current query parameter, `page` replaced."""
    pairs: list[tuple[str, str]] = []
    for key, value in raw.items():
        if key == "page":
            continue
        if isinstance(value, list):
            pairs += [(f"{key}[]", str(v)) for v in value if not isinstance(v, dict | list)]
        elif not isinstance(value, dict):
            pairs.append((key, str(value)))
    pairs.append(("page", str(page)))
    return f"{url}?{urlencode(pairs)}"
