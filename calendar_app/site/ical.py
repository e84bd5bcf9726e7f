"""iCalendar feeds (RFC 5545), written as text.

The few properties a VEVENT carries are formatted here directly: the `icalendar`
package's serializer cost ~1 ms an event, most of a 10,000-event build's feeds. It
still makes the VTIMEZONE components (one per zone and feed, cached).

Each event's VEVENT is serialized once and reused by every feed that carries it
(all upcoming, its venue's, organizers', categories', tags' and its own), and the
bytes are kept between builds keyed by the event's dependency signature, so a feed
of 10,000 events is a concatenation, not 10,000 component builds.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from urllib.parse import quote, urlsplit

import icalendar

from ..catalog import occurrences
from ..model import dates, markup, recurrence
from .htmltext import html_to_text
from .model import EventView, SiteModel, address_lines

PRODID = "-//calendar_app//static site//EN"
_END = b"END:VCALENDAR\r\n"


def uid(event: EventView, host: str) -> str:
    """Stable for the life of the event: its id never changes, its dates may. `host` is
    the calendar's own (uid_host), whatever address a build is published at. A changed
    occurrence shares its series' UID."""
    return f"{occurrences.series_id(event.record)}@{host}"


def uid_host(settings: dict, base_url: str) -> str:
    """The host of calendar.yaml's `url`; the build's base URL only when there is none:
    a preview build and the production one give the same UIDs, so a subscriber who
    tried the preview does not see every event twice."""
    return (urlsplit(str(settings.get("url") or "")).hostname
            or urlsplit(base_url).hostname or "localhost")


def _iana(name: str) -> bool:
    return name != "UTC" and not dates.is_offset_name(name)


def vevent(event: EventView, model: SiteModel, host: str, page_url: str,
           alone: bool = False) -> bytes:
    """The event's VEVENT (a series': with its rules and changed dates). `alone`: one
    date of a series as an event of its own (its page's "this date" .ics), with the
    occurrence's id as UID, so a calendar app keeps it apart from the series."""
    record = event.record
    site_tz = model.site_tz
    modified = record.get("modified") or record.get("date") or event.start
    created = record.get("date") or modified
    changed = _utc_stamp(modified, site_tz)
    lines = ["BEGIN:VEVENT", "UID:" + text(f"{record.id}@{host}" if alone else uid(event, host)),
             # DTSTAMP is the record's last change, not the build time: identical
             # input, identical bytes.
             f"DTSTAMP:{changed}",
             f"CREATED:{_utc_stamp(created, site_tz)}",
             f"LAST-MODIFIED:{changed}",
             f"SEQUENCE:{sequence(created, modified)}"]
    if event.all_day:
        end = event.last_day + dt.timedelta(days=1)  # exclusive
        lines += [f"DTSTART;VALUE=DATE:{event.first_day:%Y%m%d}", f"DTEND;VALUE=DATE:{end:%Y%m%d}"]
    elif _iana(event.tzname):
        lines += [f"DTSTART;TZID={event.tzname}:{event.start:%Y%m%dT%H%M%S}",
                  f"DTEND;TZID={event.tzname}:{event.end:%Y%m%dT%H%M%S}"]
    else:
        lines += [f"DTSTART:{event.start_utc:%Y%m%dT%H%M%SZ}",
                  f"DTEND:{event.end_utc:%Y%m%dT%H%M%SZ}"]
    lines += [] if alone else recurrence_lines(event)
    lines.append("SUMMARY:" + text(event.title_text))
    # The description's HTML as the page shows it, without the whole representation,
    # as text that keeps paragraphs, list items and link addresses.
    description = html_to_text(markup.render_html(record.get("description")), page_url) or (
        html_to_text(str(event.excerpt), page_url))
    organizers, unreachable = organizer_lines(event.organizers)
    if unreachable:  # no address to write them as ORGANIZER or ATTENDEE
        organized = model.regional.gettext("Organized by: %(names)s") % {"names": unreachable}
        description = "\n\n".join(filter(None, [description, organized]))
    if description:
        lines.append("DESCRIPTION:" + text(description))
    lines.append("URL:" + uri(page_url))
    if event.venue is not None:
        lines.append("LOCATION:" + text(location(address_lines(event.venue, True, model.territory))))
        lat, lng = event.venue.get("geo_lat"), event.venue.get("geo_lng")
        if lat is not None and lng is not None:
            lines.append(f"GEO:{float(lat):.6f};{float(lng):.6f}")
    if event.categories:
        lines.append("CATEGORIES:" + ",".join(text(c.name) for c in event.categories))
    lines += organizers
    lines += [f"STATUS:{_STATUS.get(record.get('event_status') or '', 'CONFIRMED')}",
              f"TRANSP:{'TRANSPARENT' if event.all_day else 'OPAQUE'}",
              "END:VEVENT", ""]
    return b"\r\n".join(fold(line) for line in lines) + (
        b"" if alone else changed_occurrences(event, model, host, page_url))


