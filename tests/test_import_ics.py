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


# ------------------------------------------------------------- what each style gives
def _by_source(batch) -> dict[tuple[str, str], Incoming]:
    return {(r.collection, r.source_id): r for r in batch.records}


def _linked(batch, ref: Ref) -> dict:
    return _by_source(batch)[(ref.collection, ref.source_id)].fields


def _line(name: str, number: int) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()[number - 1]


def test_apple_place_on_two_lines_with_its_coordinates() -> None:
    batch = _read("apple_book_club.ics")
    series, weekend = _events(batch)
    assert series.fields["timezone"] == "Europe/Berlin"
    assert series.fields["recurrence"]["rrule"] == "FREQ=MONTHLY;UNTIL=20241231T235959;BYDAY=1TH"
    assert series.fields["recurrence"]["changes"] == {"2024-03-07 19:00:00": {
        "start_date": dt.datetime(2024, 3, 6, 19), "end_date": dt.datetime(2024, 3, 6, 21, 30),
        "title": "Book club (Wednesday this time)"}}
    assert _linked(batch, series.fields["venue"]) == {
        "venue": "Café Lesezeichen", "address": "Kastanienallee 12, 10435 Berlin, Germany",
        "geo_lat": 52.538, "geo_lng": 13.41}
    assert weekend.fields["all_day"] is True
    assert (weekend.fields["start_date"], weekend.fields["end_date"]) == (
        dt.datetime(2024, 6, 1), dt.datetime(2024, 6, 2, 23, 59, 59))
    assert weekend.fields["website"] == "https://books.example.org/weekend"
    assert series.line == 33 and _line("apple_book_club.ics", 33) == "BEGIN:VEVENT"
    assert batch.problems == []  # the alarm is a personal reminder, not the event's


def test_meetup_venue_in_parentheses_and_an_online_event() -> None:
    batch = _read("meetup_python.ics")
    talks, sprint = _events(batch)
    assert _linked(batch, talks.fields["venue"]) == {
        "venue": "Factory Hall", "address": "Lohmühlenstraße 65, Berlin, Germany",
        "geo_lat": 52.4987, "geo_lng": 13.4481}
    assert talks.fields["website"] == "https://www.meetup.com/python-example/events/299999999/"
    assert sprint.fields["online_url"] == "https://meet.example.org/python-sprint"
    assert "venue" not in sprint.fields


def test_outlook_windows_zone_names_and_made_up_tzids() -> None:
    batch = _read("outlook_windows_zones.ics")
    meeting, call, holiday = _events(batch)
    assert meeting.fields["timezone"] == "Europe/Berlin"  # W. Europe Standard Time
    assert call.fields["timezone"] == "America/New_York"  # Eastern Standard Time
    block = meeting.fields["recurrence"]
    # UNTIL=20240625T070000Z is 09:00 in Berlin
    assert block["rrule"] == "FREQ=WEEKLY;UNTIL=20240625T090000;INTERVAL=1;BYDAY=TU;WKST=MO"
    assert block["exdate"] == [dt.datetime(2024, 4, 23, 9)]
    assert block["changes"]["2024-05-14 09:00:00"]["start_date"] == dt.datetime(2024, 5, 14, 14)
    assert holiday.fields["all_day"] and "timezone" not in holiday.fields
    [choir] = _events(_read("outlook_desktop_custom_tzid.ics"))
    assert choir.fields["timezone"] in ("Europe/Amsterdam", "Europe/Berlin", "Europe/Rome",
                                        "Europe/Stockholm", "Europe/Vienna", "Europe/Zurich")
    assert choir.fields["start_date"] == dt.datetime(2024, 1, 17, 19, 30)


def test_windows_names_come_from_the_whole_cldr_table() -> None:
    from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

    from calendar_app.importing import ics_zones

    unknown = [w for w in WINDOWS_TO_OLSON if ics_zones.iana_name(w) is None]
    assert len(WINDOWS_TO_OLSON) > 130 and unknown == []
    assert ics_zones.iana_name("Tokyo Standard Time") == "Asia/Tokyo"
    assert ics_zones.iana_name("/mozilla.org/20050126_1/Europe/Berlin") == "Europe/Berlin"
    assert ics_zones.iana_name("tzone://Microsoft/Utc") == "UTC"
    assert ics_zones.iana_name("Mars/Olympus_Mons") is None


def test_plugin_export_keeps_slug_id_image_organizer_categories() -> None:
    batch = _read("tec_plugin_export.ics")
    jazz, market = _events(batch)
    assert jazz.fields["id"] == 1234 and jazz.fields["slug"] == "winter-jazz-night"
    assert "website" not in jazz.fields  # URL is the event's page on that site
    assert jazz.fields["image"] == (
        "https://arts.example.org/wp-content/uploads/2024/11/jazz.jpg")
    assert [_linked(batch, r) for r in jazz.fields["organizer"]] == [
        {"organizer": "Inland Jazz Society", "email": "info@jazz.example.org"}]
    assert [_linked(batch, r)["name"] for r in jazz.fields["categories"]] == ["Music", "Jazz"]
    assert "timezone" not in jazz.fields  # the calendar's own zone
    assert market.fields["id"] == 1240 and market.fields["end_date"] == dt.datetime(
        2024, 12, 15, 23, 59, 59)


