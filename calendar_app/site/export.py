"""`export ics`: the calendar (or part of it) as one iCalendar file.

Written by the static site's feed writer (site/ical.py), so an export says exactly what
the site's `calendar.ics` says, series as one VEVENT with their rules and changed
dates: importing it again (importing/ics.py) gives back the same events. Unlike the
site's feeds, an export keeps past events and everything ahead, not a window. It
lives with the site's writer: the importing layer stands beside the site and may not
import it (tests/test_architecture.py), so the command calls it from above both.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import IO

from ..catalog.reader import Reader
from ..catalog.represent import Representer
from . import ical, paths
from .model import EventView, SiteModel

DEFAULT_URL = "http://localhost/"


def export_ics(reader: Reader, out: IO[str] | None = None, *,
               categories: Iterable[str] = (), tags: Iterable[str] = (),
               venues: Iterable[str] = (), organizers: Iterable[str] = (),
               since: dt.date | None = None, until: dt.date | None = None) -> str:
    """Every published event (series as one VEVENT) as iCalendar text, also written to
    `out` when given. Filters name records by slug (an event matches when it links
    to any of them) and days: an event matches when it ends on or after `since` and
    starts on or before `until`; a series when it starts on or before `until`."""
    catalog = reader.catalog
    settings = catalog.settings
    base_url = str(settings.get("url") or DEFAULT_URL).rstrip("/") + "/"
    rep = Representer(catalog, base_url, base_url + "wp-json/tribe/events/v1")
    model = SiteModel(catalog, rep, reader.clock())  # type: ignore[arg-type]
    host = ical.uid_host(settings, base_url)
    wanted = {"categories": set(categories), "tags": set(tags), "venue": set(venues),
              "organizer": set(organizers)}
    events = [e for e in model.events if _matches(e, wanted, since, until)]

    def vevent(event: EventView) -> bytes:
        return ical.vevent(event, model, host, base_url + paths.folder(event.path))

    title = str(settings.get("title") or "Events")
    text = ical.feed(events, title, vevent, model.site_tz).decode("utf-8")
    if out is not None:
        out.write(text)
    return text


def _matches(event: EventView, wanted: dict[str, set[str]], since: dt.date | None,
             until: dt.date | None) -> bool:
    for name, slugs in wanted.items():
        if not slugs:
            continue
        linked = event.record.get(name) or []
        if set([linked] if isinstance(linked, str) else linked).isdisjoint(slugs):
            return False
    if until is not None and event.first_day > until:
        return False
    ended = since is not None and event.last_day < since
    return not ended or bool(event.record.get("recurrence"))
