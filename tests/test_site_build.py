"""The static site: pages, feeds, snapshots, determinism, incremental builds, broken files."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import icalendar
import pytest
import sitebuilds
from conftest import compiled_templates

from calendar_app.http.app import create_app
from calendar_app.site import Builder, Options, build

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "content"
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://example.org/calendar/"
REST = "wp-json/tribe/events/v1"


def copy_sample(target: Path) -> Path:
    shutil.copytree(SAMPLE, target)
    return target


# Tests whose checks do not depend on the calendar's size build a small one (a fifth of
# the sample's build): the sample's December events and two January jazz nights.
small_sample = sitebuilds.small_sample


def make_options(content: Path, out: Path, tmp: Path, **extra) -> Options:
    return Options(content=content, out=out, now=NOW, base_url=BASE_URL,
                   cache_dir=tmp / "cache", progress=False,
                   compiled_templates=compiled_templates(), **extra)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sitebuilds.sample_site(tmp_path_factory)  # built with the options make_options gives


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


# -- pages ---------------------------------------------------------------------
def test_lists_and_home(site: Path) -> None:
    home = read(site, "index.html")
    assert "Upcoming events" in home and "December Makers Market" in home
    assert (site / "events/list/page/2/index.html").exists()  # 52 events, 10 per page
    assert 'rel="next"' in read(site, "events/list/index.html")
    assert "No past events." in read(site, "events/past/index.html")


def pager(page: str) -> list[str]:
    """The pager's items: page numbers, "…" for a gap, "[n]" for the current page."""
    nav = re.search(r'<nav class="pager".*?</nav>', page, re.DOTALL)
    assert nav
    items = re.findall(r'<li[^>]*>(?:<a href="([^"]*)"( aria-current="page")?[^>]*>'
                       r'([^<]*)</a>|(…))</li>', nav.group(0))
    return [gap or (f"[{text}]" if current else text) for _, current, text, gap in items]


def test_pager_shows_a_window_of_pages(site: Path) -> None:
    # 61 upcoming events (the pottery class's seven dates among them), 10 a page: 7 pages.
    first = read(site, "events/list/index.html")
    assert pager(first) == ["[1]", "2", "3", "…", "7", "Next page →"]
    assert pager(read(site, "events/list/page/4/index.html")) == [
        "← Previous page", "1", "2", "3", "[4]", "5", "6", "7", "Next page →"]
    assert pager(read(site, "events/list/page/7/index.html")) == [
        "← Previous page", "1", "…", "5", "6", "[7]"]
    assert 'href="../../../../events/list/page/3/index.html"' in read(site, "events/list/page/4/index.html")


def day_cell(page: str, date: str) -> str:
    match = re.search(rf'<td [^>]*data-date="{date}".*?</td>', page, re.DOTALL)
    assert match, date
    return match.group(0)


def test_month_grid(site: Path) -> None:
    page = read(site, "events/month/2026-12/index.html")
    assert page.count("<tr>") == 6  # header row + 5 weeks
    assert "Holiday Messiah Sing-Along" in day_cell(page, "2026-12-13")
    assert "Holiday Messiah Sing-Along" not in day_cell(page, "2026-12-14")
    # The sample's weeks start on Sunday (week_start): a Saturday-Sunday event is a
    # piece at the end of one week row and one at the start of the next (more in
    # test_site_grid.py), each wrapping its title, no bar below it.
    assert 'class="lane bar span-1 loose multi-day continues"' in day_cell(page, "2026-12-05")
    assert 'class="lane bar span-1 loose multi-day continued"' in day_cell(page, "2026-12-06")
    assert page.index('data-date="2026-11-29"') < page.index('data-date="2026-11-30"')
    assert '<tr><th scope="col"><abbr title="Sunday">Sun</abbr></th>' in page
    assert 'href="../../../events/month/2027-01/index.html"' in page
    assert 'href="../../../events/month/2026-11/index.html"' in page
    today = read(site, "events/month/2026-11/index.html")
    assert 'aria-current="date"' in day_cell(today, "2026-11-21")
    # Every month from today's to the last event's exists, events or not, so the
    # previous/next links never dead-end.
    months = sorted(p.name for p in (site / "events/month").iterdir())
    assert months[0] == "2026-11"
    year, month = 2026, 11
    for name in months:
        assert name == f"{year:04d}-{month:02d}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    assert 'rel="next"' not in read(site, f"events/month/{months[-1]}/index.html")


def test_day_view(site: Path) -> None:
    page = read(site, "events/2026-12-13/index.html")
    assert "Sunday, December 13, 2026" in page and "Holiday Messiah Sing-Along" in page