def test_gancio_and_mobilizon_utc_times_in_the_calendar_zone() -> None:
    gancio = _events(_read("gancio_feed.ics"))
    # 17:00 UTC is 10:00 in Los Angeles (summer time began on 10 March)
    assert gancio[0].fields["start_date"] == dt.datetime(2024, 3, 15, 10)
    assert "timezone" not in gancio[0].fields
    assert gancio[0].fields["venue"] == gancio[1].fields["venue"]  # one venue, reused
    batch = _read("mobilizon_group.ics")
    workshop, cancelled = _events(batch)
    assert [_linked(batch, r) for r in workshop.fields["organizer"]] == [
        {"organizer": "Collectif Vélo"}]
    assert workshop.fields["image"] == "https://mobilizon.example.org/media/8d2d1c3e.png"
    # STATUS:CANCELLED is the event status now that events have one (issue 25)
    assert cancelled.fields["event_status"] == "canceled"
    assert batch.problems == []


def test_cancelled_event_sets_event_status_when_the_resource_has_it(monkeypatch) -> None:
    """Issue 25 adds `event_status`; the reader asks the resource description."""
    import dataclasses

    from calendar_app.model import resources

    events = resources.RESOURCES["events"]
    status = resources.Field("event_status", resources.Choice(("scheduled", "canceled")),
                             "the event status")
    monkeypatch.setitem(resources.RESOURCES, "events",
                        dataclasses.replace(events, fields=events.fields + (status,),
                                            _index={}))
    batch = _read("mobilizon_group.ics")
    assert _events(batch)[1].fields["event_status"] == "canceled"
    assert "event_status" not in _events(batch)[0].fields
    assert batch.problems == []


def test_nextcloud_cancelled_date_and_own_organizer() -> None:
    batch = _read("nextcloud_repair_cafe.ics")
    [cafe] = _events(batch)
    block = cafe.fields["recurrence"]
    assert block["changes"] == {"2024-06-07 18:00:00": {"cancelled": True}}
    assert block["exdate"] == [dt.datetime(2024, 5, 3, 18)]
    assert cafe.fields["description"] == "Bring broken things; we fix them together."


def test_x_wr_timezone_places_utc_times_in_that_zone() -> None:
    batch = _read("x_wr_timezone_simple_events_issue_59.ics")  # X-WR-TIMEZONE: New York
    first, second = _events(batch)
    assert first.fields["timezone"] == second.fields["timezone"] == "America/New_York"
    assert first.fields["start_date"] == dt.datetime(2021, 12, 22, 12)  # 17:00Z


# ------------------------------------------------------------------ reported problems
def _calendar(*lines: str, head: tuple[str, ...] = ()) -> bytes:
    return "\r\n".join(("BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *head,
                        *lines, "END:VCALENDAR", "")).encode()


def _vevent(*lines: str, uid: str = "a@test") -> tuple[str, ...]:
    return ("BEGIN:VEVENT", f"UID:{uid}", "SUMMARY:Class", "DTSTART:20270301T190000",
            "DTEND:20270301T210000", *lines, "END:VEVENT")


@pytest.mark.parametrize("rule,why", [
    ("FREQ=HOURLY;COUNT=3", "FREQ=HOURLY is not supported"),
    ("FREQ=DAILY;BYHOUR=9,17", "BYHOUR"),
    ("FREQ=MINUTELY", "FREQ=MINUTELY"),
    ("FREQ=WEEKLY;INTERVAL=0", "INTERVAL must be 1 or more"),
    ("FREQ=YEARLY;BYWEEKNO=53;BYMONTH=6", "gives no date"),
])
def test_rules_our_files_refuse_leave_the_first_date_and_a_problem(rule: str,
                                                                     why: str) -> None:
    batch = read_ics(_calendar(*_vevent(f"RRULE:{rule}")), "x.ics", "UTC")
    [event] = _events(batch)
    assert "recurrence" not in event.fields
    assert event.fields["start_date"] == dt.datetime(2027, 3, 1, 19)
    [problem] = batch.problems
    assert why in problem.message and "only the first date" in problem.message
    assert problem.line == 9  # the RRULE line


