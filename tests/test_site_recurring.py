"""Recurring events on the static site: every listed occurrence on its day, in the month
grid, the lists, term pages and search; a page per occurrence with its own JSON-LD; the
series' upcoming dates; feeds with one VEVENT per series; incremental builds."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import icalendar
import pytest
from conftest import compiled_templates
from schemaorg_check import check
from sitebuilds import small_sample

from calendar_app.site import Builder, Options, build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://calendar.example.org/"
SLUG = "thursday-sketch-club"
RELPATH = f"events/2027/{SLUG}.yaml"

# Thursdays at 18:00 in the calendar's zone (Los Angeles): Feb 4, 11 (excluded),
# 18 (moved to Friday 19 at 17:30, retitled), 25 (cancelled), Mar 4 (another venue), 11.
SERIES = """\
id: 950
title: Thursday Sketch Club
slug: thursday-sketch-club
status: publish
author: 1
date: 2026-11-01 10:00:00
modified: 2026-11-02 10:00:00
start_date: 2027-02-04 18:00:00
end_date: 2027-02-04 20:00:00
venue: the-blue-lantern
categories:
  - classes-workshops
excerpt: Bring a pencil.
recurrence:
  rrule: FREQ=WEEKLY;BYDAY=TH;COUNT=6
  exdate:
    - 2027-02-11 18:00:00
  changes:
    '2027-02-18 18:00:00':
      title: Sketch Club (Friday session)
      start_date: 2027-02-19 17:30:00
    '2027-02-25 18:00:00':
      cancelled: true
    '2027-03-04 18:00:00':
      venue: magnolia-arts-center
