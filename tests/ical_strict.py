"""A strict look at an iCalendar file, for the feed tests: what calendar apps reject.

- every content line parses with icalendar's strict content-line parser, is at most
  75 octets and ends in CRLF; icalendar's component parser records no error;
- VCALENDAR has VERSION and PRODID; each VEVENT UID, DTSTAMP and DTSTART, at most one
  ORGANIZER (RFC 5545 3.6.1), at most one of each single-valued property;
- every TZID a property names has its VTIMEZONE, and that VTIMEZONE covers every date
  given in it: DTSTART, DTEND, RDATE, EXDATE, RECURRENCE-ID and each date of an RRULE
  (all of a bounded rule's, an endless rule's up to `endless_until`).
"""

from __future__ import annotations

import datetime as dt
import re

import icalendar
from dateutil import rrule
from icalendar.parser import Contentline

ONCE = ("UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY", "DESCRIPTION", "URL", "LOCATION",
        "GEO", "STATUS", "TRANSP", "SEQUENCE", "CREATED", "LAST-MODIFIED", "RECURRENCE-ID",
        "ORGANIZER")
_ONLY_WORKS = re.compile(r"only works from (\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)")


def _lines(data: bytes) -> list[str]:
    assert data.endswith(b"\r\n"), "the file does not end in CRLF"
    physical = data.split(b"\r\n")[:-1]
    for raw in physical:
        assert b"\n" not in raw and b"\r" not in raw, f"bare line break in {raw[:60]!r}"
        assert len(raw) <= 75, f"line of {len(raw)} octets: {raw[:60]!r}"
    return [c.decode("utf-8") for c in data.replace(b"\r\n ", b"").split(b"\r\n")[:-1]]


def _covered(zone: icalendar.Timezone) -> tuple[dt.datetime, dt.datetime]:
    found = _ONLY_WORKS.search(str(zone.get("COMMENT", "")))
    starts = [sub.decoded("DTSTART") for sub in zone.subcomponents]
    low = min(starts)
    high = (dt.datetime.fromisoformat(found.group(2)) if found
            else dt.datetime(max(starts).year + 1, 1, 1))
    if found:
        low = min(low, dt.datetime.fromisoformat(found.group(1)))
    return low, high


def _moments(lines: list[str], endless_until: dt.datetime) -> list[tuple[str, str, dt.datetime]]:
    """(property, tzid, local date-time) of every zoned date of every VEVENT."""
    out: list[tuple[str, str, dt.datetime]] = []
    event: dict[str, list[tuple[str, str]]] = {}
    for line in lines:
        name, params, value = Contentline(line, strict=True).parts()
        if name == "BEGIN" and value == "VEVENT":
            event = {}
        elif name == "END" and value == "VEVENT":
            out += _event_moments(event, endless_until)
        else:
            event.setdefault(name, []).append((params.get("TZID", ""), value))
    return out


def _event_moments(event: dict[str, list[tuple[str, str]]], endless_until: dt.datetime,
                   ) -> list[tuple[str, str, dt.datetime]]:
    out = []
    for name in ("DTSTART", "DTEND", "RDATE", "EXDATE", "RECURRENCE-ID"):
        for tzid, value in event.get(name, []):
            if tzid:
                out += [(name, tzid, dt.datetime.strptime(v, "%Y%m%dT%H%M%S"))
                        for v in value.split(",")]
    starts = [(tzid, v) for tzid, v in event.get("DTSTART", []) if tzid]
    for _tzid, rule_text in event.get("RRULE", []):
        if not starts:
            continue
        tzid, value = starts[0]
        first = dt.datetime.strptime(value, "%Y%m%dT%H%M%S")
        # UNTIL is in UTC beside a zoned DTSTART: compare as local, a day's margin.
        text = re.sub(r"UNTIL=(\d{8}T\d{6})Z", r"UNTIL=\1", rule_text)
        rule = rrule.rrulestr(text, dtstart=first)
        bounded = "UNTIL=" in text or "COUNT=" in text
        for n, when in enumerate(rule):
            if (not bounded and when > endless_until) or n > 5000:
                break
            out.append(("RRULE", tzid, when))
    return out


def check_feed(data: bytes, endless_until: dt.datetime, where: str = "") -> icalendar.Calendar:
    """Raise AssertionError naming what a strict client would reject; the calendar."""
    lines = _lines(data)
    for line in lines:
        Contentline(line, strict=True).parts()  # raises on a malformed line
    calendar = icalendar.Calendar.from_ical(data)
    for component in calendar.walk():
        assert not component.errors, (where, component.name, component.errors)
    assert calendar.get("VERSION") == "2.0" and calendar.get("PRODID"), where
    # TZIDs compared without case: icalendar's strict parser gives parameters in capitals.
    zones = {str(z["TZID"]).upper(): _covered(z) for z in calendar.walk("VTIMEZONE")}
    for event in calendar.walk("VEVENT"):
        for name in ("UID", "DTSTAMP", "DTSTART"):
            assert event.get(name) is not None, (where, name)
        for name in ONCE:
            value = event.get(name)
            assert not isinstance(value, list), (where, f"{name} more than once")
    for name, tzid, when in _moments(lines, endless_until):
        assert tzid.upper() in zones, (where, f"{name} names TZID {tzid} with no VTIMEZONE")
        low, high = zones[tzid.upper()]
        assert low <= when < high, (where, (f"{name} {when} outside {tzid}'s VTIMEZONE "
                                           f"({low} to {high})"))
    return calendar
