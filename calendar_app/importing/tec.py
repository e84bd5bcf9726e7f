"""Reading a site that runs the plugin (or this calendar) through `tribe/events/v1`.

Every list is read page by page, a few pages at a time; each answer is turned into
`Incoming` records in the shape of our files (`read_tec`). Descriptions are kept as the
site rendered them (HTML), titles with their entities decoded, images as URLs.
Events flagged hidden from listings are not listed by the plugin: they are looked for
by id among the ids the lists leave out (`_hidden_events`).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import sys
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..model.formats import digits
from . import fetch
from .batch import Batch, Incoming, Problem, Ref
from .tec_series import add_series

API = "wp-json/tribe/events/v1"
PER_PAGE = 50  # the plugin's maximum
WORKERS = 4  # requests at a time: enough to hide latency, gentle on a small site
EVERY_STATUS = "publish,future,draft,pending,private"
# Events of every date, not only upcoming ones (the list's default).
ALL_DATES = {"start_date": "1000-01-01 00:00:00", "end_date": "9998-12-31 23:59:59"}
Getter = Callable[[str, dict], fetch.Response]
MAX_PROBES = 300
OCCURRENCE_IDS = 10**13  # from here on, ids of occurrences of recurring events (ids.py)


def api_root(url: str) -> str:
    """The `tribe/events/v1` root of a site given by its address or any API URL."""
    url = fetch.normalize_url(url.strip())
    if "/wp-json/" in url:
        return f"{url.partition('/wp-json/')[0]}/{API}"
    return f"{url.rstrip('/')}/{API}"


class _Progress:
    """Pages read, on one line of a terminal; silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.done = self.total = 0
        self.lock = threading.Lock()

    def add(self, total: int = 0, done: int = 0) -> None:
        with self.lock:
            self.total += total
            self.done += done
            if self.enabled:
                width = 30
                filled = width * self.done // max(self.total, 1)
                sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] "
                                 f"{self.done}/{self.total} pages")
                sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def read_tec(url: str, user: str = "", password: str = "", progress: bool = False,
             getter: Getter | None = None) -> Batch:
    """Every event, venue, organizer, category and tag of the site at `url`.
    Raises fetch.FetchError when a page cannot be read (nothing is then applied)."""
    root = api_root(url)
    headers = {"Accept": "application/json"}
    if user:
        headers["Authorization"] = fetch.basic_auth(user, password)
    get = getter or (lambda u, h: fetch.get(u, h))
    bar = _Progress(progress)
    batch = Batch(origin=root.removesuffix("/" + API))
    lists = {}
    with ThreadPoolExecutor(WORKERS) as pool:
        for name in ("categories", "tags", "venues", "organizers", "events"):
            params = {"per_page": str(PER_PAGE)}
            if name == "events":
                params.update(ALL_DATES)
            if user and name in ("events", "venues", "organizers"):
                params["status"] = EVERY_STATUS
            lists[name] = _read_list(pool, get, headers, f"{root}/{name}", name, params, bar)
        lists["events"] += _hidden_events(pool, get, headers, root, lists)
    bar.finish()
    for term in _parents_first(lists["categories"]):
        batch.records.append(_term("categories", term))
    batch.records += [_term("tags", t) for t in lists["tags"]]
    batch.records += [_venue(v) for v in lists["venues"]]
    batch.records += [_organizer(o) for o in lists["organizers"]]
    _add_events(batch, lists["events"])
    return batch


def _read_list(pool: ThreadPoolExecutor, get: Getter, headers: dict, url: str, name: str,
               params: dict, bar: _Progress) -> list[dict]:
    def page(number: int) -> tuple[list[dict], int]:
        query = urllib.parse.urlencode({**params, "page": str(number)})
        answer = get(f"{url}?{query}", headers)
        try:
            body = json.loads(answer.body)
        except ValueError:
            raise fetch.FetchError(f"{answer.url}: the answer is not JSON (is this a site "
                                   "running The Events Calendar?)") from None
        items = body.get(name) if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise fetch.FetchError(f"{answer.url}: no {name!r} list in the answer")
        pages = body.get("total_pages") or answer.headers.get("x-tec-totalpages") or 1
        bar.add(done=1)
        return [i for i in items if isinstance(i, dict)], int(pages)

    bar.add(total=1)
    first, pages = page(1)
    bar.add(total=pages - 1)
    items = list(first)
    for more, _pages in pool.map(page, range(2, pages + 1)):
        items += more
    return items


def _hidden_events(pool: ThreadPoolExecutor, get: Getter, headers: dict, root: str,
                   lists: dict[str, list[dict]]) -> list[dict]:
    """Events hidden from listings are left out of every list, yet readable by id: the
    ids missing below the highest one listed are asked for one by one, when there are
    at most MAX_PROBES of them (a site whose ids are mostly other posts is not probed)."""
    seen = {i.get("id") for name in ("events", "venues", "organizers", "categories", "tags")
            for i in lists[name]} | {i.get("series_id") for i in lists["events"]}
    listed = {i for i in seen if isinstance(i, int) and 0 < i < OCCURRENCE_IDS}
    top = max(listed, default=0)
    # Counted before the range is made: Pro's occurrence ids start at 10,000,000.
    if not 0 < top - len(listed) <= MAX_PROBES:
        return []
    missing = sorted(set(range(1, top)) - listed)

    def probe(number: int) -> dict | None:
        try:
            body = json.loads(get(f"{root}/events/{number}", headers).body)
        except (fetch.FetchError, ValueError):
            return None  # not an event (404), or not readable: as if absent
        return body if isinstance(body, dict) and body.get("id") == number and (
            body.get("hide_from_listings")) else None

    return [found for found in pool.map(probe, missing) if found is not None]