def test_event_page(site: Path) -> None:
    page = read(site, "event/holiday-messiah-sing-along-2026/index.html")
    assert "<h1 id=\"event-title\">Holiday Messiah Sing-Along</h1>" in page
    assert "3:00 pm" in page and "PST" in page and "Times are in Pacific Time." in page
    assert "$10 – $25" in page
    assert 'href="event.ics"' in page and "calendar.google.com/calendar/render" in page
    assert "Magnolia Arts Center" in page and "Inland Chamber Players" in page
    assert 'href="../../events/category/music/classical/index.html"' in page
    assert '<link rel="canonical" href="https://example.org/calendar/event/' in page
    ld = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>',
                              page, re.DOTALL).group(1))
    assert ld["@type"] == "Event" and ld["name"] == "Holiday Messiah Sing-Along"
    assert ld["startDate"] == "2026-12-13T15:00:00-08:00"
    assert ld["location"]["@type"] == "Place"
    assert ld["location"]["address"]["@type"] == "PostalAddress"
    assert ld["offers"] == {  # "$10 - $25": a price range
        "@type": "AggregateOffer", "lowPrice": "10", "highPrice": "25", "priceCurrency": "USD",
        "url": BASE_URL + "event/holiday-messiah-sing-along-2026/",
        "availability": "https://schema.org/InStock", "validFrom": ld["offers"]["validFrom"]}
    assert ld["eventStatus"] == "https://schema.org/EventScheduled"
    assert "performer" not in ld
    # The page's permalinks, not the API's (calendar.yaml names another site URL).
    assert ld["url"] == ld["offers"]["url"] == BASE_URL + "event/holiday-messiah-sing-along-2026/"
    assert ld["location"]["url"].startswith(BASE_URL + "venue/")

    def no_empty(value: object) -> None:
        assert value not in ("", [], {})
        for item in value.values() if isinstance(value, dict) else (
                value if isinstance(value, list) else []):
            no_empty(item)
    no_empty(ld)


def test_event_map_link_and_all_day(site: Path) -> None:
    walk = read(site, "event/winter-solstice-lantern-walk-2026/index.html")
    assert "google.com/maps/search" in walk
    market = read(site, "event/december-makers-market-2026/index.html")
    assert "google.com/maps/search" in market  # the flag is unset: on, as the editor's
    matinee = read(site, "event/family-film-matinee-december-2026/index.html")
    assert "google.com/maps/search" not in matinee  # its venue says no
    assert "all day" in market and 'datetime="2026-12-05"' in market
    ld = json.loads(re.search(r'ld\+json">(.*?)</script>', market, re.DOTALL).group(1))
    assert ld["startDate"] == "2026-12-05" and ld["offers"]["price"] == "0"


def test_collection_pages(site: Path) -> None:
    music = read(site, "events/category/music/index.html")
    assert "Subcategories" in music and "Jazz" in music
    assert "Jazz Night" in music  # events of child categories are listed too
    jazz = read(site, "events/category/music/jazz/index.html")
    assert 'aria-label="Breadcrumb"' in jazz
    assert "Upcoming events" in read(site, "venue/the-blue-lantern/index.html")
    assert "hello@riversidejazz.example.org" in read(
        site, "organizer/riverside-jazz-collective/index.html")
    assert (site / "tag/free/index.html").exists()


def test_collection_pages_are_paginated(site: Path) -> None:
    # 23 upcoming events tagged "free", 10 a page.
    first, last = read(site, "tag/free/index.html"), read(site, "tag/free/page/3/index.html")
    assert first.count('class="event-item"') == 10 and last.count('class="event-item"') == 3
    assert pager(first) == ["[1]", "2", "3", "Next page →"]
    assert pager(last) == ["← Previous page", "1", "2", "[3]"]
    assert "<title>Tag: Free (page 3) · " in last
    assert not (site / "tag/free/page/4").exists()
    assert "page/2" not in read(site, "venue/the-blue-lantern/index.html")  # 7 events
    titles = [re.findall(r'class="event-title"><a [^>]*>([^<]*)<', read(site, page))
              for page in ("tag/free/index.html", "tag/free/page/2/index.html",
                           "tag/free/page/3/index.html")]
    assert len({t for page in titles for t in page}) == 23  # each event on one page


def test_machine_files(site: Path) -> None:
    assert 'href="/calendar/events/list/index.html"' in read(site, "404.html")
    assert "Sitemap: https://example.org/calendar/sitemap.xml" in read(site, "robots.txt")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.parse(site / "sitemap.xml").findall(".//s:loc", ns)]
    assert "https://example.org/calendar/event/holiday-messiah-sing-along-2026/" in locs
    atom = ET.parse(site / "feed.xml").getroot()
    entries = atom.findall("{http://www.w3.org/2005/Atom}entry")
    assert len(entries) == 50
    assert (site / "assets/style.css").exists() and (site / "media/jazz-night.png").exists()


def test_drafts_never_leak(site: Path) -> None:
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".ics", ".json", ".xml", ".txt"):
            text = path.read_text(encoding="utf-8")
            assert "new-years-eve-2027-lineup-tba" not in text, path
            assert "lineup TBA" not in text, path
            assert '"id":142,' not in text.replace(" ", ""), path
    assert not (site / f"{REST}/events/142.json").exists()


