"""Search on the static site: the prebuilt index, and the search page in Chromium."""

from __future__ import annotations

import calendar
import datetime as dt
import json
from pathlib import Path

import pytest
import sitebuilds
from conftest import NOW, heard, site_options

from calendar_app.site import Builder, build

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

INDEX = "events/search/search-index.js"
PAGE = "events/search/index.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sitebuilds.sample_site(tmp_path_factory)


def load_index(site: Path) -> dict:
    text = (site / INDEX).read_text(encoding="utf-8")
    prefix = "window.calendarSearchIndex="
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def test_index_rows(site: Path) -> None:
    index = load_index(site)
    rows = {row[0]: row for row in index["events"]}  # by the page's folder
    # Every listed event, nothing hidden from listings, no draft.
    pages = sum(1 for _ in (site / "event").glob("*/index.html"))
    # The one hidden from listings has a page; the pottery class is its seven dates.
    assert len(rows) == pages - 1 - 1 + 7 == 61
    assert "event/volunteer-usher-orientation-2027/" not in rows  # hide_from_listings
    assert "event/new-years-eve-2027-lineup-tba/" not in rows
    jazz = rows["event/jazz-night-january-2027/"]
    title, start, end, venue, categories, free = jazz[1:7]
    assert title == "Jazz Night: Ana Lucía Ferrer Trio"
    assert start == "2027-01-07T19:30"
    assert end == calendar.timegm(dt.datetime(2027, 1, 8, 6, 0).timetuple())  # 22:00 PST
    venues = {v[0]: v[1:] for v in index["venues"]}
    assert venues[venue] == ["The Blue Lantern", "Riverside"]
    names = {c[0]: c[1] for c in index["categories"]}
    assert sorted(names[c] for c in categories) == ["Jazz", "Music"]
    assert free == 0
    market = rows["event/december-makers-market-2026/"]
    assert market[2] == "2026-12-05" and market[6] == 1  # all day; "Free"
    # Words of the excerpt, folded (lower case, no accents), title words left out.
    assert market[7].split()[:5] == ["two", "days", "of", "handmade", "gifts"]
    assert "market" not in market[7].split()
    altar = rows["event/dia-de-los-muertos-altar-workshop-2027/"]
    assert "papel" in altar[7].split() and "ofrenda" in altar[7].split()
    # Categories carry their parents, so a parent's filter finds its children's events.
    parents = {c[1]: names.get(c[2]) for c in index["categories"]}
    assert parents["Jazz"] == "Music" and parents["Music"] is None
    online = rows["event/online-talk-citrus-crate-labels-2027/"]
    assert online[4] == 0  # no venue
    assert (site / PAGE).exists()


