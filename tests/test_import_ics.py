"""iCalendar import (calendar_app/importing/ics.py): real calendars of each producer,
read into a Batch and compared occurrence by occurrence with `recurring-ical-events`'
expansion of the same file; what cannot be kept reported with its line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import icalendar
import pytest
import recurring_ical_events

from calendar_app.importing.batch import Incoming, Ref
from calendar_app.importing.ics import read_ics
from calendar_app.model import dates, recurrence

FIXTURES = Path(__file__).parent / "fixtures" / "ics"
ZONE = "America/Los_Angeles"  # the importing calendar's; the files' own zones differ


def _read(name: str, zone: str = ZONE):
    return read_ics((FIXTURES / name).read_bytes(), name, zone)


def _events(batch) -> list[Incoming]:
    return [r for r in batch.records if r.collection == "events"]


# ----------------------------------------------------------- the expansion check
def _key(start: dt.datetime, end: dt.datetime, all_day: bool, zone: dt.tzinfo) -> tuple:
    """An occurrence as comparable: days for all-day ones, else UTC instants."""
    if all_day:
        return ("day", start.date(), end.date())
    return ("at", dates.to_utc(start, zone), dates.to_utc(end, zone))


def _ours(batch, zone_name: str, low: dt.datetime, high: dt.datetime) -> list[tuple]:
    """Every occurrence our files would list, expanded by model/recurrence.py as the
    interface expands a series, with start in [low, high) (UTC or days)."""
    found = []
    cancelled = {p.source_id for p in batch.problems if p.message.startswith("STATUS:CANCELLED")}
    for record in _events(batch):
        fields = record.fields
        if record.source_id in cancelled or fields.get("event_status") == "canceled":
            continue  # recurring-ical-events leaves cancelled events out
        zone = dates.zone(fields.get("timezone") or zone_name)
        all_day = bool(fields.get("all_day"))
        start, end = fields["start_date"], fields["end_date"]
        if all_day:
            end = end + dt.timedelta(seconds=1)  # the next day's start, as DTEND
        block = fields.get("recurrence")
        if block:
            until = dates.from_utc(high, zone) + dt.timedelta(days=400)
            items = [(o.start, o.end + (dt.timedelta(seconds=1) if all_day else dt.timedelta()),
                      o.overrides.get("title", fields["title"]))
                     for o in recurrence.expand(block, fields["start_date"],
                                                fields["end_date"], until, zone)
                     if not o.cancelled]
        else:
            items = [(start, end, fields["title"])]
        for begin, finish, title in items:
            key = _key(begin, finish, all_day, zone)
            found.append((*key, title))
    return sorted(k for k in found if _within(k, low, high))


def _theirs(path: Path, zone_name: str, low: dt.datetime, high: dt.datetime) -> list[tuple]:
    calendar = icalendar.Calendar.from_ical(path.read_bytes())
    fallback = dates.zone(str(calendar.get("X-WR-TIMEZONE") or zone_name))
    found = []
    for event in recurring_ical_events.of(calendar).between(low - dt.timedelta(days=400),
                                                             high + dt.timedelta(days=400)):
        if "RECURRENCE-ID" in event and str(event.get("STATUS")).upper() == "CANCELLED":
            continue  # a cancelled date: our series leaves it out
        start, end = event.start, event.end
        if not isinstance(start, dt.datetime):
            found.append(("day", start, max(end, start + dt.timedelta(days=1)),
                          str(event.get("SUMMARY", "")).strip() or "(untitled)"))
            continue
        utc = [(w.astimezone(dt.UTC).replace(tzinfo=None) if w.tzinfo else
                dates.to_utc(w, fallback)).replace(microsecond=0) for w in (start, end)]
        found.append(("at", *utc, str(event.get("SUMMARY", "")).strip() or "(untitled)"))
    return sorted(k for k in found if _within(k, low, high))


def _within(key: tuple, low: dt.datetime, high: dt.datetime) -> bool:
    start = key[1]
    if key[0] == "day":
        return low.date() <= start < high.date()
    return low <= start < high


def _window(batch) -> tuple[dt.datetime, dt.datetime]:
    """Two years from the first event's start."""
    first = min(r.fields["start_date"] for r in _events(batch))
    low = dt.datetime(first.year, first.month, 1) - dt.timedelta(days=1)
    return low, low + dt.timedelta(days=730)