# -- iCalendar ----------------------------------------------------------------------
def test_every_feed_parses(site: Path) -> None:
    feeds = sorted(site.rglob("*.ics"))
    assert len(feeds) > 60
    for path in feeds:
        raw = path.read_bytes()
        assert all(len(line) <= 75 for line in raw.split(b"\r\n")), path
        cal = icalendar.Calendar.from_ical(raw)
        zones = {str(tz["TZID"]) for tz in cal.walk("VTIMEZONE")}
        for event in cal.walk("VEVENT"):
            # The host of calendar.yaml's url, not of --base-url (example.org).
            assert re.fullmatch(r"\d+@calendar\.example\.org", str(event["UID"]))
            assert event["DTSTAMP"].dt.tzinfo is not None
            start = event["DTSTART"]
            if "TZID" in start.params:
                assert start.params["TZID"] in zones, path


def test_event_feed_values(site: Path) -> None:
    cal = icalendar.Calendar.from_ical(
        (site / "event/holiday-messiah-sing-along-2026/event.ics").read_bytes())
    (event,) = cal.walk("VEVENT")
    assert str(event["UID"]) == "101@calendar.example.org"
    assert event["DTSTAMP"].dt == dt.datetime(2026, 11, 18, 7, 37, tzinfo=dt.UTC)
    assert event["DTSTART"].dt == dt.datetime(2026, 12, 13, 15, 0, tzinfo=dt.UTC).replace(
        tzinfo=event["DTSTART"].dt.tzinfo)
    assert str(event["DTSTART"].dt.tzinfo) == "America/Los_Angeles"
    assert str(event["SUMMARY"]) == "Holiday Messiah Sing-Along"
    assert str(event["URL"]) == BASE_URL + "event/holiday-messiah-sing-along-2026/"
    market = icalendar.Calendar.from_ical(
        (site / "event/december-makers-market-2026/event.ics").read_bytes())
    (event,) = market.walk("VEVENT")
    assert event["DTSTART"].dt == dt.date(2026, 12, 5)
    assert event["DTEND"].dt == dt.date(2026, 12, 7)  # exclusive
    upcoming = icalendar.Calendar.from_ical((site / "calendar.ics").read_bytes())
    # 56 published events, one of them hidden from listings (it keeps its own .ics);
    # the weekly pottery class adds one VEVENT for its retitled date.
    assert len(upcoming.walk("VEVENT")) == 56
    assert len([e for e in upcoming.walk("VEVENT") if "RECURRENCE-ID" in e]) == 1
    assert (site / "event/volunteer-usher-orientation-2027/event.ics").exists()
    jazz = icalendar.Calendar.from_ical(
        (site / "events/category/music/jazz/calendar.ics").read_bytes())
    assert all("Jazz" in [str(c) for c in e["CATEGORIES"].cats] or "Music" in str(
        e["CATEGORIES"].to_ical()) for e in jazz.walk("VEVENT"))


def test_event_feed_text_round_trips(tmp_path: Path) -> None:
    """Escaping and folding (RFC 5545 3.1, 3.3.11): what a client parses is what was
    written, multi-byte characters are never cut, no line passes 75 octets."""
    content = small_sample(tmp_path / "content")
    title = "Jazz; Blues, and a \\ back-slash: Café ☕ " + "Ünïcödé " * 12
    organizer = content / "organizers/inland-chamber-players.yaml"
    organizer.write_text(organizer.read_text().replace(
        "name: Inland Chamber Players", 'name: Inland "Chamber"; Players, Inc.'))
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    event.write_text(event.read_text().replace(
        "title: Holiday Messiah Sing-Along", "title: " + json.dumps(title)))
    build(make_options(content, tmp_path / "public", tmp_path))
    raw = (tmp_path / "public/event/holiday-messiah-sing-along-2026/event.ics").read_bytes()
    assert all(len(line) <= 75 for line in raw.split(b"\r\n"))
    raw.decode("utf-8")  # every folded piece is whole characters
    (parsed,) = icalendar.Calendar.from_ical(raw).walk("VEVENT")
    assert str(parsed["SUMMARY"]) == title.strip()
    assert "Scores are available to borrow at the door" in str(parsed["DESCRIPTION"])
    assert parsed["ORGANIZER"].params["CN"] == "Inland 'Chamber'; Players, Inc."
    assert str(parsed["ORGANIZER"]) == "mailto:tickets@inlandchamber.example.org"
    assert parsed["LOCATION"].startswith("Magnolia Arts Center, ")
    assert [str(c) for c in parsed["CATEGORIES"].cats] == ["Classical", "Music"]
    assert parsed["TRANSP"] == "OPAQUE" and parsed["STATUS"] == "CONFIRMED"


