"""iCalendar (RFC 5545) files as a Batch: one event per VEVENT, a recurring VEVENT and
its RECURRENCE-ID overrides as one series.

Styles met in the wild and what is done with them:
- Times: TZID (IANA, Windows names from Outlook/Exchange, made-up names defined by a
  VTIMEZONE, ics_zones.py), UTC (`...Z`), floating, all-day (VALUE=DATE). A calendar's
  `X-WR-TIMEZONE` (Google, Apple) places its UTC and floating times in that zone, as
  the `x-wr-timezone` package does for `recurring-ical-events`. Floating times without
  it are the importing calendar's wall times. An event whose zone is the calendar's
  gets no `timezone` of its own. A recurring event in UTC stays in UTC: its rule
  repeats in UTC, and placing it in a zone with summer time would move its dates.
- DTEND, else DURATION, else the start (a whole day for an all-day event).
- Our own feeds (site/ical.py) and the plugin's `?ical=1` exports: URL is the event's
  page there, so it gives the slug wished for, not a website; the UID its id.
Everything a VEVENT holds that the calendar cannot keep is a Problem naming its line.
"""

from __future__ import annotations

from . import ics_series
from .batch import Batch
from .ics_reader import Reader
from .ics_text import IcsError

__all__ = ["IcsError", "read_ics"]


def read_ics(data: bytes, origin: str, calendar_zone: str) -> Batch:
    """The records of an iCalendar file, and what could not be kept, each with its line.

    `origin` names the file or URL in messages; `calendar_zone` is the importing
    calendar's zone (calendar.yaml `timezone`). Raises IcsError for input that is no
    iCalendar at all, is cut short or is too large: then nothing should be imported."""
    return Reader(origin, calendar_zone or "UTC").read(data, ics_series.read_events)