def location(lines: list[str]) -> str:
    """The venue's name and address as one line; a name holding a comma on a line of
    its own (as Apple writes it), so that a reader can tell where the name ends."""
    name, rest = lines[0], ", ".join(lines[1:])
    return f"{name}\n{rest}" if "," in name and rest else ", ".join(lines)


# The plugin's Event Status as RFC 5545's (3.8.1.11): a postponed event has no date yet.
_STATUS = {"canceled": "CANCELLED", "postponed": "TENTATIVE"}


def sequence(created: dt.datetime, modified: dt.datetime) -> int:
    """SEQUENCE (RFC 5545 3.8.7.4): calendar apps replace their copy of an event only
    when it grows. Every change of a record sets its `modified`, so the seconds from
    its creation to its last change grow with every change, with no counter to keep in
    the file or history to read (in range for 68 years: a signed 32-bit value)."""
    return max(0, min(int((modified - created).total_seconds()), 2**31 - 1))


def organizer_lines(organizers: list) -> tuple[list[str], str]:
    """RFC 5545 allows one ORGANIZER (3.6.1): the first organizer with an e-mail
    address; the others with one as non-participating attendees (3.8.4.1, 3.2.16).
    Returns those lines and the names of the organizers without an address."""
    lines = []
    for organizer in organizers:
        email = organizer.get("email")
        if email:
            name = "ORGANIZER" if not lines else "ATTENDEE;ROLE=NON-PARTICIPANT"
            lines.append(f"{name};CN={_param(organizer.name)}:{mailto(email)}")
    return lines, ", ".join(o.name for o in organizers if not o.get("email"))


# ------------------------------------------------------------------ recurring events
# One VEVENT per series: its rules as RRULE, extra dates as RDATE, excluded and
# cancelled dates as EXDATE; one VEVENT more per changed date, with the series' UID
# and RECURRENCE-ID (RFC 5545 3.8.4.4). docs/recurring-events.md.
_LOCAL_UNTIL = re.compile(r"UNTIL=(\d{8}T\d{6})(?![\dZ])")


def _moment(local: dt.datetime, event: EventView) -> str:
    """Parameters and value of a date-time property, in the form of the DTSTART."""
    if event.all_day:
        return f";VALUE=DATE:{local:%Y%m%d}"
    if _iana(event.tzname):
        return f";TZID={event.tzname}:{local:%Y%m%dT%H%M%S}"
    return f":{dates.to_utc(local, dates.zone(event.tzname)):%Y%m%dT%H%M%SZ}"


def _rrule(text: str, event: EventView) -> str:
    """RFC 5545 wants UNTIL in UTC beside a zoned DTSTART, a date beside a DATE one;
    the file's rules may give it in local time."""
    def until(match: re.Match) -> str:
        local = dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S")
        if event.all_day:
            return f"UNTIL={local:%Y%m%d}"
        return f"UNTIL={dates.to_utc(local, dates.zone(event.tzname)):%Y%m%dT%H%M%SZ}"

    return "RRULE:" + _LOCAL_UNTIL.sub(until, text)


def recurrence_lines(event: EventView) -> list[str]:
    """RECURRENCE-ID of a changed occurrence, or the rules and dates of a series."""
    data = event.record.data
    if data.get("original_start") is not None:
        return ["RECURRENCE-ID" + _moment(data["original_start"], event)]
    block = data.get("recurrence")
    if not block:
        return []
    lines = [_rrule(t, event) for t in recurrence.rule_texts(block)]
    lines += ["RDATE" + _moment(d, event) for d in block.get("rdate", ())]
    lines += ["EXDATE" + _moment(d, event) for d in sorted(recurrence.taken_out(block))]
    return lines


def changed_occurrences(event: EventView, model: SiteModel, host: str,
                        page_url: str) -> bytes:
    """The VEVENTs of a series' changed dates (moved, retitled, another venue)."""
    record = event.record
    block = record.get("recurrence")
    if not block or record.get("original_start") is not None:
        return b""
    found = recurrence.changed(block, record.data["start_date"], record.data["end_date"])
    return b"".join(
        vevent(model._event(occurrences.as_record(occurrences.Listed(
            occurrences.occurrence_id(record.id, occ.number), record, occ))),
            model, host, page_url)
        for occ in found)


def _utc_stamp(local: dt.datetime, zone_name: str) -> str:
    return f"{dates.to_utc(local, dates.zone(zone_name)):%Y%m%dT%H%M%SZ}"


_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f]")  # not allowed in a value (3.1)


def text(value: str) -> str:
    """A TEXT value, escaped (RFC 5545 3.3.11)."""
    # Chained replaces, backslash first: str.translate with a dict looks up every
    # character in Python and was a fifth of a VEVENT's time (1 KB descriptions).
    escaped = (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
               .replace("\n", "\\n").replace("\r", ""))
    return _CONTROLS.sub("", escaped)


def _param(value: str) -> str:
    """A parameter value, always quoted; DQUOTE is not allowed inside (3.1), nor is a
    line break (a space instead)."""
    value = re.sub("\r\n|[\r\n]", " ", value.replace('"', "'"))
    return '"' + _CONTROLS.sub("", value) + '"'


# What a URI may hold as it is (RFC 3986: reserved, unreserved, and % of an escape);
# anything else, spaces and controls included, is percent-encoded.
_URI_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


