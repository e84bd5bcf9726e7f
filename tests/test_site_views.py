"""Week view, photo view, the views for iframes and the `<calendar-events>` script; the
calendar's `week_start` and `multiday_cutoff` settings in the grids."""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import NEEDS_CHROMIUM, compiled_templates, make_repo
from gitserver import serve_in_thread
from hypothesis import given, settings
from hypothesis import strategies as st
from sitechecks import axe_violations, with_axe

from calendar_app.editorial import register
from calendar_app.model.settings import WEEKDAY_NAMES, multiday_cutoff, setting_problems, week_start
from calendar_app.site import Options, build
from calendar_app.site.builder import Builder

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2027, 3, 1, 20, 0, tzinfo=dt.UTC)  # Monday, March 1, noon in Riverside
BASE_URL = "https://example.org/"
WEEK = "events/week/2027-03-07/index.html"  # Sunday, March 7 (the sample's weeks)
MONTH = "events/month/2027-03/index.html"

# (slug, title, start, end, extra YAML)
EVENTS = [
    ("early-swim", "Early Swim", "2027-03-11 06:30", "2027-03-11 07:30", ""),
    ("market-day", "Market Day", "2027-03-09", "2027-03-09", "all_day: true\n"),
    ("morning-talk", "Morning Talk", "2027-03-10 10:00", "2027-03-10 12:00", ""),
    ("overlap-workshop", "Overlap Workshop", "2027-03-10 11:00", "2027-03-10 13:00",
     "categories: [music]\n"),
    ("afternoon-tea", "Afternoon Tea", "2027-03-10 14:00", "2027-03-10 15:00", ""),
    ("river-festival", "River Festival", "2027-03-11 10:00", "2027-03-13 18:00",
     "categories: [music]\nvenue: the-blue-lantern\n"),
    # Friday night until 1 am: two days, or one with an end-of-day cutoff of 01:00.
    ("late-party", "Late Party", "2027-03-12 21:00", "2027-03-13 01:00", ""),
    ("photo-night", "Photo Night", "2027-03-20 19:00", "2027-03-20 21:00",
     "image: media/jazz-night.png\nvenue: the-blue-lantern\n"),
]


def make_content(root: Path, settings_text: str = "") -> Path:
    content = root / "content"
    for part in ("venues", "organizers", "categories", "tags", "media"):
        shutil.copytree(REPO / "content" / part, content / part)
    (content / "calendar.yaml").write_text(
        (REPO / "content" / "calendar.yaml").read_text(encoding="utf-8")
        + "per_page: 4\n" + settings_text, encoding="utf-8")
    events = content / "events"
    events.mkdir()
    for number, (slug, title, start, end, extra) in enumerate(EVENTS, start=900):
        (events / f"{slug}.yaml").write_text(
            f"id: {number}\ntitle: {title}\nslug: {slug}\nstatus: publish\n"
            f"start_date: {start}\nend_date: {end}\n{extra}", encoding="utf-8")
    return content


def options(content: Path, out: Path, cache: Path) -> Options:
    return Options(content=content, out=out, now=NOW, base_url=BASE_URL, cache_dir=cache,
                   progress=False, compiled_templates=compiled_templates())


def build_site(tmp: Path, settings_text: str = "") -> Path:
    report = build(options(make_content(tmp, settings_text), tmp / "public", tmp / "cache"))
    assert report.written and not report.problems, report.problems
    return tmp / "public"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("views"))


@pytest.fixture(scope="module")
def cutoff_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("cutoff"), 'multiday_cutoff: "01:00"\n')


CROWDED = 55  # more upcoming events at The Blue Lantern than the component's lists hold


def crowded_content(root: Path) -> Path:
    """The views' calendar with CROWDED more events at The Blue Lantern after its own,
    then a music night there: past the 50th of the venue's list."""
    content = make_content(root)
    start = dt.datetime(2027, 3, 21, 9, 0)
    for n in range(CROWDED + 1):
        at = start + dt.timedelta(hours=n)
        last = n == CROWDED
        slug = "late-jazz" if last else f"filler-{n}"
        (content / "events" / f"{slug}.yaml").write_text(
            f"id: {950 + n}\ntitle: {'Late Jazz' if last else f'Filler {n}'}\nslug: {slug}\n"
            f"status: publish\nstart_date: {at:%Y-%m-%d %H:%M}\n"
            f"end_date: {at + dt.timedelta(minutes=30):%Y-%m-%d %H:%M}\n"
            f"venue: the-blue-lantern\n" + ("categories: [music]\n" if last else ""),
            encoding="utf-8")
    for path in (content / "events").glob("*.yaml"):  # publication dates as the app's
        path.write_text("date: 2026-11-01 10:00:00\n" + path.read_text(), encoding="utf-8")
    return content


