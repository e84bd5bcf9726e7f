"""`export ics` (calendar_app/site/export.py): the calendar as one iCalendar file,
written by the site's feed writer, and read back (importing/ics.py) as the same events."""

from __future__ import annotations

import datetime as dt
import io
import shutil
from pathlib import Path

import icalendar
import pytest
from conftest import NOW, SAMPLE

from calendar_app.catalog.reader import Reader, open_reader
from calendar_app.importing.batch import Incoming
from calendar_app.importing.ics import read_ics
from calendar_app.model import dates, recurrence
from calendar_app.site.export import export_ics

PAST = """\
id: 5001
title: Past Recital
start_date: 2020-02-01 19:00:00
end_date: 2020-02-01 20:30:00
timezone: Europe/Berlin
categories: [music]
"""


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Reader:
    tmp = tmp_path_factory.mktemp("export")
    shutil.copytree(SAMPLE, tmp / "content")
    (tmp / "content" / "events" / "2020").mkdir()
    (tmp / "content" / "events" / "2020" / "past-recital.yaml").write_text(PAST)
    return open_reader(tmp / "content", tmp / "cache", NOW)


@pytest.fixture(scope="module")
def exported(reader: Reader) -> str:
    return export_ics(reader)


def _published(reader: Reader) -> list:
    return [r for r in reader.catalog.all("events") if r.status == "publish"]


def _plain(text: str) -> str:
    """Titles as the feed writes them: typographic apostrophes (site/model title_text)."""
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _occurrences(fields: dict, zone: dt.tzinfo) -> list[tuple]:
    block = fields.get("recurrence")
    if not block:
        return [(fields["start_date"], fields["end_date"], _plain(fields["title"]))]
    until = fields["start_date"] + dt.timedelta(days=800)
    return [(o.start, o.end, _plain(o.overrides.get("title", fields["title"])))
            for o in recurrence.expand(block, fields["start_date"], fields["end_date"],
                                       until, zone) if not o.cancelled]


def test_export_is_one_calendar_with_every_published_event(reader: Reader,
                                                           exported: str) -> None:
    calendar = icalendar.Calendar.from_ical(exported)
    uids = {str(e["UID"]) for e in calendar.walk("VEVENT")}
    assert uids == {f"{r.id}@calendar.example.org" for r in _published(reader)}
    assert str(calendar["X-WR-CALNAME"]) == "Riverside Arts & Community Calendar"
    assert exported.startswith("BEGIN:VCALENDAR\r\n") and exported.endswith(
        "END:VCALENDAR\r\n")
    # past events too: a feed keeps a window, an export everything
    assert "5001@calendar.example.org" in uids


def test_round_trip_gives_back_the_same_events(reader: Reader, exported: str) -> None:
    settings = reader.catalog.settings
    zone_name = settings["timezone"]
    batch = read_ics(exported.encode(), "export.ics", zone_name)
    assert batch.problems == []
    by_id = {r.fields["id"]: r for r in batch.records if r.collection == "events"}
    records = {(r.collection, r.source_id): r for r in batch.records}
    published = _published(reader)
    assert set(by_id) == {r.id for r in published}
    for record in published:
        incoming: Incoming = by_id[record.id]
        fields = incoming.fields
        assert fields["slug"] == record.slug
        assert _plain(fields["title"]) == _plain(record.data["title"])
        assert fields.get("timezone", zone_name) == record.get("timezone", zone_name)
        assert bool(fields.get("all_day")) == bool(record.get("all_day"))
        zone = dates.zone(record.get("timezone") or zone_name)
        ours, theirs = _occurrences(record.data, zone), _occurrences(fields, zone)
        if record.get("all_day"):  # whole days: the same first and last days
            ours = [(s.date(), e.date(), t) for s, e, t in ours]
            theirs = [(s.date(), e.date(), t) for s, e, t in theirs]
        assert theirs == ours, record.slug
        venue = reader.catalog.resolve("venues", record.get("venue"))
        if venue:
            linked = records[(fields["venue"].collection, fields["venue"].source_id)]
            assert linked.fields["venue"] == venue[0].name
        else:
            assert "venue" not in fields
        names = {c.name for c in reader.catalog.resolve("categories", record.get("categories"))}
        assert {records[("categories", ref.source_id)].fields["name"]
                for ref in fields.get("categories", [])} == names
        organizers = {o.name for o in reader.catalog.resolve("organizers",
                                                             record.get("organizer"))}
        assert {records[("organizers", ref.source_id)].fields["organizer"]
                for ref in fields.get("organizer", [])} == organizers


def test_filters_and_out(reader: Reader) -> None:
    out = io.StringIO()
    text = export_ics(reader, out, categories=["music"])
    assert out.getvalue() == text
    events = icalendar.Calendar.from_ical(text).walk("VEVENT")
    music = {r.id for r in _published(reader) if "music" in (r.get("categories") or [])}
    assert music and {int(str(e["UID"]).split("@")[0]) for e in events} == music
    later = export_ics(reader, since=dt.date(2027, 1, 1))
    for event in icalendar.Calendar.from_ical(later).walk("VEVENT"):
        end = event.end
        assert "RRULE" in event or (end if isinstance(end, dt.date) and not isinstance(
            end, dt.datetime) else end.date()) >= dt.date(2027, 1, 1)
    none = export_ics(reader, until=dt.date(1999, 1, 1))
    assert "BEGIN:VEVENT" not in none and none.endswith("END:VCALENDAR\r\n")


def test_export_of_an_empty_calendar(tmp_path: Path) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "calendar.yaml").write_text("title: Empty\ntimezone: UTC\n")
    text = export_ics(open_reader(tmp_path / "content", tmp_path / "cache", NOW))
    assert "BEGIN:VEVENT" not in text
    assert read_ics(text.encode(), "empty.ics", "UTC").records == []