def uri(value: str) -> str:
    """A URI value (3.3.13): nothing in it can end the line or the value."""
    return quote(value, safe=_URI_SAFE)


def mailto(email: str) -> str:
    """A CAL-ADDRESS (3.3.3) for an e-mail address, escaped as RFC 6068 asks."""
    return "mailto:" + quote(email, safe="@!$&'*+=-._~")


def fold(line: str) -> bytes:
    """A content line, UTF-8, over 75 octets split with CRLF + space (3.1), never
    inside a character. Control characters are dropped whatever the property: values
    are escaped above, and none may end a line early."""
    # isprintable (C) is False for every control character: most lines skip the regex.
    data = (line if line.isprintable() else _CONTROLS.sub("", line)).encode("utf-8")
    if len(data) <= 75:
        return data
    parts, start, limit = [], 0, 75
    while len(data) - start > limit:
        cut = start + limit
        while data[cut] & 0xC0 == 0x80:  # a continuation byte: cut before its character
            cut -= 1
        parts.append(data[start:cut])
        start, limit = cut, 74  # the leading space takes an octet
    parts.append(data[start:])
    return b"\r\n ".join(parts)


@lru_cache(maxsize=256)
def vtimezone(tzid: str, first_year: int, last_year: int) -> bytes:
    """The zone's transitions over the years the feed's events span."""
    component = icalendar.Timezone.from_tzid(
        tzid, first_date=dt.date(first_year, 1, 1), last_date=dt.date(last_year + 1, 1, 1))
    return component.to_ical()


def duration(minutes: int) -> str:
    """A DURATION value (RFC 5545 3.3.6): 90 -> "PT1H30M"."""
    hours, rest = divmod(minutes, 60)
    return "PT" + (f"{hours}H" if hours else "") + (f"{rest}M" if rest or not hours else "")


def event_years(event: EventView, endless_until: Callable[[EventView], int] | None,
                ) -> tuple[int, int]:
    """The first and last year of the dates an event's VEVENT holds: a series' every
    date (its rules', RDATE, EXDATE, its changed dates'), an endless one's up to the
    year `endless_until` gives (the recurrence horizon: the dates the site lists)."""
    low, high = event.start.year, event.end.year
    data = event.record.data
    block = data.get("recurrence")
    if not block or data.get("original_start") is not None:
        return low, high
    start, end = data["start_date"], data["end_date"]
    moments = [*block.get("rdate", ()), *recurrence.taken_out(block)]
    for occ in recurrence.changed(block, start, end):
        moments += [occ.original, occ.start, occ.end]
    last = _last_year(repr(sorted(block.items())), block, start, end)
    if last is None:
        last = endless_until(event) if endless_until else high
    years = [low, high, last, *(m.year for m in moments)]
    return min(years), max(years)


def _last_year(key: str, block: dict, start: dt.datetime, end: dt.datetime) -> int | None:
    """The year of a bounded series' last date (None for an endless one); `key` names
    the block for the cache (dicts are not hashable)."""
    found = (key, start, end)
    if found not in _LAST_YEARS:
        last = None
        if not recurrence.is_endless(block, start):
            dated = recurrence.expand(block, start, end, dates.MAX_KEPT)
            last = max((o.end for o in dated), default=end).year
        if len(_LAST_YEARS) > 4096:
            _LAST_YEARS.clear()
        _LAST_YEARS[found] = last
    return _LAST_YEARS[found]


_LAST_YEARS: dict[tuple[str, dt.datetime, dt.datetime], int | None] = {}


def feed(events: Iterable[EventView], title: str, vevents: Callable[[EventView], bytes],
         site_tz: str, refresh_minutes: int | None = None,
         endless_until: Callable[[EventView], int] | None = None) -> bytes:
    """A VCALENDAR of these events. `refresh_minutes`: how often subscribers should
    fetch it again (REFRESH-INTERVAL, RFC 7986 5.7, and X-PUBLISHED-TTL, its older
    spelling that Outlook and Apple Calendar read); None for a one-off file.
    `endless_until`: the last year an endless series' time zone is described for."""
    events = list(events)
    head = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}", "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH", "X-WR-CALNAME:" + text(title)]
    if refresh_minutes is not None:
        head += [f"REFRESH-INTERVAL;VALUE=DURATION:{duration(refresh_minutes)}",
                 f"X-PUBLISHED-TTL:{duration(refresh_minutes)}"]
    if _iana(site_tz):
        head.append(f"X-WR-TIMEZONE:{site_tz}")
    years: dict[str, list[int]] = {}
    for event in events:
        if not event.all_day and _iana(event.tzname):
            low, high = event_years(event, endless_until)
            span = years.setdefault(event.tzname, [low, high])
            span[0], span[1] = min(span[0], low), max(span[1], high)
    parts = [b"".join(fold(line) + b"\r\n" for line in head)]
    parts += [vtimezone(tzid, low, high) for tzid, (low, high) in sorted(years.items())]
    parts += [vevents(event) for event in events]
    parts.append(_END)
    return b"".join(parts)