@pytest.fixture(scope="module")
def crowded_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("crowded")
    report = build(options(crowded_content(tmp), tmp / "public", tmp / "cache"))
    assert report.written and not report.problems, report.problems
    return tmp / "public"


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def slots(page: str) -> dict[str, dict[str, float]]:
    """Title -> the position of its box in the time grid (percent)."""
    found = re.findall(r'<li class="slot[^"]*" style="([^"]*)"><a [^>]*><time [^>]*>[^<]*'
                       r'</time> ([^<]*)</a></li>', page)
    return {title: {k.strip(): float(v.strip().rstrip("%")) for k, v in
                    (part.split(":") for part in style.split(";"))} for style, title in found}


def bar_cells(page: str) -> str:
    return re.search(r'<table class="month-grid week-bars">.*?</table>', page, re.DOTALL)[0]


# -- week view -------------------------------------------------------------------------
def test_week_grid_places_timed_events_by_their_hours(site: Path) -> None:
    page = read(site, WEEK)
    found = slots(page)
    # Hours from 6 am (the early swim) to 6 pm (the least shown): 12 hours, 720 minutes.
    assert re.findall(r"<li>(\d+ [ap]m)</li>", page)[:2] == ["6 am", "7 am"]
    assert len(re.findall(r"<li>\d+ [ap]m</li>", page)) == 12
    assert found["Early Swim"] == {"top": 4.167, "height": 8.333,
                                   "left": 0, "width": 100}
    # Overlapping events share their day's column; the one after them has it all.
    assert found["Morning Talk"] == {"top": 33.333, "height": 16.667, "left": 0, "width": 50}
    assert found["Overlap Workshop"] == {"top": 41.667, "height": 16.667, "left": 50,
                                         "width": 50}
    assert found["Afternoon Tea"] == {"top": 66.667, "height": 8.333, "left": 0, "width": 100}
    # In the column of their day, each day's list labelled with its date.
    wednesday = re.search(r'<ol class="week-day" aria-label="Wednesday, March 10, 2027">'
                          r'(.*?)</ol>', page, re.DOTALL)[1]
    assert "Morning Talk" in wednesday and "Early Swim" not in wednesday


def test_all_day_and_multi_day_events_are_bars_on_top(site: Path) -> None:
    page = read(site, WEEK)
    top = bar_cells(page)
    assert re.search(r'class="lane bar span-1 loose"><a [^>]*>Market Day</a>', top)
    assert re.search(r'class="lane bar span-3 multi-day"><a [^>]*><span class="slot-time">'
                     r'10:00 am</span> River Festival</a>', top)
    assert re.search(r'class="lane bar span-2 multi-day"><a [^>]*><span class="slot-time">'
                     r'9:00 pm</span> Late Party</a>', top)
    assert "River Festival" not in slots(page) and "Market Day" not in slots(page)
    # Sunday first (the sample's week_start), days linking to their pages.
    heads = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', top)
    assert "Sun 7" in heads[0] and "Sat 13" in heads[6]
    assert '<a href="../../../events/2027-03-09/index.html">' in heads[2]


def test_week_navigation_and_view_switcher(site: Path) -> None:
    page = read(site, WEEK)
    assert '<a href="../../../events/week/2027-02-28/index.html" rel="prev">' in page
    assert '<a href="../../../events/week/2027-03-14/index.html" rel="next">' in page
    assert re.search(r'href="../../../events/week/index.html" aria-current="page">Week<', page)
    assert 'href="../../../events/photo/index.html">Photo<' in page
    weeks = sorted(p.name for p in (site / "events/week").iterdir() if p.name != "index.html")
    # From the week of today (Feb 28) to that of the last event (Mar 20), none skipped.
    assert weeks == ["2027-02-28", "2027-03-07", "2027-03-14"]
    last = read(site, "events/week/2027-03-14/index.html")
    assert 'rel="next"' not in last and "Photo Night" in last
    first = read(site, "events/week/2027-02-28/index.html")
    assert 'rel="prev"' not in first and "No events this week." in first
    # events/week/ is this week's page, whose own address is the canonical one.
    current = read(site, "events/week/index.html")
    assert '<link rel="canonical" href="https://example.org/events/week/2027-02-28/">' in current
    assert '<a href="2027-03-07/index.html" rel="next">' in current


