"""The five list endpoints (`GET /events`, `/venues`, `/organizers`, `/categories`,
`/tags`): one table-driven path, plain Python (no Flask, no Whoosh): `answer(context,
resource, parameters)` is called by the HTTP interface and by the builder alike, each
with its `reader.Reader` (catalog, clock, text search, read policy).

1. `_parse`: every parameter of the route (`discovery.LIST_PARAMS`, one table: its
   documentation, its checker, its place in echoed URLs) is checked by its checker in
   `CHECKS`; all failures are reported together as the plugin's `rest_invalid_param`.
2. `selection.select`: what matches, as records in list order (events from the in-memory
   columns of `eventtable.EventTable`, text search from the reader's; the others are
   small and filtered in memory).
3. `_build`: paging, envelope in the plugin's key order, `rest_url` family,
   `X-TEC-*`/`X-WP-*` totals and an RFC 8288 `Link` (next/prev).

Everything is read from the one catalog version in the context; finished answers and
item representations are kept on that version (`CatalogVersion.derive`), per
effective query and what the caller may see.

Our decisions where the plugin differs or has nothing (design.md, spec §7):
- `include` ignores every date filter (the plugin re-applies its default window).
- `geoloc`, `geoloc_lat`, `geoloc_lng` work without Events Calendar Pro, from the venue's
  `geo_lat`/`geo_lng`: `geoloc=true` keeps events whose venue has coordinates (false:
  those without); `geoloc_lat`+`geoloc_lng` keep events whose venue lies within
  `geoloc_radius` kilometres (our parameter, default 50, great-circle distance).
- `ticketed`: there is no Event Tickets here, so `ticketed=true` is the plugin's 400
  (`event-tickets-not-active`); `ticketed=false` matches every event.
- `categories` also matches events of sub-categories (WordPress `include_children`).
- Editors list every non-internal status by default, but only records they may read
  (`policy.may_read`: others' drafts need `edit_others`, private needs `read_private`).
- `only_with_upcoming` looks at every upcoming event, not only the first page of them,
  and counts those the reader may read (an editor's drafts, pending, private events).
- Search matches each word as a substring of one word of the title, excerpt or
  description in any case (`weinabend` finds "Glühweinabend"), as WordPress's
  `LIKE '%word%'`; a search word's punctuation splits it into words that must each
  be found (WordPress would look for the punctuation too).
- A filter naming a record the reader may not read on its own (`venue`, `organizer`,
  `event`, `post`, `post_parent` with a draft's id) answers 400 as for an unknown id;
  geoloc filters ignore coordinates of venues the reader may not read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote_plus

from ..model import dates, errors
from ..model.errors import ApiError
from ..model.formats import parse_bool, truthy
from ..model.records import Record
from ..model.resources import STATUSES, Resource
from ..store.users import User
from . import discovery, occurrences, selection
from .query import Context, Query
from .reader import Reader
from .represent import dumps, dumps_joined

# Statuses WordPress registers besides ours: accepted by `status`, never present here.
_INTERNAL = ("auto-draft", "inherit", "tribe-ea-success", "tribe-ea-failed",
             "tribe-ea-schedule", "tribe-ea-pending", "tribe-ea-draft", "tribe-ignored")
_DATE_PARAMS = ("start_date", "end_date", "starts_before", "starts_after", "ends_before",
                "ends_after")
_RELATIVE = _DATE_PARAMS[2:]


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict
    text: str
    headers: dict
    etag: str


# ------------------------------------------------------------------ defaults
def request_defaults(reader: Reader) -> dict:
    """Per-request defaults as the plugin's index shows them: `per_page` (calendar
    setting, capped), `start_date` (yesterday 23:59:00) and `end_date` (now + 24
    months), both in the site timezone from the app clock."""
    settings = reader.catalog.settings
    now = reader.site_now()
    start = dt.datetime.combine(now.date() - dt.timedelta(days=1), dt.time(23, 59))
    end = dates.parse_datetime("+24 months", dates.zone(reader.site_zone_name),
                               reader.clock())
    return {"per_page": _per_page_default(settings), "start_date": dates.fmt(start),
            "end_date": dates.fmt(end)}


def _max_per_page(settings: dict) -> int:
    return max(1, int(settings.get("max_per_page") or 50))


def _per_page_default(settings: dict) -> int:
    return min(max(1, int(settings.get("per_page") or 10)), _max_per_page(settings))


# ------------------------------------------------------------------ parsing
def _items(q: Query, raw: object) -> list[str] | None:
    """A list parameter: `a,b`, `x[]=a&x[]=b` or a JSON array; None when empty."""
    values = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for value in values:
        if isinstance(value, dict | list):
            return None
        out += [v.strip() for v in str(value).split(",")]
    out = [v for v in out if v]
    limit = q.ctx.max_items
    if len(out) > limit:
        raise ApiError(400, "rest_too_many_ids", f"A list parameter may name at most {limit} "
                       "items.", limit=limit)
    return out or None


def _int(text: object) -> int | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    if isinstance(text, str) and re.fullmatch(r"[+-]?[0-9]{1,18}", text.strip()):
        return int(text)
    return None


def _k_page(q: Query, name: str, raw: object) -> None:
    value = _int(raw)
    if value is None or value < 1:
        return q.fail(name)
    if name == "per_page":
        value = min(value, _max_per_page(q.ctx.view.settings))
    q.values[name] = value


def _k_date(q: Query, name: str, raw: object) -> None:
    if not isinstance(raw, str | int | float) or isinstance(raw, bool) or raw == "":
        return q.fail(name)
    q.values[name] = raw  # interpreted with strict_dates in _date_window


def _k_flag(q: Query, name: str, raw: object) -> None:
    if raw == "" or isinstance(raw, dict | list):
        return q.fail(name)
    q.values[name] = truthy(raw)


def _k_string(q: Query, name: str, raw: object) -> None:
    if not isinstance(raw, str):
        message = f"{name} is not of type string."
        return q.fail(name, message, {"code": "rest_invalid_type", "message": message,
                                      "data": {"param": name}})
    if not raw.strip():
        return q.fail(name)
    q.values[name] = raw.strip()


def _k_bool(q: Query, name: str, raw: object) -> None:
    value = parse_bool(raw)
    if value is None:
        message = f"{name} is not of type boolean."
        return q.fail(name, message, {"code": "rest_invalid_type", "message": message,
                                      "data": {"param": name}})
    q.values[name] = value


def _k_loose_bool(q: Query, name: str, raw: object) -> None:
    if isinstance(raw, dict | list):
        return q.fail(name)
    q.values[name] = truthy(raw)


def _record_ids(q: Query, name: str, raw: object, collection: str, slugs: bool) -> None:
    """Ids (or slugs, for terms) that must all name records of one collection."""
    items = _items(q, raw)
    if items is None:
        return q.fail(name)
    view = q.ctx.view
    found = []
    for item in items:
        record = view.by_slug(collection, item) if slugs else None
        if record is None and _int(item) is not None:
            record = view.get(int(item), collection)
        # A record the reader may not read is answered as an unknown one: a draft
        # venue's id must not be confirmed (nor its events listed) to anonymous readers.
        if record is None or not q.ctx.reader.may_read(q.user, record):
            return q.fail(name)
        found.append(record)
    q.values[name] = found


def _k_categories(q: Query, name: str, raw: object) -> None:
    _record_ids(q, name, raw, "categories", slugs=True)


def _k_tags(q: Query, name: str, raw: object) -> None:
    _record_ids(q, name, raw, "tags", slugs=True)


def _k_venues(q: Query, name: str, raw: object) -> None:
    _record_ids(q, name, raw, "venues", slugs=False)


def _k_organizers(q: Query, name: str, raw: object) -> None:
    _record_ids(q, name, raw, "organizers", slugs=False)


def _k_own_terms(q: Query, name: str, raw: object) -> None:
    _record_ids(q, name, raw, q.resource.name, slugs=False)


Checker = Callable[[Query, str, object], None]


def _k_record_of(collection: str) -> Checker:
    """An id that must name an existing record of `collection` (parent, event, post)."""

    def check(q: Query, name: str, raw: object) -> None:
        value = _int(raw)
        record = q.ctx.view.get(value, collection) if value else None
        # As in `_record_ids`: an event the reader may not read is an unknown one.
        if record is None or not q.ctx.reader.may_read(q.user, record):
            return q.fail(name)
        q.values[name] = record

    return check


def _k_post_ids(q: Query, name: str, raw: object) -> None:
    items = _items(q, raw)
    ids = [_int(i) for i in items or []]
    if not ids or any(i is None or i < 1 for i in ids):
        return q.fail(name)
    q.values[name] = ids


def _k_status(q: Query, name: str, raw: object) -> None:
    items = _items(q, raw)
    if items is None:
        return q.fail(name)
    if not q.editor:
        if items != ["publish"]:
            return q.fail(name)
    elif any(s not in STATUSES and s not in _INTERNAL for s in items):
        return q.fail(name)
    q.values[name] = items


def _k_number(q: Query, name: str, raw: object) -> None:
    try:
        value = float(raw) if not isinstance(raw, bool | dict | list) else math.nan
    except ValueError:
        value = math.nan
    limit = {"geoloc_lat": 90, "geoloc_lng": 180}.get(name, math.inf)
    if not math.isfinite(value) or abs(value) > limit or (
            name == "geoloc_radius" and value <= 0):
        return q.fail(name)
    q.values[name] = value


def _k_ticketed(q: Query, name: str, raw: object) -> None:
    _k_bool(q, name, raw)
    if q.values.get(name):  # asking for ticketed events: there is no tickets plugin
        del q.values[name]
        message = "Event Tickets plugin is not activated."
        q.fail(name, message, {"code": "event-tickets-not-active", "message": message,
                                "data": None})


# Checker of each kind of list parameter (`discovery.Param.check`, else its name).
CHECKS: dict[str, Checker] = {
    "page": _k_page, "string": _k_string, "status": _k_status, "date": _k_date,
    "flag": _k_flag, "bool": _k_bool, "loose-bool": _k_loose_bool, "number": _k_number,
    "categories": _k_categories, "tags": _k_tags, "venue": _k_venues,
    "organizer": _k_organizers, "post-ids": _k_post_ids, "own-terms": _k_own_terms,
    "event-id": _k_record_of("events"), "category-id": _k_record_of("categories"),
    "ticketed": _k_ticketed,
}


def _params(resource: Resource) -> tuple[discovery.Param, ...]:
    return discovery.LIST_PARAMS[resource.name]


def param_names(resource: Resource) -> tuple[str, ...]:
    return tuple(p.name for p in _params(resource))


def _parse(ctx: Context, resource: Resource, raw: dict) -> Query:
    user = ctx.user
    q = Query(ctx, resource, user, editor=user is not None and user.can("edit"))
    for param in _params(resource):
        if param.name not in raw:
            continue
        q.given.add(param.name)
        CHECKS[param.check or param.name](q, param.name, raw[param.name])
    if resource.name == "events":
        lat, lng = "geoloc_lat" in q.given, "geoloc_lng" in q.given
        if lat != lng:
            q.fail("geoloc_lng" if lat else "geoloc_lat")
        _date_window(q)
    if q.bad:
        raise errors.invalid(q.bad, q.details or None)
    return q


def _date_window(q: Query) -> None:
    """Normalized date filters (naive site-local datetimes), defaults applied."""
    reader = q.ctx.reader
    site = dates.zone(reader.site_zone_name)
    strict = q.values.get("strict_dates", False)
    given = {n for n in _DATE_PARAMS if n in q.given}
    if "include" in q.given:
        for n in _DATE_PARAMS:
            q.values.pop(n, None)
        return
    defaults = request_defaults(reader)
    if not given & set(_RELATIVE):
        for n in ("start_date", "end_date"):
            if n not in given:
                q.values[n] = defaults[n]
    now = reader.clock()
    for n in _DATE_PARAMS:
        if n not in q.values:
            continue
        raw = q.values[n]
        try:
            dates.refuse_epoch_text(raw, now)
            if n in given and strict:
                # The plugin's quirk: strict values are read as UTC, then moved to site time.
                utc = dates.parse_datetime(raw, dates.zone("UTC"), now)
                value = dates.from_utc(utc, site)
            else:
                value = dates.parse_datetime(raw, site, now)
        except dates.DateError as exc:
            q.fail(n, detail=errors.date_detail(n, str(exc)))
            continue
        if not strict:
            day = dt.datetime.combine(value.date(), dt.time())
            value = day if n == "start_date" else day.replace(hour=23, minute=59, second=59)
        q.values[n] = value


# ------------------------------------------------------------------ URLs
def _status_echo(q: Query) -> str:
    if "status" in q.values:
        return ",".join(q.values["status"])
    return "any" if q.editor else "publish"


def _echo(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, dt.datetime):
        return dates.fmt(value)
    if isinstance(value, Record):
        return str(value.id)
    if isinstance(value, list):
        return ",".join(_echo(x) for x in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _query_pairs(q: Query, page: int, per_page: int) -> tuple[list[tuple[str, str]], bool]:
    """The effective query in the plugin's order; True when extras force encoding."""
    pairs: list[tuple[str, str]] = []
    encodes = False
    v = q.values
    for param in sorted((p for p in _params(q.resource) if p.echo is not None),
                        key=lambda p: p.echo):  # type: ignore[arg-type, return-value]
        name = param.name
        if name == "page":
            pairs.append(("page", str(page)))
        elif name == "per_page":
            pairs.append(("per_page", str(per_page)))
        elif name == "status":
            pairs.append(("status", _status_echo(q)))
        elif name in v:
            pairs.append((name, _echo(v[name])))
            encodes = encodes or param.encodes
    return pairs, encodes