"""
LISTED = ["2027-02-04", "2027-02-19", "2027-03-04", "2027-03-11"]


def options(content: Path, out: Path, cache: Path) -> Options:
    return Options(content=content, out=out, now=NOW, base_url=BASE_URL, cache_dir=cache,
                   progress=False, compiled_templates=compiled_templates())


def make_content(target: Path, small: bool = False) -> Path:
    """The sample (with `small`, sitebuilds' small calendar: for checks that do not
    depend on the calendar's size) and the series."""
    if small:
        small_sample(target)
    else:
        shutil.copytree(REPO / "content", target)
    (target / RELPATH).parent.mkdir(parents=True, exist_ok=True)
    (target / RELPATH).write_text(SERIES)
    return target


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("recurring")
    report = build(options(make_content(tmp / "content"), tmp / "public", tmp / "cache"))
    assert report.written and not report.problems
    return tmp / "public"


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def occurrence_links(html: str) -> list[str]:
    """The occurrence pages of the series a page links to, in order, repeats kept."""
    return re.findall(rf'href="[./]*event/{SLUG}/(\d{{4}}-\d\d-\d\d)/index\.html"', html)


def json_ld(html: str) -> dict:
    (found,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html,
                          re.DOTALL)
    return json.loads(found)


def test_each_occurrence_has_a_page_and_no_other_date_does(site: Path) -> None:
    folder = site / "event" / SLUG
    assert sorted(p.name for p in folder.iterdir()) == [*LISTED, "event.ics", "index.html"]


def test_day_pages_show_each_listed_occurrence_at_its_own_time(site: Path) -> None:
    assert occurrence_links(read(site, "events/2027-02-04/index.html")) == ["2027-02-04"]
    moved = read(site, "events/2027-02-19/index.html")
    assert occurrence_links(moved) == ["2027-02-19"]
    assert "Sketch Club (Friday session)" in moved
    assert 'datetime="2027-02-19T17:30:00-08:00"' in moved
    assert occurrence_links(read(site, "events/2027-03-11/index.html")) == ["2027-03-11"]
    # Excluded, moved away and cancelled: not on those days (the page may not exist).
    for day in ("2027-02-11", "2027-02-18", "2027-02-25"):
        page = site / "events" / day / "index.html"
        assert not page.exists() or SLUG not in page.read_text(encoding="utf-8")


def test_month_grid_and_phone_list_show_every_date(site: Path) -> None:
    february = read(site, "events/month/2027-02/index.html")
    # Each listed date once in the grid and once in the phone list; the grid also shows
    # the days of March in its last week (Sunday first, as the sample's calendar.yaml
    # says: March 4 too, in the grid alone).
    assert sorted(set(occurrence_links(february))) == ["2027-02-04", "2027-02-19",
                                                       "2027-03-04"]
    assert occurrence_links(february).count("2027-03-04") == 1
    assert occurrence_links(february).count("2027-02-04") == 2
    assert occurrence_links(february).count("2027-02-19") == 2
    march = read(site, "events/month/2027-03/index.html")
    assert sorted(set(occurrence_links(march))) == ["2027-03-04", "2027-03-11"]


def test_occurrence_pages_carry_their_own_dates_and_json_ld(site: Path) -> None:
    html = read(site, f"event/{SLUG}/2027-02-19/index.html")
    ld = json_ld(html)
    assert [f for f in check(ld) if f.severity == "error"] == []
    assert (ld["name"], ld["startDate"], ld["endDate"], ld["url"]) == (
        "Sketch Club (Friday session)", "2027-02-19T17:30:00-08:00",
        "2027-02-19T19:30:00-08:00", f"{BASE_URL}event/{SLUG}/2027-02-19/")
    assert f'<link rel="canonical" href="{BASE_URL}event/{SLUG}/2027-02-19/">' in html
    assert "<h1 id=\"event-title\">Sketch Club (Friday session)</h1>" in html
    other_venue = json_ld(read(site, f"event/{SLUG}/2027-03-04/index.html"))
    assert [f for f in check(other_venue) if f.severity == "error"] == []
    assert other_venue["startDate"] == "2027-03-04T18:00:00-08:00"
    assert other_venue["location"]["url"] == f"{BASE_URL}venue/magnolia-arts-center/"
    # Downloading an occurrence gives the series (the rule), which exists.
    assert f'href="../../../event/{SLUG}/event.ics" download' in html


def test_series_and_occurrence_pages_list_the_upcoming_dates(site: Path) -> None:
    for path in (f"event/{SLUG}/index.html", f"event/{SLUG}/2027-03-11/index.html"):
        html = read(site, path)
        section = html.split('<h2 id="dates-heading">Upcoming dates</h2>', 1)[1]
        section = section.split("</section>", 1)[0]
        assert occurrence_links(section) == LISTED, path
        assert "(Sketch Club (Friday session))" in section
    current = read(site, f"event/{SLUG}/2027-03-11/index.html")
    assert (f'<a href="../../../event/{SLUG}/2027-03-11/index.html" aria-current="page">'
            in current)
    # The series' page keeps its own first date and does not call its first
    # occurrence the "next event".
    series = read(site, f"event/{SLUG}/index.html")
    assert json_ld(series)["startDate"] == "2027-02-04T18:00:00-08:00"
    nav = series.split('class="event-nav"', 1)[1]
    assert occurrence_links(nav) == []


def test_more_than_ten_dates_are_counted(tmp_path: Path) -> None:
    content = make_content(tmp_path / "content")
    (content / RELPATH).write_text(SERIES.replace("COUNT=6", "COUNT=20"))
    build(options(content, tmp_path / "public", tmp_path / "cache"))
    html = read(tmp_path / "public", f"event/{SLUG}/index.html")
    section = html.split('<h2 id="dates-heading">', 1)[1].split("</section>", 1)[0]
    # 20 dates, one excluded and one cancelled: 18 listed, 10 shown.
    assert len(occurrence_links(section)) == 10
    assert "<p>And 8 more dates.</p>" in section


def test_lists_terms_and_search_hold_each_occurrence(site: Path) -> None:
    listed = "".join(p.read_text(encoding="utf-8")
                     for p in (site / "events/list").rglob("index.html"))
    assert sorted(set(occurrence_links(listed))) == LISTED
    lantern = "".join(p.read_text(encoding="utf-8")
                      for p in (site / "venue/the-blue-lantern").rglob("index.html"))
    assert sorted(set(occurrence_links(lantern))) == ["2027-02-04", "2027-02-19", "2027-03-11"]
    magnolia = "".join(p.read_text(encoding="utf-8")
                       for p in (site / "venue/magnolia-arts-center").rglob("index.html"))
    assert sorted(set(occurrence_links(magnolia))) == ["2027-03-04"]
    index = read(site, "events/search/search-index.js")
    assert sorted(re.findall(rf'"event/{SLUG}/([\d-]+)/"', index)) == LISTED


def test_feeds_keep_one_vevent_per_series(site: Path) -> None:
    cal = icalendar.Calendar.from_ical(read(site, "calendar.ics"))
    ours = [v for v in cal.walk("VEVENT") if str(v.get("SUMMARY", "")).find("Sketch") >= 0]
    assert len({str(v["UID"]) for v in ours}) == 1
    # The series with its rule, and the two changed dates (moved, other venue).
    assert sorted(str(v.get("RECURRENCE-ID").dt) if v.get("RECURRENCE-ID") else "series"
                  for v in ours) == ["2027-02-18 18:00:00-08:00", "2027-03-04 18:00:00-08:00",
                                     "series"]
    term = icalendar.Calendar.from_ical(
        read(site, "venue/the-blue-lantern/calendar.ics"))
    assert len([v for v in term.walk("VEVENT") if "RRULE" in v
                and "Sketch" in str(v["SUMMARY"])]) == 1
    atom = ET.fromstring(read(site, "feed.xml"))
    links = [e.get("href") for e in atom.iter("{http://www.w3.org/2005/Atom}link")]
    assert [x for x in links if SLUG in x] == [f"{BASE_URL}event/{SLUG}/2027-02-04/"]
    sitemap = read(site, "sitemap.xml")
    for day in LISTED:
        assert f"<loc>{BASE_URL}event/{SLUG}/{day}/</loc>" in sitemap


def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_rule_edits_under_a_running_builder_match_a_full_build(tmp_path: Path) -> None:
    content = make_content(tmp_path / "content", small=True)
    out = tmp_path / "a"
    builder = Builder(options(content, out, tmp_path / "cache"))
    series = content / RELPATH
    try:
        builder.build()
        for old, new, pages in (
                ("COUNT=6", "COUNT=8", [*LISTED, "2027-03-18", "2027-03-25"]),
                ("BYDAY=TH;COUNT=8", "BYDAY=TH;COUNT=8;INTERVAL=2",
                 ["2027-02-04", "2027-02-18", "2027-03-04", "2027-03-18", "2027-04-01", "2027-04-15",
                  "2027-04-29", "2027-05-13"]),
                ("title: Thursday Sketch Club", "title: Sketch Club", None)):
            text = series.read_text()
            assert old in text
            if new.endswith("INTERVAL=2"):  # the changed dates are no longer the rule's
                text = text.split("  exdate:")[0]
                text += ("  changes:\n    '2027-03-04 18:00:00':\n"
                         "      venue: magnolia-arts-center\n")
            series.write_text(text.replace(old, new))
            builder.reader.catalog.refresh([RELPATH])
            report = builder.build()
            assert report.written and not report.problems, report.problems
            if pages is not None:
                assert sorted(p.name for p in (out / "event" / SLUG).iterdir()
                              if p.is_dir()) == pages
            fresh = tmp_path / f"full-{new}"
            build(options(content, fresh, tmp_path / "other"))
            assert tree_bytes(out) == tree_bytes(fresh), new
        assert "Sketch Club</h1>" in read(out, f"event/{SLUG}/2027-05-13/index.html")
    finally:
        builder.close()


def test_an_occurrence_page_offers_this_date_alone_and_the_series(site: Path) -> None:
    html = read(site, f"event/{SLUG}/2027-02-19/index.html")
    assert ('<a class="button" href="event.ics" download>Download .ics: this date</a>'
            in html)
    assert (f'<a class="button" href="../../../event/{SLUG}/event.ics" download>'
            "Download .ics: all dates</a>") in html
    one = icalendar.Calendar.from_ical((site / f"event/{SLUG}/2027-02-19/event.ics").read_bytes())
    (vevent,) = one.walk("VEVENT")
    assert str(vevent["SUMMARY"]) == "Sketch Club (Friday session)"
    assert vevent["DTSTART"].dt.isoformat() == "2027-02-19T17:30:00-08:00"
    # Its own UID (the occurrence's id), no rule: a calendar app keeps it apart from
    # the series a reader may have added too.
    assert not {"RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"} & set(vevent)
    series = icalendar.Calendar.from_ical((site / f"event/{SLUG}/event.ics").read_bytes())
    assert str(vevent["UID"]) not in {str(e["UID"]) for e in series.walk("VEVENT")}
    # A single event's page keeps its one button.
    single = read(site, "event/jazz-night-april-2027/index.html")
    assert "Download .ics</a>" in single and "this date" not in single


def test_lists_and_the_grid_mark_repeating_dates(site: Path) -> None:
    mark = '<span class="recurring-mark" title="Repeating event">'
    upcoming = "".join(p.read_text(encoding="utf-8")
                       for p in (site / "venue/the-blue-lantern").rglob("index.html"))
    item = upcoming.split(f"event/{SLUG}/2027-02-04/index.html", 1)[1].split("</h", 1)[0]
    assert mark in item
    february = read(site, "events/month/2027-02/index.html")
    chip = february.split(f"event/{SLUG}/2027-02-04/index.html", 1)[1].split("</li>", 1)[0]
    assert mark in chip and "(repeating event)" in chip
    # A single event carries none.
    april = read(site, "events/month/2027-04/index.html")
    chip = april.split("event/jazz-night-april-2027/index.html", 1)[1].split("</li>", 1)[0]
    assert mark not in chip