def test_narrow_screens_get_the_week_as_a_list(site: Path) -> None:
    page = read(site, WEEK)
    agenda = re.search(r'<section class="week-agenda".*?</section>', page, re.DOTALL)[0]
    days = re.findall(r'<h3 class="agenda-day"><a [^>]*>([^<]*)</a></h3>', agenda)
    assert days == ["Tuesday, March 9, 2027", "Wednesday, March 10, 2027",
                    "Thursday, March 11, 2027", "Friday, March 12, 2027",
                    "Saturday, March 13, 2027"]
    assert agenda.count("River Festival") == 3  # on each of its days, with its times


# -- photo view --------------------------------------------------------------------------
def test_photo_view_lists_upcoming_events_with_their_images(site: Path) -> None:
    first = read(site, "events/photo/index.html")
    second = read(site, "events/photo/page/2/index.html")
    titles = [re.findall(r'<h2 class="event-title"><a [^>]*>([^<]*)</a>', page)
              for page in (first, second)]
    assert titles == [["Market Day", "Morning Talk", "Overlap Workshop", "Afternoon Tea"],
                      ["Early Swim", "River Festival", "Late Party", "Photo Night"]]
    assert 'rel="next"' in first and 'rel="prev"' in second
    image = re.search(r'<img class="photo" src="([^"]*)" alt="" loading="lazy" '
                      r'decoding="async" width="(\d+)" height="(\d+)">', second)
    assert image and image[1] == "../../../../media/jazz-night.png"
    assert (site / "media/jazz-night.png").is_file()
    assert first.count('class="photo no-photo"') == 4  # no image: a date instead
    assert 'aria-current="page">Photo<' in first


def test_sitemap_has_the_views_but_not_the_frames(site: Path) -> None:
    sitemap = read(site, "sitemap.xml")
    for path in ("events/week/2027-03-07/", "events/photo/", "events/photo/page/2/",
                 "embed/"):
        assert f"<loc>{BASE_URL}{path}</loc>" in sitemap, path
    for path in ("events/week/</loc>", "embed/list/", "embed/month/"):
        assert path not in sitemap


# -- settings: end-of-day cutoff, week start ------------------------------------------
def test_an_event_ending_before_the_cutoff_stays_on_its_first_day(site: Path,
                                                                  cutoff_site: Path) -> None:
    def cell(page: str, day: str) -> str:
        return re.search(rf'data-date="{day}"[^>]*>(.*?)</td>', page, re.DOTALL)[1]
    before, after = read(site, MONTH), read(cutoff_site, MONTH)
    assert 'span-2 multi-day"><a href="../../../event/late-party/' in cell(before, "2027-03-12")
    assert "Late Party (continued)" in cell(before, "2027-03-13")
    assert re.search(r'class="lane bar span-1 loose"><a href="../../../event/late-party/',
                     cell(after, "2027-03-12"))
    assert "Late Party" not in cell(after, "2027-03-13")
    assert not (cutoff_site / "events/2027-03-13/index.html").read_text().count("Late Party")
    # The week view draws it in Friday's column, to midnight, marked as going on.
    assert "Late Party" not in bar_cells(read(cutoff_site, WEEK))
    assert slots(read(cutoff_site, WEEK))["Late Party"]["top"] == 83.333  # 9 pm, of 6 am-midnight
    assert 'class="slot continues"' in read(cutoff_site, WEEK)
    # The phone list keeps its times either way.
    assert ('Mar 12, 9:00 pm</time> – <time datetime="2027-03-13T01:00:00-08:00">'
            'Mar 13, 1:00 am</time>') in before
    assert re.search(r'Fri, Mar 12, <span class="slot-time">9:00 pm</span> </time></p> '
                     r'<a href="[^"]*late-party', after)