def _encode(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{k}={quote_plus(val, safe=',')}" for k, val in pairs)


def _urls(q: Query, page: int, per_page: int, total_pages: int, has_next: bool,
          has_prev: bool) -> tuple[str, str | None, str | None]:
    base = f"{q.ctx.rep.rest_root}/{q.resource.name}/"
    if q.resource.is_term:
        at = lambda n: base if n == 1 else f"{base}?page={n}"
        return base, at(page + 1) if has_next else None, at(page - 1) if has_prev else None
    pairs, encoded = _query_pairs(q, page, per_page)
    rest_url = base + "?" + (_encode(pairs) if encoded else "&".join(
        f"{k}={val}" for k, val in pairs))
    rest = [p for p in pairs if p[0] != "page"]

    def at(n: int) -> str:
        return base + "?" + _encode(rest + ([("page", str(n))] if n > 1 else []))
    return rest_url, at(page + 1) if has_next else None, at(page - 1) if has_prev else None


# ------------------------------------------------------------------ response
class Recent:
    """The most recently used finished answers of one catalog version (LRU); lives on
    that version. Thread-safe: a worker's threads share it."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.items: OrderedDict[tuple, Answer] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> Answer | None:
        with self.lock:
            hit = self.items.get(key)
            if hit is not None:
                self.items.move_to_end(key)
            return hit

    def put(self, key: tuple, value: Answer) -> None:
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)


def caller(user: User | None) -> tuple | None:
    """What of the caller a list depends on: their id (their own drafts) and role
    (everything else they may read)."""
    return (user.id, user.role) if user is not None else None


def answer(ctx: Context, resource: Resource, raw: dict) -> Answer:
    """`GET /{collection}` with these parameters: parse, select, page, envelope and
    headers, from one catalog version. Finished answers are kept on that version per
    (effective query, who asks, URLs, minute of "now")."""
    q = _parse(ctx, resource, raw)
    values = tuple(sorted((k, _echo(v)) for k, v in q.values.items()))
    key = (resource.name, values, caller(ctx.user), ctx.rep.site_url, ctx.rep.rest_root,
           ctx.reader.clock().isoformat()[:16])
    bodies: Recent = ctx.view.derive("list-answers", Recent)  # type: ignore[assignment]
    hit = bodies.get(key)
    if hit is None:
        hit = _build(q)
        bodies.put(key, hit)
    return hit


def select_ids(ctx: Context, resource: Resource, raw: dict) -> list[int]:
    """The ids a list with these parameters holds, in its order, unpaged (an occurrence
    of a recurring event by its own id): for pages that show records, not bodies."""
    return selection.select(_parse(ctx, resource, raw))


# Items embed what their reader may read: kept per version, keyed by who asks. Rendering
# an event (Markdown, sanitizing, linked records) costs ~10 ms, and the same events
# recur across pages, filters and callers. The most recently used are kept (a static
# build asks for every event once or twice in turn: 20,000 kept held hundreds of MB).
MAX_ITEMS = 4096


def _represent(q: Query, chunk: list[int]) -> tuple[list[dict], list[str]]:
    """The items of these ids and each one's JSON text (`dumps`): an event shows in
    several lists (a build's embed lists: all, its categories', its venue's), its
    text is made once with it and the answer's text joined from them."""
    ctx = q.ctx
    rep, view = ctx.rep, ctx.view
    items: OrderedDict = view.derive("list-items", OrderedDict)  # type: ignore[assignment]
    head = (rep.site_url, rep.rest_root, caller(ctx.user))
    bodies, texts = [], []
    for rid in chunk:
        key = (head, rid)
        entry = items.get(key)
        if entry is None:
            record = view.records.get(rid) or occurrences.of(
                view, ctx.reader.site_now().date()).get(rid)
            item = rep.represent(record)
            entry = items[key] = (item, dumps(item))
            if len(items) > MAX_ITEMS:
                items.popitem(last=False)
        else:
            with contextlib.suppress(KeyError):  # another thread may just have dropped it
                items.move_to_end(key)
        bodies.append(entry[0])
        texts.append(entry[1])
    return bodies, texts


def _build(q: Query) -> Answer:
    resource = q.resource
    per_page = q.values.get("per_page", _per_page_default(q.ctx.view.settings))
    page = q.values.get("page", 1)
    ids = selection.select(q)
    total = len(ids)
    total_pages = math.ceil(total / per_page) if total else 0
    chunk = ids[(page - 1) * per_page: page * per_page]
    if page > 1 and not chunk and not resource.is_term:
        body = ApiError(404, f"{resource.singular}-archive-page-not-found",
                        f"The requested {resource.singular} archive page does not exist"
                        ).body()
        return Answer(404, body, dumps(body), {}, "")
    items, texts = _represent(q, chunk)
    has_next = page < total_pages
    has_prev = page > 1 and (resource.is_term or (page - 1) <= total_pages)
    rest_url, next_url, prev_url = _urls(q, page, per_page, total_pages, has_next, has_prev)
    body: dict = {}
    if resource.is_term:
        body.update(rest_url=rest_url, total=total, total_pages=total_pages)
        body[resource.name] = items
        if next_url:
            body["next_rest_url"] = next_url
        if prev_url:
            body["previous_rest_url"] = prev_url
    else:
        body[resource.name] = items
        body["rest_url"] = rest_url
        if next_url:
            body["next_rest_url"] = next_url
        if prev_url:
            body["previous_rest_url"] = prev_url
        body.update(total=total, total_pages=total_pages)
    headers = {"X-TEC-Total": str(total), "X-TEC-TotalPages": str(total_pages),
               "X-WP-Total": str(total), "X-WP-TotalPages": str(total_pages)}
    links = [f'<{u}>; rel="{rel}"' for u, rel in ((next_url, "next"), (prev_url, "prev")) if u]
    if links:
        headers["Link"] = ", ".join(links)
    text = dumps_joined(body, resource.name, texts)
    etag = '"' + hashlib.blake2b(text.encode(), digest_size=16).hexdigest() + '"'
    return Answer(200, body, text, headers, etag)
