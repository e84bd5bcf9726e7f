"""The lists of the editing pages: events by tab (upcoming, past, drafts, pending,
trash) with search and filters, and the other collections, selected by the interface's
own list code (`catalog.lists.select_ids`) for the signed-in user."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..catalog import lists
from ..catalog.occurrences import split_id
from ..catalog.policy import may_read
from ..catalog.query import Context
from ..catalog.represent import Representer
from ..model.errors import ApiError
from ..model.formats import digits
from ..model.records import Record
from ..model.resources import Resource
from ..store.users import User
from ..wiring import Calendar
from . import words

PER_PAGE = 50
EVER = "1000-01-01"  # lists of drafts and the like: whatever their dates
TABS = {
    "events": ("upcoming", "past", "drafts", "pending", "trash"),
    "venues": ("all", "drafts", "pending", "trash"),
    "organizers": ("all", "drafts", "pending", "trash"),
}
_STATUS = {"drafts": "draft", "pending": "pending", "trash": "trash"}


@dataclass
class Page:
    title: str
    tab: str
    tabs: tuple[str, ...]
    search: str
    records: list[Record] = field(default_factory=list)
    total: int = 0
    number: int = 1
    pages: int = 1
    filters: dict[str, str] = field(default_factory=dict)
    error: str = ""


def page(cal: Calendar, resource: Resource, user: User, args: Any, site: str) -> Page:
    tabs = TABS.get(resource.name, ("all",))
    tab = args.get("tab") if args.get("tab") in tabs else tabs[0]
    search = str(args.get("q") or "")[:200]
    out = Page(words.KINDS[resource.name].plural, tab, tabs, search)
    params: dict[str, Any] = {"per_page": "1"}
    if search:
        params["search"] = search
    if resource.name == "events":
        _event_params(cal, tab, args, params, out)
    elif tab in _STATUS:
        params["status"] = _STATUS[tab]
    view = cal.catalog.view()
    ctx = Context(cal.reader, view, Representer(cal.catalog, site, site,
                                                 lambda r: may_read(user, r)), user)
    try:
        ids = lists.select_ids(ctx, resource, params)
    except ApiError as exc:
        out.error = exc.message
        return out
    series = list(dict.fromkeys(_series(i) for i in ids))
    if tab == "past":
        series.reverse()  # the latest first
    out.total = len(series)
    out.pages = max(1, -(-out.total // PER_PAGE))
    out.number = min(max(1, _int(args.get("page"), 1)), out.pages)
    chosen = series[(out.number - 1) * PER_PAGE: out.number * PER_PAGE]
    out.records = [r for r in (view.get(i, resource.name) for i in chosen) if r is not None]
    return out


def _event_params(cal: Calendar, tab: str, args: Any, params: dict, out: Page) -> None:
    now = cal.service.site_now().strftime("%Y-%m-%d %H:%M:%S")
    if tab == "upcoming":
        params.update(start_date=now, status="publish,future,private")
    elif tab == "past":
        params.update(start_date=EVER, end_date=now, status="publish,future,private")
    else:
        params.update(start_date=EVER, status=_STATUS[tab])
    for name in ("categories", "venue"):
        value = str(args.get(name) or "")
        if digits(value):
            params[name] = value
            out.filters[name] = value


def _series(record_id: int) -> int:
    parts = split_id(record_id)
    return parts[0] if parts else record_id


def _int(text: object, default: int) -> int:
    return int(text) if isinstance(text, str) and digits(text) and len(text) < 7 else default