def test_chips_wrap_on_days_no_bar_crosses(site: Path) -> None:
    """Wednesday's events in a week whose bars start on Thursday: their lanes need not
    stay one line high (a bar's do), so their titles wrap."""
    page = read(site, MONTH)
    wednesday = re.search(r'data-date="2027-03-10"[^>]*>(.*?)</td>', page, re.DOTALL)[1]
    assert wednesday.count('class="lane bar span-1 loose"') == 3
    thursday = re.search(r'data-date="2027-03-11"[^>]*>(.*?)</td>', page, re.DOTALL)[1]
    assert 'class="lane bar span-3 multi-day"' in thursday  # the festival, one line


def test_week_start_orders_the_month_grid(tmp_path: Path) -> None:
    monday = build_site(tmp_path, "week_start: Monday\n")
    page = read(monday, MONTH)
    heads = re.findall(r'<abbr title="(\w+)">', page.split("<tbody>")[0])
    assert heads[:2] == ["Monday", "Tuesday"] and heads[6] == "Sunday"
    assert (monday / "events/week/2027-03-08/index.html").is_file()
    assert not (monday / WEEK).exists()


def test_setting_values() -> None:
    # Without a setting, the locale's first day (CLDR): en_US, the default, is Sunday.
    assert week_start({}) == 6 and week_start({"week_start": "", "locale": "de_DE"}) == 0
    assert week_start({"week_start": "Sunday"}) == 6
    assert week_start({"week_start": "saturday"}) == 5
    # WordPress's own setting, as the plugin reads it (0 is Sunday); week_start wins.
    assert week_start({"start_of_week": 0}) == 6 and week_start({"start_of_week": 1}) == 0
    assert week_start({"start_of_week": 6, "week_start": "monday"}) == 0
    # Out of range: the locale's first day instead (Monday for de_DE).
    assert week_start({"start_of_week": 7, "locale": "de_DE"}) == 0
    assert week_start({"start_of_week": "0", "locale": "de_DE"}) == 0
    assert multiday_cutoff({}) == (dt.timedelta(0), None)
    assert multiday_cutoff({"multiday_cutoff": "01:00"}) == (dt.timedelta(hours=1), None)
    assert multiday_cutoff({"multiday_cutoff": "6:30"}) == (dt.timedelta(hours=6, minutes=30),
                                                            None)
    # YAML 1.1 reads an unquoted 1:30 as 90 (base 60): minutes.
    assert multiday_cutoff({"multiday_cutoff": 90}) == (dt.timedelta(minutes=90), None)
    for bad in ("12:00", "25:00", "1:75", "noon", -5, True, None, 720):
        value, problem = multiday_cutoff({"multiday_cutoff": bad})
        assert value == dt.timedelta(0) and problem and "multiday_cutoff" in problem, bad
    assert setting_problems({"week_start": "funday", "multiday_cutoff": "00:00"}) == [
        ("week_start", "week_start must name a day (monday ... sunday), not 'funday'")]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                 st.floats(allow_nan=True), st.lists(st.integers(), max_size=2)))
def test_any_setting_value_gives_a_usable_value_or_a_problem(value: object) -> None:
    settings_ = {"multiday_cutoff": value, "week_start": value}
    cutoff, problem = multiday_cutoff(settings_)
    assert dt.timedelta(0) <= cutoff < dt.timedelta(hours=12)
    assert problem is None or cutoff == dt.timedelta(0)
    assert 0 <= week_start(settings_) <= 6
    keys = [key for key, _ in setting_problems(settings_)]
    assert ("multiday_cutoff" in keys) == (problem is not None)
    assert ("week_start" in keys) == bool(value and str(value).strip().lower()
                                          not in WEEKDAY_NAMES)


def test_check_names_bad_settings_with_their_lines(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    settings_file = content / "calendar.yaml"
    settings_file.write_text(settings_file.read_text().replace(
        "week_start: sunday", 'multiday_cutoff: "13:00"\nweek_start: funday'))
    lines = (content / "calendar.yaml").read_text().splitlines()
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["check", str(content), "--format", "json"])
    assert args.func(args) == 1
    findings = {(f["line"], f["code"]) for f in json.loads(capsys.readouterr().out)["findings"]
                if f["path"].endswith("calendar.yaml")}
    assert findings == {(lines.index('multiday_cutoff: "13:00"') + 1, "bad-setting"),
                        (lines.index("week_start: funday") + 1, "bad-setting")}