def test_what_has_no_place_here_is_reported_per_vevent_with_its_line() -> None:
    data = _calendar(*_vevent(
        "ATTENDEE;CN=Ann:mailto:ann@example.org", "ATTENDEE;CN=Bob:mailto:bob@example.org",
        "RESOURCES:Projector", "EXDATE:20270309T190000", "RRULE:FREQ=WEEKLY;COUNT=3",
        "ATTACH:https://example.org/agenda.pdf", "URL:ftp://example.org/x",
        "X-PRIVATE-THING:kept quiet", "GEO:48.1;11.5"))
    batch = read_ics(data, "x.ics", "UTC")
    lines = data.decode().split("\r\n")
    found = {p.message.split(" ")[0]: lines[p.line - 1].split(":")[0].split(";")[0]
             for p in batch.problems}
    assert found == {"2": "ATTENDEE", "RESOURCES": "RESOURCES", "EXDATE": "EXDATE",
                     "ATTACH": "ATTACH", "URL": "URL", "GEO": "GEO"}
    assert all(p.source_id == "a@test" for p in batch.problems)


def test_dates_the_calendar_cannot_hold_are_problems_with_their_line() -> None:
    data = _calendar(
        "BEGIN:VEVENT", "UID:old", "SUMMARY:Too old", "DTSTART:09990101T100000",
        "END:VEVENT", *_vevent("RDATE:99991231T190000", uid="far"),
        "BEGIN:VEVENT", "UID:ok", "SUMMARY:Fine", "DTSTART;VALUE=DATE:20270101", "END:VEVENT")
    batch = read_ics(data, "x.ics", "UTC")
    assert [e.source_id for e in _events(batch)] == ["far", "ok"]
    too_old, far = batch.problems
    assert (too_old.source_id, too_old.line) == ("old", 7)
    assert "years 1000 to 9998" in too_old.message and "not imported" in too_old.message
    assert far.source_id == "far" and far.line == 14  # the RDATE line
    assert "only the first date" in far.message
    assert "recurrence" not in _events(batch)[0].fields


def test_override_without_its_series_is_an_event_of_its_own() -> None:
    data = _calendar("BEGIN:VEVENT", "UID:s", "SUMMARY:Invited once",
                     "RECURRENCE-ID:20270308T190000Z", "DTSTART:20270308T200000Z",
                     "DTEND:20270308T210000Z", "END:VEVENT")
    [event] = _events(read_ics(data, "x.ics", "UTC"))
    assert event.source_id == "s/20270308T190000Z"
    assert event.fields["start_date"] == dt.datetime(2027, 3, 8, 20)


def test_missing_uid_gives_a_stable_source_id() -> None:
    data = _calendar("BEGIN:VEVENT", "SUMMARY:No uid", "DTSTART:20270308T190000",
                     "END:VEVENT")
    first, again = (_events(read_ics(data, "x.ics", "UTC"))[0] for _ in range(2))
    assert first.source_id == again.source_id and first.source_id.startswith("no-uid-")


def test_one_dates_organizers_and_categories_are_the_series_and_said_so() -> None:
    data = _calendar(*_vevent("RRULE:FREQ=WEEKLY;COUNT=3", "CATEGORIES:Music",
                              "ORGANIZER;CN=Ann:mailto:ann@example.org"),
                     "BEGIN:VEVENT", "UID:a@test", "RECURRENCE-ID:20270308T190000",
                     "SUMMARY:Class (guest teacher)", "DTSTART:20270308T190000",
                     "DTEND:20270308T210000", "CATEGORIES:Theatre",
                     "ORGANIZER;CN=Bob:mailto:bob@example.org", "END:VEVENT")
    batch = read_ics(data, "x.ics", "UTC")
    [event] = _events(batch)
    assert event.fields["recurrence"]["changes"] == {
        "2027-03-08 19:00:00": {"title": "Class (guest teacher)"}}
    lines = data.decode().split("\r\n")
    assert sorted(lines[p.line - 1].split(";")[0].split(":")[0] for p in batch.problems) == [
        "CATEGORIES", "ORGANIZER"]


def test_to_dos_and_unknown_calendar_zones_are_reported_with_their_line() -> None:
    data = _calendar("BEGIN:VTODO", "UID:t", "SUMMARY:Buy paint", "END:VTODO",
                     *_vevent(), head=("X-WR-TIMEZONE:Middle/Earth",))
    batch = read_ics(data, "x.ics", "UTC")
    assert len(_events(batch)) == 1
    assert [(p.message, p.line) for p in batch.problems] == [
        ("VTODO: only events (VEVENT) are imported", 5),
        (("X-WR-TIMEZONE 'Middle/Earth' is no time zone known here: its times are read in "
         "the calendar's zone"), 4)]


def test_one_date_at_another_place_is_reported_not_written_as_a_link() -> None:
    batch = _read("three_events_one_edited.ics")  # Nextcloud: one date with a LOCATION
    [event] = _events(batch)
    assert all("venue" not in c for c in event.fields["recurrence"]["changes"].values())
    assert [r.collection for r in batch.records] == ["events"]  # no venue made for it
    [problem] = batch.problems
    assert "LOCATION 'location' differs from the series'" in problem.message
    assert _line("three_events_one_edited.ics", problem.line) == "LOCATION:location"