def _parents_first(terms: list[dict]) -> list[dict]:
    by_id = {t.get("id"): t for t in terms}
    out: list[dict] = []
    placed: set = set()

    def place(term: dict, depth: int = 0) -> None:
        if term.get("id") in placed or depth > 50:
            return
        parent = by_id.get(term.get("parent"))
        if parent is not None:
            place(parent, depth + 1)
        placed.add(term.get("id"))
        out.append(term)

    for term in terms:
        place(term)
    return out


def _text(value: object) -> str | None:
    return html.unescape(value) if isinstance(value, str) and value else None


# What WordPress's wptexturize made of typed ASCII in titles, typed back: rendered
# again (markup.render_title), the title reads exactly as the site showed it.
_TYPED = (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'),
          (" \u2014 ", " -- "), ("\u2014", "---"), (" \u2013 ", " - "), ("\u2013", "--"),
          ("\u2026", "..."))


def _title(value: object) -> str | None:
    text = _text(value)
    for shown, typed in _TYPED if text else ():
        text = text.replace(shown, typed)
    return text


def _when(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value or value.startswith("0000"):
        return None
    try:
        return dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def _image(value: object) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("url"), str):
        return value["url"]
    return None


def _post(item: dict, title_field: str, names: tuple[str, ...]) -> dict:
    author = item.get("author")
    fields = {"id": item.get("id"), "slug": item.get("slug"), "status": item.get("status"),
              "date": _when(item.get("date")), "modified": _when(item.get("modified")),
              "author": int(author) if isinstance(author, str) and digits(author) else None,
              title_field: _title(item.get(title_field)),
              "description": item.get("description") or None,
              "excerpt": item.get("excerpt") or None, "image": _image(item.get("image"))}
    for name in names:
        if item.get(name) not in (None, ""):
            fields[name] = item[name]
    return fields


def _term(collection: str, item: dict) -> Incoming:
    fields = {"id": item.get("id"), "name": _text(item.get("name")), "slug": item.get("slug"),
              "description": item.get("description") or None}
    if collection == "categories" and item.get("parent"):
        fields["parent"] = Ref("categories", str(item["parent"]))
    return Incoming(collection, str(item.get("id")), fields)


def _venue(item: dict) -> Incoming:
    fields = _post(item, "venue", ("address", "city", "country", "province", "state", "zip",
                                   "phone", "website", "geo_lat", "geo_lng", "show_map",
                                   "show_map_link"))
    region = item.get("stateprovince")
    if region and region not in (item.get("state"), item.get("province")):
        fields["stateprovince"] = region
    return Incoming("venues", str(item.get("id")), fields)


def _organizer(item: dict) -> Incoming:
    return Incoming("organizers", str(item.get("id")),
                    _post(item, "organizer", ("phone", "website", "email")))


def _event(item: dict) -> Incoming:
    fields = _post(item, "title", ("all_day", "timezone", "website", "show_map",
                                   "show_map_link", "hide_from_listings", "sticky", "featured",
                                   "online_url", "performer"))
    fields["cost"] = _cost(item)
    details = item.get("cost_details")
    if isinstance(details, dict) and details.get("currency_code"):
        fields["currency_code"] = details["currency_code"]
    if "website" in fields and fields["website"] == item.get("url"):  # shown for none
        del fields["website"]
    elif isinstance(fields.get("website"), str):
        fields["website"] = html.unescape(fields["website"])
    fields["start_date"] = _when(item.get("start_date"))
    fields["end_date"] = _when(item.get("end_date"))
    venue = item.get("venue")
    if isinstance(venue, dict) and venue.get("id"):
        fields["venue"] = Ref("venues", str(venue["id"]))
    fields["organizer"] = [Ref("organizers", str(o["id"])) for o in item.get("organizer") or []
                           if isinstance(o, dict) and o.get("id")]
    for name in ("categories", "tags"):
        fields[name] = [Ref(name, str(t["id"])) for t in item.get(name) or []
                        if isinstance(t, dict) and t.get("id")]
    if item.get("is_recurring") and isinstance(item.get("recurrence"), dict):
        fields["recurrence"] = item["recurrence"]
    return Incoming("events", str(item.get("series_id") or item.get("id")),
                    {k: v for k, v in fields.items() if v is not None})


def _cost(item: dict) -> str | None:
    """The cost as typed: the amounts alone when the site added its default currency
    symbol to show them (so ours is added here too), else the text shown."""
    details = item.get("cost_details")
    if isinstance(details, dict) and not details.get("currency_symbol"):
        values = [str(v) for v in details.get("values") or [] if str(v)]
        if values and all(v.replace(".", "", 1).isdigit() for v in values):
            return " - ".join(values)
    return _text(item.get("cost"))


def _add_events(batch: Batch, items: list[dict]) -> None:
    """One record per event. A series of this app (listed once per occurrence, each
    with its `series_id` and the series' `recurrence`) once; Pro's occurrences, events
    sharing one slug, as one series whose dates are exactly the listed ones
    (tec_series.py)."""
    seen: set[str] = set()
    plugin: list[dict] = []
    for item in items:
        if not isinstance(item.get("id"), int):
            batch.problems.append(Problem(f"an event without an id: {str(item)[:80]}"))
            continue
        if not item.get("series_id"):
            plugin.append(item)
            continue
        incoming = _event(item)
        if incoming.source_id in seen:
            continue
        seen.add(incoming.source_id)
        if item.get("is_recurring"):
            incoming.fields["id"] = item.get("series_id")
        batch.records.append(incoming)
    add_series(batch, plugin, _event)