# -- embeds ------------------------------------------------------------------------------
def test_iframe_list_is_compact_and_script_free(site: Path) -> None:
    page = read(site, "embed/list/index.html")
    assert "<script" not in page
    assert '<base target="_top">' in page and '<meta name="robots" content="noindex">' in page
    assert "embed.css" in page and "style.css" not in page
    titles = re.findall(r'<p class="embed-event"><a href="[^"]*">([^<]*)</a>', page)
    assert titles == ["Market Day", "Morning Talk", "Overlap Workshop", "Afternoon Tea"]
    assert '<a href="../../event/market-day/index.html">' in page
    assert '<a href="../../events/list/index.html">All events</a>' in page


def test_iframe_month_pages(site: Path) -> None:
    page = read(site, "embed/month/2027-03/index.html")
    assert "<script" not in page
    assert 'rel="prev"' not in page and 'rel="next"' not in page  # March alone has events
    assert re.search(r'<a href="../../../events/2027-03-10/index.html"><span aria-hidden="true">'
                     r'10</span><span class="visually-hidden">Wednesday, March 10, 2027: '
                     r'3 events</span></a>', page)
    assert '<a href="../../../events/month/2027-03/index.html">March 2027</a>' in page
    months = sorted(p.name for p in (site / "embed/month").iterdir())
    assert months == sorted(p.name for p in (site / "events/month").iterdir())


def test_embed_page_has_snippets_to_copy(site: Path) -> None:
    page = read(site, "embed/index.html")
    assert ('&lt;iframe src=&#34;https://example.org/embed/list/&#34;' in page
            or '&lt;iframe src=&quot;https://example.org/embed/list/&quot;' in page
            or "&lt;iframe src=&#34;https://example.org/embed/list/" in page)
    assert "https://example.org/embed/month/2027-03/" in page
    assert "https://example.org/assets/embed.js" in page
    assert "&lt;calendar-events count=" in page
    assert "<code>music</code> Music" in page and "<code>the-blue-lantern</code>" in page
    assert '<iframe class="embed-preview" src="list/index.html"' in page
    footer = read(site, "events/photo/index.html")
    assert '<a href="../../embed/index.html">Embed this calendar</a>' in footer


def test_embed_script_is_small(site: Path) -> None:
    script = (site / "assets/embed.js").read_bytes()
    assert b'customElements.define("calendar-events"' in script
    assert len(gzip.compress(script, 9)) < 10 * 1024
    assert len(script) > 2000  # the real script, not a stub


