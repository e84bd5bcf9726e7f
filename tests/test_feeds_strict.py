"""Feeds no calendar app rejects (issue 25, 6): every .ics of a site with series that
span years, bounded and endless, checked strictly (tests/ical_strict.py): each TZID's
VTIMEZONE covers every date the feed holds, one ORGANIZER per VEVENT."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLE, site_options
from ical_strict import check_feed

from calendar_app.site import build, ical

# Until 2031 (bounded, past the horizon), and an endless one, in a zone with summer
# time, with a date moved into another year and an extra date.
BOUNDED = """\
id: 960
title: Yearly Lantern Parade
slug: yearly-lantern-parade
status: publish
start_date: 2026-12-05 18:00:00
end_date: 2026-12-05 20:00:00
timezone: Europe/Berlin
venue: the-blue-lantern
organizers:
  - riverside-jazz-collective
  - inland-chamber-players
recurrence:
  rrule: FREQ=YEARLY;UNTIL=20311205T170000Z
  rdate:
    - 2033-07-01 18:00:00
"""
ENDLESS = """\
id: 961
title: Monthly Night Walk
slug: monthly-night-walk
status: publish
start_date: 2026-12-10 19:00:00
end_date: 2026-12-10 21:00:00
timezone: Australia/Sydney
venue: the-blue-lantern
recurrence:
  rrule: FREQ=MONTHLY;BYMONTHDAY=10
"""
ENDLESS_UNTIL = dt.datetime(2028, 12, 31, 23, 59)  # NOW + 730 days, to the year's end


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("strict")
    shutil.copytree(SAMPLE, tmp / "content")
    (tmp / "content/events/2026/yearly-lantern-parade.yaml").write_text(BOUNDED)
    (tmp / "content/events/2026/monthly-night-walk.yaml").write_text(ENDLESS)
    report = build(site_options(tmp / "content", tmp / "public", tmp / "cache"))
    assert not report.problems
    return tmp / "public"


def test_every_feed_passes_the_strict_check(site: Path) -> None:
    feeds = sorted(site.rglob("*.ics"))
    assert len(feeds) > 50
    for feed in feeds:
        check_feed(feed.read_bytes(), ENDLESS_UNTIL, str(feed))


def test_a_series_zone_is_described_through_its_last_date(site: Path) -> None:
    data = (site / "event/yearly-lantern-parade/event.ics").read_bytes()
    calendar = check_feed(data, ENDLESS_UNTIL)
    (zone,) = calendar.walk("VTIMEZONE")
    assert str(zone["TZID"]) == "Europe/Berlin"
    assert "to 2034-01-01" in str(zone["COMMENT"])  # the extra date of 2033
    (event,) = calendar.walk("VEVENT")
    # RFC 5545 3.6.1: one ORGANIZER; the second organizer with an address attends.
    assert not isinstance(event["ORGANIZER"], list)
    walk = check_feed((site / "calendar.ics").read_bytes(), ENDLESS_UNTIL)
    zones = {str(z["TZID"]): str(z.get("COMMENT", "")) for z in walk.walk("VTIMEZONE")}
    assert "to 2029-01-01" in zones["Australia/Sydney"]  # the horizon's year


def test_the_check_refuses_a_date_its_zone_does_not_cover(site: Path) -> None:
    """The old span (the first date's years only) fails the check: it can fail."""
    data = (site / "event/yearly-lantern-parade/event.ics").read_bytes()
    narrow = ical.vtimezone("Europe/Berlin", 2026, 2026)
    start = data.index(b"BEGIN:VTIMEZONE")
    end = data.index(b"END:VTIMEZONE\r\n") + len(b"END:VTIMEZONE\r\n")
    with pytest.raises(AssertionError, match="(?i)outside Europe/Berlin's VTIMEZONE"):
        check_feed(data[:start] + narrow + data[end:], ENDLESS_UNTIL)
    with pytest.raises(AssertionError, match="with no VTIMEZONE"):
        check_feed(data[:start] + data[end:], ENDLESS_UNTIL)
    two = data.replace(b"ATTENDEE;ROLE=NON-PARTICIPANT;", b"ORGANIZER;")
    assert two != data
    with pytest.raises(AssertionError, match="ORGANIZER more than once"):
        check_feed(two, ENDLESS_UNTIL)