# Files read whole: every occurrence equal. (name, what the file is, zone of the import)
PRODUCERS = [
    ("daylight_saving_time.ics", "Google, X-WR-TIMEZONE, UTC times, moved dates"),
    ("issue_62_moved_event.ics", "Google, a moved date"),
    ("issue_62_moved_event_2.ics", "Google, moved dates"),
    ("issue_48_dst.ics", "Google, weekly series across summer time"),
    ("issue_48_daylight_aware_repeats.ics", "Google"),
    ("x_wr_timezone_simple_events_issue_59.ics", "Google, X-WR-TIMEZONE and UTC"),
    ("issue_151_macos_linux_difference.ics", "Google"),
    ("x_location.ics", "Google, weekdays rule"),
    ("issue_27_t1.ics", "Exchange 2010, Windows zone names"),
    ("issue_28_rrule_with_UTC_endinginZ.ics", "Exchange 2010, UNTIL in UTC"),
    ("issue_836_do_not_quote_tzid.ics", "Exchange 2010"),
    ("timezone_same_start.ics", "Exchange 2010"),
    ("Germany.ics", "Outlook 12, public holidays"),
    ("outlook_windows_zones.ics", "Exchange, Windows zones, moved and excluded dates"),
    ("outlook_desktop_custom_tzid.ics", "Outlook 16, a made-up TZID"),
    ("apple_book_club.ics", "Apple Calendar, moved date, structured location"),
    ("each_week_but_one_deleted.ics", "Nextcloud (SabreDAV)"),
    ("each_week_but_two_deleted.ics", "Nextcloud (SabreDAV)"),
    ("three_events_one_edited.ics", "Nextcloud (SabreDAV)"),
    ("duration_edited.ics", "Nextcloud (SabreDAV), DURATION"),
    ("one_day_event_repeat_every_day.ics", "Nextcloud (SabreDAV), all-day daily"),
    ("one_event_repeat_every_3_days.ics", "Nextcloud (SabreDAV)"),
    ("nextcloud_repair_cafe.ics", "Nextcloud Calendar app, a cancelled date"),
    ("meetup_python.ics", "Meetup"),
    ("gancio_feed.ics", "Gancio"),
    ("mobilizon_group.ics", "Mobilizon"),
    ("tec_plugin_export.ics", "The Events Calendar ?ical=1"),
    ("recurring_events_moved.ics", "Thunderbird, moved dates"),
    ("issue_20_exdate_ignored.ics", "DAVx5, EXDATE"),
    ("rdate_falls_on_rrule_until.ics", "DAVx5, RDATE on UNTIL"),
    ("rdate.ics", "RDATE"),
    ("issue_113_period_in_rdate.ics", "RDATE periods"),
    ("multiple_rrule.ics", "Cyrus, two RRULEs"),
    ("issue_18_cancel_status.ics", "Thunderbird, a cancelled date"),
    ("issue_243_recurrence_id_is_not_identical_to_dtstart.ics", "RECURRENCE-ID moved"),
    ("issue_253_additional_recurrence_id.ics", "RECURRENCE-ID outside the rule"),
    ("issue_36_recurrence_ID_format.ics", "RECURRENCE-ID as a date"),
    ("issue_4_rrule_until.ics", "UNTIL"),
    ("duration.ics", "DURATION without DTEND"),
    ("issue_148_edge_case_1.ics", "history of versions (SEQUENCE)"),
]


@pytest.mark.parametrize("name,_what", PRODUCERS, ids=[p[0] for p in PRODUCERS])
def test_every_occurrence_matches_recurring_ical_events(name: str, _what: str) -> None:
    batch = _read(name)
    assert _events(batch), name
    low, high = _window(batch)
    ours = _ours(batch, ZONE, low, high)
    theirs = _theirs(FIXTURES / name, ZONE, low, high)
    assert ours, "nothing in the window: the window is wrong"
    assert ours == theirs
    # the series are ones our files accept: normalized and valid as they are
    for record in _events(batch):
        block = record.fields.get("recurrence")
        if block:
            zone = dates.zone(record.fields.get("timezone") or ZONE)
            assert recurrence.normalize(block) == block
            recurrence.validate(block, record.fields["start_date"], zone)


def test_a_date_made_all_day_in_a_timed_series_is_reported_and_the_rest_matches() -> None:
    name = "recurring_events_changed_duration.ics"  # Thunderbird
    batch = _read(name)
    [problem] = [p for p in batch.problems if "made all-day" in p.message]
    lines = (FIXTURES / name).read_text().splitlines()
    assert lines[problem.line - 1].startswith("DTSTART;VALUE=DATE:20190310")
    low, high = _window(batch)
    day = dt.date(2019, 3, 10)
    ours = [k for k in _ours(batch, ZONE, low, high) if k[1] < dt.datetime(2019, 3, 9, 22)
            or k[1] > dt.datetime(2019, 3, 11)]
    theirs = [k for k in _theirs(FIXTURES / name, ZONE, low, high) if k[1] != day]
    assert ours == theirs