def test_pair_snapshots_are_the_live_answers(crowded_site: Path, tmp_path: Path) -> None:
    """A category at a venue whose list misses some of the pair's events gets its own
    snapshot (by id and slug, one file), byte for byte what the interface answers."""
    from calendar_app.http.app import create_app

    repo_content = make_repo(tmp_path, crowded_content(tmp_path / "src"))
    app = create_app({"CONTENT_DIR": str(repo_content), "USERS_FILE": str(tmp_path / "u.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "SITE_URL": BASE_URL})
    rest = crowded_site / "wp-json/tribe/events/v1/"
    pairs = sorted((rest / "events/embed/pair").rglob("*.json"))
    categories = {c["slug"]: c["id"] for c in json.loads(
        (rest / "categories.json").read_text())["categories"]}
    venue_id = json.loads((rest / "venues/by-slug/the-blue-lantern.json").read_text())["id"]
    music = rest / f"events/embed/pair/{categories['music']}/{venue_id}.json"
    names = {p.relative_to(rest / "events/embed/pair").as_posix() for p in pairs}
    # Only music has an event past the venue's 50th: by id and slug in any mix.
    assert names == {f"{categories['music']}/{venue_id}.json", f"music/{venue_id}.json",
                     f"{categories['music']}/the-blue-lantern.json",
                     "music/the-blue-lantern.json"}
    assert {p.stat().st_ino for p in pairs} == {music.stat().st_ino}
    client = app.test_client()
    for path in pairs:
        category, _venue = path.relative_to(rest / "events/embed/pair").with_suffix("").parts
        category = str(categories.get(category, category))
        query = f"per_page=50&categories={category}&venue={venue_id}"
        response = client.get(f"/wp-json/tribe/events/v1/events?{query}")
        assert response.status_code == 200
        assert response.get_data() == path.read_bytes(), path
    titles = [e["title"] for e in json.loads(music.read_text())["events"]]
    assert titles == ["River Festival", "Late Jazz"]
    assert not (rest / "events/embed/pair/music/magnolia-arts-center.json").exists()


# -- incremental builds ---------------------------------------------------------------
def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_edits_rebuild_the_views_as_a_full_build_does(tmp_path: Path) -> None:
    content = make_content(tmp_path)
    builder = Builder(options(content, tmp_path / "a", tmp_path / "cache"))
    event = content / "events/morning-talk.yaml"
    try:
        builder.build()
        for old, new in (("title: Morning Talk", "title: Morning <Talk> & Tea"),
                         ("start_date: 2027-03-10 10:00", "start_date: 2027-03-10 08:00"),
                         ("end_date: 2027-03-10 12:00", "end_date: 2027-03-16 12:00")):
            event.write_text(event.read_text().replace(old, new))
            builder.reader.catalog.refresh(["events/morning-talk.yaml"])
            report = builder.build()
            assert report.written and not report.problems
            fresh = tmp_path / f"full-{len(report.written)}"
            build(options(content, fresh, tmp_path / "other"))
            assert tree_bytes(tmp_path / "a") == tree_bytes(fresh), new
            if "Tea" in new:
                assert {WEEK, "events/photo/index.html", "embed/list/index.html",
                        "embed/month/2027-03/index.html"} <= set(report.written)
                # The text edit took the incremental path: besides the component's
                # snapshots, planned each time and signed by what they hold, only a few
                # outputs were even looked at.
                embeds = len(list((tmp_path / "a" / "wp-json/tribe/events/v1/events/embed")
                                  .rglob("*.json")))
                assert report.skipped - embeds < 50
                assert "wp-json/tribe/events/v1/events/embed/all.json" in report.written
                assert "wp-json/tribe/events/v1/events/embed/venue/magnolia-arts-center.json" \
                    not in report.written  # no event of its changed
        week = read(tmp_path / "a", WEEK)
        assert "Morning &lt;Talk&gt; &#038; Tea" in bar_cells(week)  # now over seven days
        assert "Morning &lt;Talk&gt;" in read(tmp_path / "a", "events/week/2027-03-14/index.html")
    finally:
        builder.close()


# -- in a browser ------------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOST_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Our club</title></head>
<body><main><h1>Our club</h1>
<h2>Next</h2><calendar-events id="next" count="2" language="de"></calendar-events>
<h2>Music</h2><calendar-events id="music" category="music" count="5"></calendar-events>
<h2>Music here</h2><calendar-events id="pair" category="music" venue="the-blue-lantern">
</calendar-events>
<h2>By id</h2><calendar-events id="by-id" category="{music_id}"></calendar-events>
<h2>Nothing</h2><calendar-events id="none" venue="no-such-venue"></calendar-events>
<h2>Hostile</h2><calendar-events id="hostile" count="-3" language="&quot;&gt;x"
 category="&quot;&gt;&lt;img src=x onerror=&quot;window.hit=1&quot;&gt;"></calendar-events>
<h2>Hostile pair</h2><calendar-events id="hostile-pair" category="../../venue"
 venue="the-blue-lantern/../../all"></calendar-events>
<h2>Odd count</h2><calendar-events id="odd" count="1e9x"></calendar-events>
<h2>Arabic</h2><calendar-events id="ar" count="1" language="ar-EG"></calendar-events>
</main><script src="{site}assets/embed.js" defer></script></body></html>
"""


def serve(folder: Path, cors: bool):
    """A static server on its own port (its own origin); with `cors`, sending the header
    the embed page asks hosts to send for the interface's files."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            if cors and self.path.startswith("/wp-json/"):
                self.send_header("Access-Control-Allow-Origin", "*")
            super().end_headers()

        def log_message(self, *args: object) -> None:
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler,
                                                                     directory=str(folder)))
    serve_in_thread(server)
    return server


@pytest.fixture(scope="module")
def component_tab(browser):
    """One phone-sized tab for the module, in a context that carries axe (a context and
    its first page cost most of a second of Chromium's CPU), its clock at NOW (the
    snapshots' events are upcoming then), and the errors its pages threw."""
    context = with_axe(browser.new_context(viewport={"width": 390, "height": 900}))
    page = context.new_page()
    page.clock.set_fixed_time(NOW)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page, errors
    context.close()


@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
def test_component_lists_events_on_another_sites_page(crowded_site: Path, tmp_path: Path,
                                                     component_tab) -> None:
    site = crowded_site
    page, errors = component_tab
    errors.clear()
    calendar = serve(site, cors=True)
    music = json.loads((site / "wp-json/tribe/events/v1/categories.json").read_text())
    music_id = next(c["id"] for c in music["categories"] if c["slug"] == "music")
    site_url = f"http://127.0.0.1:{calendar.server_port}/"
    (tmp_path / "index.html").write_text(HOST_PAGE.replace("{site}", site_url).replace(
        "{music_id}", str(music_id)), encoding="utf-8")
    host = serve(tmp_path, cors=False)
    try:
        page.goto(f"http://127.0.0.1:{host.server_port}/index.html")
        page.wait_for_selector("#none .calendar-events-status:has-text('No upcoming')")
        page.wait_for_selector("#by-id .calendar-event")

        def titles(which: str) -> list[str]:
            return page.locator(f"#{which} .calendar-event-title").all_inner_texts()
        assert titles("next") == ["Market Day", "Morning Talk"]
        # A filter covers every upcoming event, not the default list's first
        # page (per_page 4), where River Festival is not.
        first_page = json.loads((site / "wp-json/tribe/events/v1/events.json")
                                .read_text())["events"]
        assert "River Festival" not in {e["title"] for e in first_page}
        assert titles("music") == ["Overlap Workshop", "River Festival", "Late Jazz"] == \
            titles("by-id")
        # Both filters: the music night past the 50th event at the venue too.
        page.wait_for_selector("#pair .calendar-event >> nth=1")
        assert titles("pair") == ["River Festival", "Late Jazz"]
        first = page.locator("#next .calendar-event time").first
        assert "März" in first.inner_text()  # language="de"
        assert first.get_attribute("datetime") == "2027-03-09"
        # The event's `url` in the interface: calendar.yaml's address.
        assert page.locator("#next .calendar-event-title").first.get_attribute(
            "href") == "https://calendar.example.org/event/market-day/"
        assert page.locator("#next .calendar-events-list").get_attribute("lang") == "de"
        # The component's own words in the language asked for (issue 25 item 2).
        assert page.locator("#next .calendar-events-more a").inner_text() == \
            "Alle Veranstaltungen"
        assert page.locator("#next .calendar-events-list").get_attribute(
            "aria-label") == "Kommende Veranstaltungen"
        assert page.locator("#music .calendar-events-more a").inner_text() == \
            "All events"  # the host page's English
        page.wait_for_selector("#ar .calendar-event")
        arabic = page.locator("#ar .calendar-events-list")
        assert arabic.get_attribute("dir") == "rtl"
        assert page.locator("#ar .calendar-events-more a").inner_text() == "كل الفعاليات"
        # Attributes are data, never markup; counts are kept within 1-50.
        page.wait_for_selector("#hostile .calendar-events-status:has-text('No upcoming')")
        # Path parts in the pair's file name stay inside it (encoded), never a
        # snapshot of another list.
        page.wait_for_selector("#hostile-pair .calendar-events-status:has-text('No upcoming')")
        assert page.locator("img").count() == 0
        assert page.evaluate("window.hit") is None
        assert titles("odd") == ["Market Day"]  # parseInt("1e9x") is 1
        assert errors == []
        page.screenshot(path=str(tmp_path / "component-phone.png"), full_page=True)
        assert axe_violations(page, "host page") == []
    finally:
        calendar.shutdown()
        host.shutdown()


@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
def test_component_says_when_the_calendar_cannot_be_read(site: Path, tmp_path: Path,
                                                        component_tab) -> None:
    """Without the header that lets another site read the files, the browser refuses
    them: the element says so and links to the calendar, nothing breaks."""
    page, errors = component_tab
    errors.clear()
    calendar = serve(site, cors=False)
    site_url = f"http://127.0.0.1:{calendar.server_port}/"
    (tmp_path / "index.html").write_text(HOST_PAGE.replace("{site}", site_url),
                                         encoding="utf-8")
    host = serve(tmp_path, cors=False)
    try:
        page.goto(f"http://127.0.0.1:{host.server_port}/index.html")
        status = page.locator("#none .calendar-events-status")
        status.filter(has_text="could not be loaded").wait_for()
        assert status.locator("a").get_attribute("href") == site_url + "events/list/"
        # language="de": the component's own words in German.
        german = page.locator("#next .calendar-events-status")
        german.filter(has_text="konnten nicht geladen werden").wait_for()
        assert german.locator("a").inner_text() == "Zum Kalender"
        assert errors == []
    finally:
        calendar.shutdown()
        host.shutdown()