def test_index_is_signed_like_every_output(tmp_path: Path,
                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    # The run's built sample, copied: a builder over it starts as a restarted one.
    content = sitebuilds.sample_copy(tmp_path_factory, tmp_path) / "content"
    (tmp_path / "public").rename(tmp_path / "out")
    builder = Builder(site_options(content, tmp_path / "out", tmp_path / "cache"))
    try:
        assert (tmp_path / "out" / INDEX).is_file()
        stamp = (tmp_path / "out" / INDEX).stat().st_mtime_ns
        assert builder.build().written == []  # signed as when it was written: kept
        assert builder.build().written == []
        event = content / "events/2027/kids-clay-workshop-2027.yaml"
        event.write_text(event.read_text().replace("title: Kids Clay Workshop",
                                                   "title: Kids Pottery Workshop"))
        builder.reader.catalog.refresh(["events/2027/kids-clay-workshop-2027.yaml"])
        assert INDEX in builder.build().written
        rows = {row[0]: row for row in load_index(tmp_path / "out")["events"]}
        assert rows["event/kids-clay-workshop-2027/"][1] == "Kids Pottery Workshop"
        assert (tmp_path / "out" / INDEX).stat().st_mtime_ns != stamp
        fresh = tmp_path / "fresh"
        build(site_options(content, fresh, tmp_path / "cache-2"))
        assert (fresh / INDEX).read_bytes() == (tmp_path / "out" / INDEX).read_bytes()
    finally:
        builder.close()


# -- in the browser ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def search_tab(clocked_page):
    """The process's clocked tab (conftest) for the module, and what its pages report
    (`heard`)."""
    clocked_page.set_viewport_size({"width": 1280, "height": 720})
    with heard(clocked_page) as problems:
        yield clocked_page, problems


@pytest.fixture
def read_at(search_tab):
    """The module's tab, its clock set to a moment (each test sets its own)."""
    tab, problems = search_tab
    problems.clear()

    def at(moment: dt.datetime):
        tab.clock.set_fixed_time(moment)
        return tab

    yield at
    assert problems == []


@pytest.fixture
def page(read_at):
    return read_at(NOW)  # upcoming and past as on the build day


def results(tab) -> list[str]:
    return tab.locator("#search-results li a").all_inner_texts()


def expect_results(tab, titles: list[str]) -> None:
    """Wait until the results are `titles` (the page searches 80 ms after typing)."""
    try:
        tab.wait_for_function(
            "titles => JSON.stringify([...document.querySelectorAll('#search-results li a')]"
            ".map(a => a.textContent)) === JSON.stringify(titles)", arg=titles, timeout=5000)
    except PlaywrightTimeout:
        pass  # the assertion below shows what the page lists instead
    assert results(tab) == titles


def test_typing_and_ticking_free(site: Path, page) -> None:
    page.goto((site / PAGE).as_uri())
    assert page.locator("#search-status").inner_text() == "Type a word or choose a filter."
    page.fill("#search-q", "lantern")
    # Title, venue name ("The Blue Lantern") and excerpt words ("lantern crafts") match.
    expect_results(page, [
        "Winter Solstice Lantern Walk", "New Year’s Eve Jazz Gala",
        "Jazz Night: Ana Lucía Ferrer Trio", "Riverside Winter Lights Festival",
        "Jazz Night: Curtis Bell Organ Quartet",
        "Lunar New Year Family Day", "Jazz Night: The Mercado Street Septet",
        "Jazz Night: Naomi Takeda, vocals", "Jazz Night: RJC Youth Combo & Friends",
        "Jazz Night: Leon Okafor Quintet"])
    page.check("#search-free")
    expect_results(page, ["Winter Solstice Lantern Walk", "Riverside Winter Lights Festival",
                          "Lunar New Year Family Day"])
    assert page.locator("#search-status").inner_text() == "3 events match."
    first = page.locator("#search-results li").first
    assert first.locator("time").inner_text() == "Sat, Dec 19, 2026, 5:00 pm"
    assert "Fairmount Park Bandshell" in first.inner_text()
    assert "q=lantern" in page.url and "free=1" in page.url
    page.click("#search-results li a >> nth=0")
    page.wait_for_url("**/event/winter-solstice-lantern-walk-2026/index.html")


def test_prefix_accents_and_filters(site: Path, page) -> None:
    page.goto((site / PAGE).as_uri())
    page.fill("#search-q", "LUCI")  # a prefix, any case, without the accent
    expect_results(page, ["Jazz Night: Ana Lucía Ferrer Trio"])
    page.fill("#search-q", "día muert")
    expect_results(page, ["Día de los Muertos Altar Workshop"])
    # Every word must match: "jazz" and "hudson".
    page.fill("#search-q", "jazz hudson")
    expect_results(page, ["Jazz Brunch on Hudson"])
    # A parent category finds the events of its subcategories.
    page.fill("#search-q", "clay")
    page.select_option("#search-category", label="Learning")
    pottery = "Beginners’ Pottery Class"
    expect_results(page, [pottery] * 5 + [f"{pottery}: glazing night", pottery,
                          "Kids Clay Workshop"])
    page.select_option("#search-category", label="Music")
    expect_results(page, [])
    assert page.locator("#search-status").inner_text() == "No events match."
    # Filters without words: a venue and a category.
    page.fill("#search-q", "")
    page.select_option("#search-category", label="Music › Jazz")
    page.select_option("#search-venue", label="Hudson Street Loft")
    expect_results(page, ["Riverside Comes to Manhattan: Winter Showcase",
                          "Jazz Brunch on Hudson"])


def test_header_search_box_leads_to_results(site: Path, page) -> None:
    page.goto((site / "venue/the-blue-lantern/index.html").as_uri())
    page.fill("#header-search-q", "quartet")
    page.press("#header-search-q", "Enter")
    page.wait_for_url("**/events/search/index.html?q=quartet")
    expect_results(page, ["Jazz Night: Curtis Bell Organ Quartet",
                          "Summer Chamber Series: String Quartets"])
    assert page.input_value("#search-q") == "quartet"


def test_past_events_come_last_and_say_so(site: Path, read_at) -> None:
    tab = read_at(dt.datetime(2027, 2, 10, tzinfo=dt.UTC))  # read later
    tab.goto((site / PAGE).as_uri() + "?q=jazz%20night")
    tab.wait_for_function("document.querySelectorAll('#search-results li').length == 6")
    texts = tab.locator("#search-results li").all_inner_texts()
    # Upcoming soonest first, then past latest first, marked.
    assert [t.split(" Thu,")[0] for t in texts] == [
        "Jazz Night: The Mercado Street Septet", "Jazz Night: Naomi Takeda, vocals",
        "Jazz Night: RJC Youth Combo & Friends", "Jazz Night: Leon Okafor Quintet",
        "Jazz Night: Curtis Bell Organ Quartet", "Jazz Night: Ana Lucía Ferrer Trio"]
    # (inner text is as shown: the label is in capitals)
    assert [t.lower().endswith(" past") for t in texts] == [False] * 4 + [True] * 2


def test_without_javascript_the_page_says_so(site: Path, search_tab) -> None:
    tab, _ = search_tab
    # The module's tab with scripts off, as a context's java_script_enabled=False turns
    # them off (a context of its own costs most of a second of Chromium's CPU).
    chromium = tab.context.new_cdp_session(tab)
    chromium.send("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        tab.goto((site / PAGE).as_uri())
        note = tab.locator(".search-needs-js")
        assert note.is_visible()
        assert "Search needs JavaScript" in note.inner_text()
        assert note.locator("a").all_inner_texts() == ["upcoming events", "past events",
                                                      "month calendar"]
        assert not tab.locator("#search-form").is_visible()
        # Lists still work without it: the jump menu's links are plain links.
        tab.goto((site / "events/list/index.html").as_uri())
        tab.click(".jump-month summary")
        tab.click('.jump-month a[data-month="2027-03"]')
        tab.wait_for_url("**/events/month/2027-03/index.html")
    finally:
        chromium.detach()  # a session's overrides end with it: scripts run again