# -- JSON snapshots ----------------------------------------------------------------
def test_snapshots_match_live_api(site: Path, tmp_path: Path) -> None:
    app = create_app({"CONTENT_DIR": str(SAMPLE), "USERS_FILE": str(tmp_path / "u.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "SITE_URL": BASE_URL})
    client = app.test_client()
    snapshots = sorted((site / REST).rglob("*.json"))
    assert len(snapshots) > 150
    for path in snapshots:  # the file of a request is its path plus ".json"
        url = "/" + path.relative_to(site).as_posix().removesuffix(".json")
        url = _embed_query(url) or url
        if url == "by slug":  # a hard link to the file by id (below)
            continue
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.get_data() == path.read_bytes(), url
    for collection in ("events", "venues", "organizers", "categories", "tags"):
        assert (site / REST / f"{collection}.json").exists()
    by_slug = site / REST / "events/by-slug/holiday-messiah-sing-along-2026.json"
    # One copy on disk: the file by slug is a hard link to the file by id.
    assert by_slug.stat().st_ino == (site / REST / "events/101.json").stat().st_ino
    # No folder per record: the collections' and by-slug folders only.
    folders = {p.relative_to(site / REST).as_posix() for p in (site / REST).rglob("*")
               if p.is_dir()}
    assert folders == {"events", "venues", "organizers", "categories", "tags",
                       "events/by-slug", "venues/by-slug", "organizers/by-slug",
                       "events/embed", "events/embed/category", "events/embed/category-id",
                       "events/embed/venue", "events/embed/venue-id"}
    # The component's snapshots (issue 25 item 2): each category's and each published
    # venue's, by slug and, the same file, by id.
    categories = json.loads((site / REST / "categories.json").read_text())["categories"]
    for category in categories:
        slug = site / REST / f"events/embed/category/{category['slug']}.json"
        by_id = site / REST / f"events/embed/category-id/{category['id']}.json"
        assert slug.stat().st_ino == by_id.stat().st_ino
    venues = json.loads((site / REST / "venues.json").read_text())["venues"]
    for venue in venues:
        slug = site / REST / f"events/embed/venue/{venue['slug']}.json"
        assert slug.stat().st_ino == (site / REST / f"events/embed/venue-id/{venue['id']}"
                                      ".json").stat().st_ino
    assert len(list((site / REST / "events/embed/venue").iterdir())) >= len(venues)


def _embed_query(url: str) -> str:
    """The live query an embed snapshot answers (snapshots.py), by its file's path."""
    found = re.fullmatch(r"(.*/events)/embed/(all|category-id/(\d+)|venue-id/(\d+)|"
                         r"(category|venue)/([\w-]+))", url)
    if found is None:
        return ""
    base, _, category, venue, kind, _slug = found.groups()
    if kind:
        return "by slug"
    query = f"{base}?per_page=50"
    if category or venue:
        query += f"&{'categories' if category else 'venue'}={category or venue}"
    return query


# -- determinism and incremental builds --------------------------------------------------
def test_deterministic(site: Path, tmp_path: Path) -> None:
    content = copy_sample(tmp_path / "content")
    build(make_options(content, tmp_path / "again", tmp_path))
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    second = {p.relative_to(tmp_path / "again"): p.read_bytes()
              for p in (tmp_path / "again").rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def built_small(factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """The run's built small calendar copied into tmp_path (content, public, cache: as
    make_options(content, tmp_path / "public", tmp_path) builds it): for the tests of
    a running builder that began with a full build of it."""
    return sitebuilds.small_copy(factory, tmp_path) / "content"


def test_incremental_rewrite_and_removal(tmp_path: Path,
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    content = built_small(tmp_path_factory, tmp_path)
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path))
    try:
        total = len(tree_bytes(out))
        assert builder.build().written == []  # the built copy: nothing to redo
        assert builder.build().written == []  # nothing changed: nothing rewritten
        stamp = (out / "venue/the-blue-lantern/index.html").stat().st_mtime_ns
        event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
        event.write_text(event.read_text().replace("title: Holiday Messiah Sing-Along",
                                                   "title: Holiday Messiah Singalong"))
        builder.reader.catalog.refresh(["events/2026/holiday-messiah-sing-along-2026.yaml"])
        written = set(builder.build().written)
        assert "event/holiday-messiah-sing-along-2026/index.html" in written
        assert "event/holiday-messiah-sing-along-2026/event.ics" in written
        assert "events/month/2026-12/index.html" in written
        assert "events/2026-12-13/index.html" in written
        assert "venue/magnolia-arts-center/index.html" in written
        assert "events/category/music/classical/index.html" in written
        assert f"{REST}/events/101.json" in written
        assert "calendar.ics" in written
        assert "venue/the-blue-lantern/index.html" not in written
        assert "event/jazz-night-january-2027/index.html" not in written
        assert len(written) < total / 5
        assert (out / "venue/the-blue-lantern/index.html").stat().st_mtime_ns == stamp
        assert "Holiday Messiah Singalong" in (
            out / "event/holiday-messiah-sing-along-2026/index.html").read_text()
        for path in ("events/101", "events/by-slug/holiday-messiah-sing-along-2026"):
            assert "Holiday Messiah Singalong" in (out / REST / f"{path}.json").read_text()

        event.unlink()
        builder.reader.catalog.refresh(["events/2026/holiday-messiah-sing-along-2026.yaml"])
        report = builder.build()
        assert "event/holiday-messiah-sing-along-2026/index.html" in report.removed
        assert not (out / "event/holiday-messiah-sing-along-2026").exists()
        assert not (out / REST / "events/101.json").exists()
        assert not (out / REST / "events/by-slug/holiday-messiah-sing-along-2026.json").exists()
    finally:
        builder.close()


def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_watch_edits_match_a_full_build(tmp_path: Path,
                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Text edits take the incremental path (only the outputs showing the event are
    looked at); a date edit re-plans everything. Either way: the full build's bytes."""
    content = built_small(tmp_path_factory, tmp_path)
    builder = Builder(make_options(content, tmp_path / "public", tmp_path))
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    relpath = "events/2026/holiday-messiah-sing-along-2026.yaml"
    try:
        builder.build()
        skipped = []
        for old, new in (("title: Holiday Messiah Sing-Along", "title: Messiah & <Friends>"),
                         ("start_date: 2026-12-13 15:00", "start_date: 2026-12-12 15:00"),
                         ("title: Messiah & <Friends>", "title: Messiah Again")):
            assert old in event.read_text()
            event.write_text(event.read_text().replace(old, new))
            builder.reader.catalog.refresh([relpath])
            report = builder.build()
            assert report.written and not report.problems
            skipped.append(report.skipped)
            fresh = tmp_path / f"full-{len(skipped)}"
            build(make_options(content, fresh, tmp_path / "other"))
            assert tree_bytes(tmp_path / "public") == tree_bytes(fresh), new
        # The text edits were incremental: outputs not showing the event were not even
        # planned, while the date edit's full plan skipped most of the site (on the
        # small calendar: 45 against 251).
        assert skipped[0] < skipped[1] / 3 and skipped[2] < skipped[1] / 3, skipped
    finally:
        builder.close()


def test_parallel_build_matches_one_process(tmp_path: Path, monkeypatch,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    """Large builds fork: outputs taken in runs by whichever process is free, then
    the feeds dealt out by size. The bytes are those of a build in one process."""
    from calendar_app.site import builder as builder_module
    from calendar_app.store import parallel

    one = sitebuilds.small_site(tmp_path_factory)  # built in one process
    content = small_sample(tmp_path / "content")
    calls: list[tuple[int, int]] = []
    pulled: list[tuple[int, int]] = []
    run, run_pulled = parallel.run, parallel.run_pulled

    def counting(items, *args, **kwargs):
        calls.append((len(items), kwargs.get("workers", 1)))
        return run(items, *args, **kwargs)

    def counting_pulled(items, render, workers, *args):
        pulled.append((len(items), workers))
        return run_pulled(items, render, workers, *args)
    monkeypatch.setattr(parallel, "run", counting)
    monkeypatch.setattr(parallel, "run_pulled", counting_pulled)
    monkeypatch.setattr(builder_module, "PARALLEL_MIN", 1)
    for out in ("cold", "warm"):  # the second with the first one's caches
        builder = Builder(make_options(content, tmp_path / out, tmp_path))
        builder.workers = 2
        try:
            calls.clear()
            pulled.clear()
            report = builder.build()
        finally:
            builder.close()
        assert tree_bytes(tmp_path / out) == tree_bytes(one), out
        # Feeds, and the months' and days' exports (made of the same VEVENTs).
        feeds = sum(1 for name in ("calendar.ics", "events.ics")
                    for _ in one.rglob(name))
        # Every output but the feeds, pulled by two processes, then the feeds (dealt
        # out by size, also when warm: all in one process made warm builds slower).
        outputs = len(report.written) + report.unchanged
        assert pulled == [(outputs - feeds, 2)], (pulled, outputs)
        assert [n for n, workers in calls if workers == 2][-1] == feeds, calls


def wait_until(condition: Callable[[], object], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_watch_rebuilds_on_save(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                                watcher_started, watch_stops_quickly) -> None:
    import threading

    from calendar_app.site.watch import watch

    content = built_small(tmp_path_factory, tmp_path)
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path))
    builder.build()
    reports: list = []
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(builder, reports.append, stop), daemon=True)
    thread.start()
    try:
        assert watcher_started.wait(20)
        event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
        saved = time.monotonic()
        event.write_text(event.read_text().replace("title: Holiday Messiah Sing-Along",
                                                   "title: Holiday Messiah Saved"))
        wait_until(lambda: reports)
        save_to_report = time.monotonic() - saved
        assert reports and "event/holiday-messiah-sing-along-2026/index.html" in (
            reports[0].written)
        assert "Holiday Messiah Saved" in (
            out / "event/holiday-messiah-sing-along-2026/index.html").read_text()
        # Quiet after one edit: the build's own reads of the tree are not changes
        # (it used to rebuild about 5 times a second for as long as it ran). Had the
        # build's reads counted, a second report would follow within one debounce and
        # build, what the save took to be reported: twice that, at least a second.
        time.sleep(max(1.0, 2 * save_to_report))
        assert len(reports) == 1, [len(r.written) for r in reports]
    finally:
        stop.set()
        thread.join(10)
        builder.close()


def test_watch_goes_on_after_a_build_that_raises(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, watcher_started,
        watch_stops_quickly) -> None:
    """The server's builder process runs this loop: an unexpected fault in one build is
    logged and the next save builds again, instead of ending the watch."""
    import threading

    from calendar_app.site.watch import watch

    content = built_small(tmp_path_factory, tmp_path)
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path))
    builder.build()
    real_build, calls, reports = builder.build, [], []

    def build_failing_once():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk went away")
        return real_build()

    builder.build = build_failing_once
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(builder, reports.append, stop), daemon=True)
    thread.start()
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    try:
        assert watcher_started.wait(20)
        for title in ("Holiday Messiah Broken", "Holiday Messiah Saved"):
            calls_before = len(calls)
            event.write_text(event.read_text().replace(
                "title: Holiday Messiah " + ("Sing-Along" if calls_before == 0 else "Broken"),
                f"title: {title}"))
            wait_until(lambda before=calls_before: len(calls) > before)
        wait_until(lambda: reports)
        assert thread.is_alive() and len(calls) >= 2 and reports
        assert "Holiday Messiah Saved" in (
            out / "event/holiday-messiah-sing-along-2026/index.html").read_text()
    finally:
        stop.set()
        thread.join(10)
        builder.close()


def test_fresh_process_rebuild_skips_everything(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    first = build(make_options(content, tmp_path / "public", tmp_path))
    report = build(make_options(content, tmp_path / "public", tmp_path))
    assert report.written == [] and report.removed == [] and report.unchanged == 0
    assert report.skipped == len(first.written) > 250  # every output, not even rendered


def test_templates_override_file_by_file(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    mine = tmp_path / "mine"
    (mine / "static").mkdir(parents=True)
    (mine / "static/style.css").write_text("body { color: black; }\n")
    (mine / "404.html").write_text("{% extends 'base.html' %}{% block main %}<h1>Lost</h1>"
                                   "{% endblock %}")
    build(make_options(content, tmp_path / "public", tmp_path, templates=mine))
    assert (tmp_path / "public/assets/style.css").read_text() == "body { color: black; }\n"
    assert "<h1>Lost</h1>" in (tmp_path / "public/404.html").read_text()
    assert "Upcoming events" in (tmp_path / "public/index.html").read_text()


def test_template_edit_seen_by_a_running_builder(tmp_path: Path) -> None:
    """--watch keeps one builder: an edited template is compiled again, and every page
    using it is rebuilt."""
    content = small_sample(tmp_path / "content")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "404.html").write_text("{% extends 'base.html' %}{% block main %}<h1>Lost</h1>"
                                   "{% endblock %}")
    builder = Builder(make_options(content, tmp_path / "public", tmp_path, templates=mine))
    try:
        builder.build()
        (mine / "404.html").write_text("{% extends 'base.html' %}{% block main %}"
                                       "<h1>Gone</h1>{% endblock %}")
        report = builder.build()
        assert "<h1>Gone</h1>" in (tmp_path / "public/404.html").read_text()
        assert "404.html" in report.written
    finally:
        builder.close()


# -- bad records ----------------------------------------------------------------------
def run_build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "build.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


BROKEN = "events/2027/broken.yaml"  # the value on line 4 does not validate
BROKEN_TEXT = "id: 999\ntitle: Broken\nstart_date: 2027-01-01 10:00\nend_date: yesterday\n"


def test_broken_record_stops_the_build_and_writes_nothing(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    out = tmp_path / "out"
    args = ["--content", str(content), "--out", str(out), "--base-url", BASE_URL]
    assert run_build(*args).returncode == 0
    before = tree_bytes(out) | {Path(".build-manifest"): (out / ".build-manifest").read_bytes()}
    # An edit that would change pages, and a file that does not validate.
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    event.write_text(event.read_text().replace("Holiday Messiah Sing-Along", "Changed"))
    (content / BROKEN).write_text(BROKEN_TEXT)
    for extra in ((), ("--strict",)):  # --strict: the old flag, now the default
        stopped = run_build(*args, *extra)
        assert stopped.returncode == 1, stopped.stderr
        assert f"{content / BROKEN}:4: " in stopped.stderr
        assert "end_date" in stopped.stderr
        assert "nothing written" in stopped.stderr
        after = tree_bytes(out) | {
            Path(".build-manifest"): (out / ".build-manifest").read_bytes()}
        assert after == before
    # Into an empty folder: nothing at all.
    fresh = run_build("--content", str(content), "--out", str(tmp_path / "fresh"))
    assert fresh.returncode == 1 and not (tmp_path / "fresh").exists()


def test_unparsable_yaml_names_its_line(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    lines = event.read_text().splitlines()
    lines[5] = "modified: [2026-11-17"  # an unclosed flow sequence on line 6
    event.write_text("\n".join(lines) + "\n")
    result = run_build("--content", str(content), "--out", str(tmp_path / "out"))
    assert result.returncode == 1
    found = re.search(re.escape(str(event)) + r":(\d+): ", result.stderr)
    assert found and int(found[1]) >= 6, result.stderr


def test_keep_going_reports_leaves_out_and_exits_0(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    (content / BROKEN).write_text(BROKEN_TEXT)
    out = tmp_path / "out"
    result = run_build("--content", str(content), "--out", str(out), "--base-url", BASE_URL,
                       "--keep-going")
    assert result.returncode == 0, result.stderr
    assert f"{content / BROKEN}:4: " in result.stderr
    assert "1 problem(s)" in result.stderr
    assert (out / "event/holiday-messiah-sing-along-2026/index.html").exists()
    assert not (out / "event/broken").exists()
    assert "Broken" not in (out / "events/list/index.html").read_text()


MESSIAH = "events/2026/holiday-messiah-sing-along-2026.yaml"
MESSIAH_OWN = ["event/holiday-messiah-sing-along-2026/index.html",
               "event/holiday-messiah-sing-along-2026/event.ics",
               f"{REST}/events/101.json", f"{REST}/events/by-slug/holiday-messiah-sing-along-2026.json"]


def test_running_builder_keeps_the_last_good_page_of_a_broken_file(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """--watch: a save that breaks a file leaves that record's outputs as they were
    (lists drop it); other edits meanwhile keep them; the fix gives a full build's bytes."""
    content = built_small(tmp_path_factory, tmp_path)
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path, keep_going=True))
    event = content / MESSIAH
    good = event.read_text()
    try:
        builder.build()
        kept = {path: (out / path).read_bytes() for path in MESSIAH_OWN}
        event.write_text(good.replace("status: publish", "status: [publish"))
        builder.reader.catalog.refresh([MESSIAH])
        report = builder.build()
        assert [p.path for p in report.problems] == [MESSIAH] and not report.stopped
        assert sorted(report.kept) == sorted(MESSIAH_OWN)
        assert {path: (out / path).read_bytes() for path in MESSIAH_OWN} == kept
        assert "Holiday Messiah" not in (out / "events/list/index.html").read_text()
        # Another record changes meanwhile (a full plan): the broken one's stay.
        other = content / "events/2027/jazz-night-january-2027.yaml"
        other.write_text(other.read_text().replace("start_date: 2027-01-07 19:30",
                                                   "start_date: 2027-01-07 19:00"))
        builder.reader.catalog.refresh(["events/2027/jazz-night-january-2027.yaml"])
        report = builder.build()
        assert sorted(report.kept) == sorted(MESSIAH_OWN) and not report.removed
        assert {path: (out / path).read_bytes() for path in MESSIAH_OWN} == kept
        event.write_text(good.replace("Holiday Messiah Sing-Along", "Messiah Fixed"))
        builder.reader.catalog.refresh([MESSIAH])
        report = builder.build()
        assert not report.problems and not report.kept
        fresh = tmp_path / "full"
        build(make_options(content, fresh, tmp_path / "other"))
        assert tree_bytes(out) == tree_bytes(fresh)
        assert "Messiah Fixed" in (out / MESSIAH_OWN[0]).read_text()
    finally:
        builder.close()


def test_deleting_a_file_still_removes_its_page_while_another_is_broken(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    content = built_small(tmp_path_factory, tmp_path)
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path, keep_going=True))
    try:
        builder.build()
        (content / MESSIAH).write_text("title: [\n")
        gone = "events/2027/jazz-night-january-2027.yaml"
        (content / gone).unlink()
        builder.reader.catalog.refresh([MESSIAH, gone])
        report = builder.build()
        assert "event/jazz-night-january-2027/index.html" in report.removed
        assert not (out / "event/jazz-night-january-2027").exists()
        assert (out / MESSIAH_OWN[0]).exists()
    finally:
        builder.close()


# The real script over real time (a process, its watcher, its debounce). The quick run
# keeps the same guarantee in process: test_running_builder_keeps_the_last_good_page_of_a_broken_file
# (the kept page, the fix), test_watch_goes_on_after_a_build_that_raises and
# test_watch_rebuilds_on_save (the watch loop), test_keep_going_reports_leaves_out_and_exits_0
# (build.py prints file:line).
@pytest.mark.slow
def test_watch_cli_prints_the_error_and_keeps_the_page(tmp_path: Path) -> None:
    """The real `build.py --watch`: a broken save is printed as file:line and the page
    stays; the fixing save rebuilds it."""
    import signal
    import threading

    content = small_sample(tmp_path / "content")
    out = tmp_path / "out"
    page = out / MESSIAH_OWN[0]
    process = subprocess.Popen(
        [sys.executable, str(REPO / "build.py"), "--content", str(content), "--out", str(out),
         "--watch"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    for stream in (process.stdout, process.stderr):
        threading.Thread(target=lambda stream=stream: lines.extend(stream), daemon=True).start()

    seen = [0]  # lines already matched

    def read_until(text: str) -> None:
        deadline = time.monotonic() + 60
        while True:
            found = [i for i, line in enumerate(lines[seen[0]:], seen[0]) if text in line]
            if found:
                seen[0] = found[0] + 1
                return
            assert time.monotonic() < deadline and process.poll() is None, lines
            time.sleep(0.05)

    try:
        read_until("watching")
        good = (content / MESSIAH).read_text()
        before = page.read_bytes()
        (content / MESSIAH).write_text(good.replace("status: publish", "status: [publish"))
        read_until(f"{content / MESSIAH}:")
        read_until(" 4 kept from before")  # its page, .ics and two JSON files
        assert page.read_bytes() == before
        (content / MESSIAH).write_text(good.replace("Holiday Messiah Sing-Along", "Fixed"))
        read_until("0 problem(s)")
        assert "<h1" in page.read_text() and "Fixed" in page.read_text()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_cli_module_form() -> None:
    import argparse

    from calendar_app.site import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["build", "--out", "x", "--keep-going", "--base-url", "https://a/"])
    assert args.keep_going and args.out == Path("x") and args.base_url == "https://a/"
    assert args.content is None and not args.sample and not args.watch  # ./content


def test_markdown_renderings_are_kept_between_builds(tmp_path: Path, monkeypatch) -> None:
    """A build converts each description once; the next one (a new process, a new
    output folder, same cache) converts only texts it has not seen."""
    from calendar_app.model import markup

    conversions: list[int] = []
    convert = markup._markdown

    def counting(text: str) -> str:
        conversions.append(1)
        return convert(text)
    monkeypatch.setattr(markup, "_markdown", counting)
    content = copy_sample(tmp_path / "content")
    build(make_options(content, tmp_path / "one", tmp_path))
    assert len(conversions) > 40
    conversions.clear()
    build(make_options(content, tmp_path / "two", tmp_path))
    assert conversions == []
    page = "event/holiday-messiah-sing-along-2026/index.html"
    assert (tmp_path / "one" / page).read_bytes() == (tmp_path / "two" / page).read_bytes()
    event = content / "events/2026/holiday-messiah-sing-along-2026.yaml"
    event.write_text(event.read_text().replace("A beloved December tradition",
                                               "A *cherished* December tradition"))
    build(make_options(content, tmp_path / "three", tmp_path))
    assert len(conversions) == 1
    assert "A <em>cherished</em> December tradition" in (tmp_path / "three" / page).read_text()


def test_manifest_round_trip(tmp_path: Path) -> None:
    from calendar_app.site import manifest

    outputs = {"event/a/index.html": ["s1", "d1"], "media/odd\tname %20\n.png": ["s2", "d2"],
               "wp-json/tribe/events/v1/events/7.json": ["s3", ""]}
    manifest.save(tmp_path, outputs)
    assert manifest.load(tmp_path) == outputs
    assert len((tmp_path / manifest.NAME).read_text().splitlines()) == 4
    (tmp_path / manifest.NAME).write_text('{"version": 1, "outputs": {}}')
    assert manifest.load(tmp_path) == {}  # another format: a full build follows


def test_writer_replaces_a_file_whole_and_writes_new_ones_in_place(tmp_path: Path) -> None:
    from calendar_app.site import writer

    writer.write(tmp_path, "event/a/index.html", b"first")
    page = tmp_path / "event/a/index.html"
    first_inode = page.stat().st_ino
    with open(page, "rb") as reader:  # a server in the middle of sending the page
        writer.write(tmp_path, "event/a/index.html", b"second")
        assert reader.read() == b"first"  # replaced by a rename, not overwritten
    assert page.read_bytes() == b"second" and page.stat().st_ino != first_inode
    assert writer.link(tmp_path, "event/a/index.html", "by-slug/a/index.html")
    assert (tmp_path / "by-slug/a/index.html").stat().st_ino == page.stat().st_ino
    writer.write(tmp_path, "event/a/index.html", b"third")
    assert writer.link(tmp_path, "event/a/index.html", "by-slug/a/index.html")
    assert (tmp_path / "by-slug/a/index.html").read_bytes() == b"third"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "index.html", "index.html"]  # no temporary file left


def test_list_items_shared_across_depths_match_fresh_renders(
        site: Path, tmp_path: Path, monkeypatch) -> None:
    from calendar_app.site import render

    def fresh(ctx, event, heading, macro):
        return macro(event, heading)
    monkeypatch.setattr(render, "cached_item", render.pass_context(fresh))
    content = copy_sample(tmp_path / "content")
    build(make_options(content, tmp_path / "fresh", tmp_path))
    pages = sorted(p.relative_to(site) for p in site.rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        assert (site / page).read_bytes() == (tmp_path / "fresh" / page).read_bytes(), page


def test_output_folder_removed_under_a_running_builder(tmp_path: Path) -> None:
    content = small_sample(tmp_path / "content")
    out = tmp_path / "public"
    builder = Builder(make_options(content, out, tmp_path))
    try:
        first = builder.build()
        shutil.rmtree(out)  # `rm -rf public` while --watch runs
        second = builder.build()
    finally:
        builder.close()
    assert sorted(second.written) == sorted(first.written) and not second.removed
    assert (out / "event/holiday-messiah-sing-along-2026/index.html").is_file()
    assert (out / REST / "events/by-slug/holiday-messiah-sing-along-2026.json").is_file()
