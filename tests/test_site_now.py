"""Never stale: a page built on one day and read on a later one, in Chromium with a
faked clock. now.js hides the events that have ended from upcoming lists, moves the
month grid's "Today" and points the header's "Month" link at the real month; on the
build day it changes nothing."""

from __future__ import annotations

import datetime as dt
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import sitebuilds
import yaml
from conftest import heard

REPO = Path(__file__).resolve().parent.parent
BUILT = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sitebuilds.sample_site(tmp_path_factory)  # built at conftest.NOW, which is BUILT


@pytest.fixture(scope="module")
def tokyo(clocked_page):
    """The process's clocked tab (conftest) in a zone that is not the calendar's, set
    for the module by a DevTools session as a context's timezone_id sets it (the
    override ends with the session), and what its pages report (`heard`)."""
    chromium = clocked_page.context.new_cdp_session(clocked_page)
    chromium.send("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    assert clocked_page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") == (
        "Asia/Tokyo")
    clocked_page.set_viewport_size({"width": 1280, "height": 720})
    with heard(clocked_page) as problems:
        yield clocked_page, problems
    chromium.detach()


@pytest.fixture
def read_at(tokyo):
    """Open a built page in the module's tab, its clock set to `moment` first (each page
    is read before the next one is opened)."""
    tab, problems = tokyo
    problems.clear()

    def open_page(site: Path, path: str, moment: dt.datetime):
        tab.clock.set_fixed_time(moment)
        tab.goto((site / path).as_uri())
        return tab

    yield open_page
    assert problems == []


def visible_titles(tab) -> list[str]:
    return tab.locator("li:not([hidden]) > article .event-title").all_inner_texts()


def month_link(tab) -> str:
    return tab.locator("a[data-month-link]").get_attribute("href")


def test_build_day_is_left_as_built(site: Path, read_at) -> None:
    tab = read_at(site, "events/list/index.html", BUILT)
    assert len(visible_titles(tab)) == 10
    assert tab.locator(".ended-note").is_hidden()
    assert month_link(tab) == "../../events/month/2026-11/index.html"
    grid = read_at(site, "events/month/2026-11/index.html", BUILT)
    assert grid.locator("td.today").get_attribute("data-date") == "2026-11-21"
    assert grid.locator(".today-label").count() == 1


def test_ended_events_leave_upcoming_lists(site: Path, read_at) -> None:
    # Dec 14, 2026, 12:00 Pacific: the market (Dec 5-6), the showcase (Dec 10) and the
    # sing-along (Dec 13) have ended since the build.
    later = dt.datetime(2026, 12, 14, 20, 0, tzinfo=dt.UTC)
    tab = read_at(site, "events/list/index.html", later)
    titles = visible_titles(tab)
    assert len(titles) == 7
    assert titles[0] == "Winter Solstice Lantern Walk"
    assert "December Makers Market" not in titles
    note = tab.locator(".ended-note")
    assert note.is_visible()
    assert "ended since this page was published: 3 events." in note.inner_text()
    assert note.locator("a").get_attribute("href") == "../../events/past/index.html"
    # The venue page of the sing-along: its one ended event gone, the heading too when
    # its month has nothing left.
    venue = read_at(site, "venue/magnolia-arts-center/index.html", later)
    assert "Holiday Messiah Sing-Along" not in visible_titles(venue)
    assert "1 event." in venue.locator(".ended-note").inner_text()
    headings = venue.locator(".month-separator:not([hidden])").all_inner_texts()
    assert "December 2026" not in headings and headings[0] == "January 2027"
    # Day pages are not lists of upcoming events: left as they are.
    day = read_at(site, "events/2026-12-13/index.html", later)
    assert visible_titles(day) == ["Holiday Messiah Sing-Along"]


def test_today_and_month_link_follow_the_calendar_zone(site: Path, read_at) -> None:
    # 05:00 UTC on Dec 15 is still Dec 14 in Los Angeles (the calendar's zone), and
    # already the afternoon of Dec 15 for this reader in Tokyo.
    moment = dt.datetime(2026, 12, 15, 5, 0, tzinfo=dt.UTC)
    grid = read_at(site, "events/month/2026-12/index.html", moment)
    today = grid.locator("td.today")
    assert today.count() == 1
    assert today.get_attribute("data-date") == "2026-12-14"
    assert today.get_attribute("aria-current") == "date"
    assert today.locator(".today-label").inner_text().lower() == "today"
    assert month_link(grid) == "../../../events/month/2026-12/index.html"
    # The month built with "Today" on Nov 21 loses it.
    november = read_at(site, "events/month/2026-11/index.html", moment)
    assert november.locator("td.today").count() == 0
    assert november.locator(".today-label").count() == 0
    assert november.locator("[aria-current=date]").count() == 0
    # Every page's header, at any depth.
    event = read_at(site, "event/holiday-messiah-sing-along-2026/index.html", moment)
    assert month_link(event) == "../../events/month/2026-12/index.html"


def test_month_link_stays_within_the_built_months(site: Path, read_at) -> None:
    # Years on, past the last event: the last month that has a page.
    tab = read_at(site, "index.html", dt.datetime(2031, 3, 1, tzinfo=dt.UTC))
    assert month_link(tab) == "events/month/2028-06/index.html"
    assert (site / "events/month/2028-06/index.html").exists()


def test_nightly_rebuild_example_builds(tmp_path: Path) -> None:
    """docs/ci/site-nightly.yml: a daily schedule, and its build step runs as written."""
    workflow = yaml.safe_load((REPO / "docs/ci/site-nightly.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    minute, hour, *every_day = triggers["schedule"][0]["cron"].split()
    assert every_day == ["*", "*", "*"] and 0 <= int(hour) < 24 and 0 <= int(minute) < 60
    steps = workflow["jobs"]["build"]["steps"]
    command = shlex.split(next(s["run"] for s in steps if s.get("name") == "Build the site"))
    assert command[:2] == ["calendar-app", "build"]
    sitebuilds.small_sample(tmp_path / "content")  # the step is checked, not the size
    result = subprocess.run([sys.executable, "-m", "calendar_app", *command[1:]],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "public/events/search/search-index.js").exists()
    assert (tmp_path / "public/assets/now.js").exists()


def test_ended_dates_leave_a_series_upcoming_dates(site: Path, read_at) -> None:
    # The pottery class's dates: Mar 2, 9, 23, 30, Apr 6, 13, 20 2027 (19:00-21:00
    # Pacific). Read on Mar 24: the first three have ended.
    path = "event/beginners-pottery-class-2027/index.html"
    dates = "section.event-dates li:not([hidden]) time"
    assert len(read_at(site, path, BUILT).locator(dates).all()) == 7
    later = dt.datetime(2027, 3, 24, 12, 0, tzinfo=dt.UTC)
    shown = [t.get_attribute("datetime") for t in read_at(site, path, later).locator(dates).all()]
    assert shown == ["2027-03-30T19:00:00-07:00", "2027-04-06T19:00:00-07:00",
                     "2027-04-13T19:00:00-07:00", "2027-04-20T19:00:00-07:00"]
