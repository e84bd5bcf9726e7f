"""iCalendar feeds (RFC 5545) made with the `icalendar` package.

Each event's VEVENT is serialized once and reused by every feed that carries it
(all upcoming, its venue's, organizers', categories', tags' and its own), and the
bytes are kept between builds keyed by the event's dependency signature, so a feed
of 10,000 events is a concatenation, not 10,000 component builds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from functools import lru_cache
from zoneinfo import ZoneInfo

import icalendar

from .. import dates, markup
from .model import EventView, SiteModel, address_lines

PRODID = "-//calendar_app//static site//EN"
_END = b"END:VCALENDAR\r\n"


def uid(event: EventView, host: str) -> str:
    """Stable for the life of the event: its id never changes, its dates may."""
    return f"{event.id}@{host}"


def _utc(local: dt.datetime, zone_name: str) -> dt.datetime:
    return dates.to_utc(local, dates.zone(zone_name)).replace(tzinfo=dt.UTC)


def _iana(name: str) -> bool:
    return name != "UTC" and not dates.is_offset_name(name)


def vevent(event: EventView, model: SiteModel, host: str, page_url: str) -> bytes:
    record = event.record
    site_tz = model.site_tz
    modified = record.get("modified") or record.get("date") or event.start
    created = record.get("date") or modified
    component = icalendar.Event()
    component.add("uid", uid(event, host))
    # DTSTAMP is the record's last change, not the build time: identical input,
    # identical bytes.
    component.add("dtstamp", _utc(modified, site_tz))  # type: ignore[arg-type]
    component.add("created", _utc(created, site_tz))  # type: ignore[arg-type]
    component.add("last-modified", _utc(modified, site_tz))  # type: ignore[arg-type]
    if event.all_day:
        component.add("dtstart", event.first_day)
        component.add("dtend", event.last_day + dt.timedelta(days=1))  # exclusive
    elif _iana(event.tzname):
        zone = ZoneInfo(event.tzname)
        component.add("dtstart", event.start.replace(tzinfo=zone))
        component.add("dtend", event.end.replace(tzinfo=zone))
    else:
        component.add("dtstart", event.start_utc.replace(tzinfo=dt.UTC))
        component.add("dtend", event.end_utc.replace(tzinfo=dt.UTC))
    component.add("summary", event.title_text)
    text = markup.plain_text(str(event.description)) or markup.plain_text(str(event.excerpt))
    if text:
        component.add("description", text)
    component.add("url", page_url)
    if event.venue is not None:
        component.add("location", ", ".join(address_lines(event.venue, with_name=True)))
        lat, lng = event.venue.get("geo_lat"), event.venue.get("geo_lng")
        if lat is not None and lng is not None:
            component.add("geo", (float(lat), float(lng)))  # type: ignore[arg-type]
    if event.categories:
        component.add("categories", [c.name for c in event.categories])
    for organizer in event.organizers:
        email = organizer.get("email")
        if email:
            component.add("organizer", f"mailto:{email}", parameters={"CN": organizer.name})
    component.add("status", "CONFIRMED")
    component.add("transp", "TRANSPARENT" if event.all_day else "OPAQUE")
    return component.to_ical()


@lru_cache(maxsize=256)
def vtimezone(tzid: str, first_year: int, last_year: int) -> bytes:
    """The zone's transitions over the years the feed's events span."""
    component = icalendar.Timezone.from_tzid(
        tzid, first_date=dt.date(first_year, 1, 1), last_date=dt.date(last_year + 1, 1, 1))
    return component.to_ical()


def feed(events: Iterable[EventView], title: str, vevents: Callable[[EventView], bytes],
         site_tz: str) -> bytes:
    events = list(events)
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", title)
    if _iana(site_tz):
        cal.add("x-wr-timezone", site_tz)
    head = cal.to_ical()
    assert head.endswith(_END)
    years: dict[str, list[int]] = {}
    for event in events:
        if not event.all_day and _iana(event.tzname):
            span = years.setdefault(event.tzname, [event.start.year, event.end.year])
            span[0] = min(span[0], event.start.year)
            span[1] = max(span[1], event.end.year)
    parts = [head[: -len(_END)]]
    parts += [vtimezone(tzid, low, high) for tzid, (low, high) in sorted(years.items())]
    parts += [vevents(event) for event in events]
    parts.append(_END)
    return b"".join(parts)
