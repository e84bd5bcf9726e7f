"""The month grid: one bar per week row for a multi-day event, lanes, "+N more", zone
abbreviations, the list for narrow screens; checked in the HTML and in Chromium."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest
from conftest import NEEDS_CHROMIUM, compiled_templates

from calendar_app.site import Options, build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2027, 2, 20, 12, 0, tzinfo=dt.UTC)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MONTH = "events/month/2027-03/index.html"
FESTIVAL = "../../../event/spring-lantern-festival/index.html"

# (slug, title, start, end, extra YAML). March 2027 begins on a Monday.
EVENTS = [
    # 14 days over three week rows: Wed 10 - Sun 14, Mon 15 - Sun 21, Mon 22 - Tue 23.
    ("spring-lantern-festival", "Spring Lantern Festival", "2027-03-10 10:00",
     "2027-03-23 18:00", ""),
    # Wed 17 is crowded: the festival and four talks.
    *[(f"talk-{n}", f"Talk {n}", f"2027-03-17 {8 + n:02d}:00", f"2027-03-17 {9 + n:02d}:00",
       "") for n in range(1, 5)],
    # Thu 18: the festival and two events, one in Toronto (its own zone).
    ("toronto-folk-night", "Toronto Folk Night", "2027-03-18 19:00", "2027-03-18 21:00",
     "timezone: America/Toronto\n"),
    ("local-choir", "Local Choir", "2027-03-18 19:30", "2027-03-18 21:00", ""),
    # Mon 1 - Tue 2: three bars fill the lanes; a fourth, Tue 2 - Thu 4, finds none on
    # Tuesday and starts its bar on Wednesday, marked as continued.
    *[(f"retreat-{n}", f"Retreat {n}", "2027-03-01", "2027-03-02", "all_day: true\n")
      for n in range(1, 4)],
    ("late-workshop", "Late Workshop", "2027-03-02", "2027-03-04", "all_day: true\n"),
]


def make_content(root: Path) -> Path:
    content = root / "content"
    for part in ("venues", "organizers", "categories", "tags", "media"):
        shutil.copytree(REPO / "content" / part, content / part)
    # The weeks below are laid out Monday first (the sample's own calendar says Sunday).
    (content / "calendar.yaml").write_text(
        (REPO / "content" / "calendar.yaml").read_text(encoding="utf-8")
        + "week_start: monday\n", encoding="utf-8")
    events = content / "events"
    events.mkdir()
    for number, (slug, title, start, end, extra) in enumerate(EVENTS, start=900):
        (events / f"{slug}.yaml").write_text(
            f"id: {number}\ntitle: {title}\nslug: {slug}\nstatus: publish\n"
            f"start_date: {start}\nend_date: {end}\n{extra}", encoding="utf-8")
    return content


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("grid")
    report = build(Options(content=make_content(tmp), out=tmp / "public", now=NOW,
                           base_url="https://example.org/", cache_dir=tmp / "cache",
                           progress=False, compiled_templates=compiled_templates()))
    assert not report.problems
    return tmp / "public"


def cells(page: str) -> dict[str, str]:
    table = re.search(r'<table class="month-grid">.*?</table>', page, re.DOTALL).group(0)
    return dict(re.findall(r'<td [^>]*data-date="([\d-]+)"[^>]*>(.*?)</td>', table, re.DOTALL))


def bars(cell: str) -> list[tuple[str, str, str]]:
    """(classes, link, visible text) of each bar beginning in the cell."""
    found = re.findall(r'<li class="lane bar ([^"]*)"><a href="([^"]*)">(.*?)</a></li>', cell)
    return [(classes, href, re.sub(r'<span class="visually-hidden">.*?</span>', "",
                                   text)) for classes, href, text in found]


def test_a_multi_day_event_is_one_bar_per_week_row(site: Path) -> None:
    grid = cells((site / MONTH).read_text(encoding="utf-8"))
    pieces = {day: [b for b in bars(cell) if b[1] == FESTIVAL] for day, cell in grid.items()}
    assert {day: found for day, found in pieces.items() if found} == {
        "2027-03-10": [("span-5 multi-day continues", FESTIVAL,
                        '<span class="slot-time">10:00 am</span> Spring Lantern Festival')],
        "2027-03-15": [("span-7 multi-day continued continues", FESTIVAL,
                        "Spring Lantern Festival")],
        "2027-03-22": [("span-2 multi-day continued", FESTIVAL, "Spring Lantern Festival")],
    }
    # The other days keep its lane free and say, to screen readers only, that it goes on.
    passing = [day for day, cell in grid.items()
               if "Spring Lantern Festival (continued)</span></li>" in cell]
    assert passing == [f"2027-03-{d}" for d in (11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 23)]
    assert all('<li class="lane through">' in grid[day] for day in passing)


def test_crowded_day_links_the_rest(site: Path) -> None:
    grid = cells((site / MONTH).read_text(encoding="utf-8"))
    wednesday = grid["2027-03-17"]
    # Lane 1 is the festival's; two talks fit; two more are behind the link.
    assert [b[2] for b in bars(wednesday)] == [
        '<span class="slot-time">9:00 am</span> Talk 1',
        '<span class="slot-time">10:00 am</span> Talk 2']
    assert ('<p class="more"><a href="../../../events/2027-03-17/index.html">+2 more'
            '<span class="visually-hidden"> on Wednesday, March 17, 2027</span></a></p>'
            ) in wednesday
    # Three events (the festival and two others): all shown, no link.
    assert len(bars(grid["2027-03-18"])) == 2 and 'class="more"' not in grid["2027-03-18"]
    day = (site / "events/2027-03-17/index.html").read_text(encoding="utf-8")
    assert all(f"Talk {n}" in day for n in range(1, 5)) and "Spring Lantern Festival" in day


def test_a_bar_crowded_out_starts_later_marked_continued(site: Path) -> None:
    grid = cells((site / MONTH).read_text(encoding="utf-8"))
    assert [b[0] for b in bars(grid["2027-03-01"])] == ["span-2 multi-day"] * 3
    assert bars(grid["2027-03-02"]) == [] and "+1 more" in grid["2027-03-02"]
    assert bars(grid["2027-03-03"]) == [("span-2 multi-day continued",
                                         "../../../event/late-workshop/index.html",
                                         "Late Workshop")]
    # All-day events show no time.
    assert "slot-time" not in grid["2027-03-01"]


def test_zone_abbreviation_only_for_other_zones(site: Path) -> None:
    thursday = cells((site / MONTH).read_text(encoding="utf-8"))["2027-03-18"]
    texts = [b[2] for b in bars(thursday)]
    # Daylight time began on March 14.
    assert ('<span class="slot-time">7:00 pm <abbr title="Eastern Time">EDT</abbr></span> '
            'Toronto Folk Night') in texts
    assert '<span class="slot-time">7:30 pm</span> Local Choir' in texts


def test_narrow_screens_list_each_event_once(site: Path) -> None:
    page = (site / MONTH).read_text(encoding="utf-8")
    agenda = re.search(r'<section class="month-agenda".*?</section>', page, re.DOTALL).group(0)
    items = [(re.sub(r"</?time[^>]*>", "", when), title) for when, title in re.findall(
        r'<li><p class="agenda-when">(.*?)</p> <a href="[^"]*">([^<]*)</a></li>', agenda)]
    assert [title for _, title in items].count("Spring Lantern Festival") == 1
    # A timed event over several days keeps its times on the phone list (issue 27).
    assert ("Mar 10, 10:00 am – Mar 23, 6:00 pm", "Spring Lantern Festival") in items
    assert ('<time datetime="2027-03-10T10:00:00-08:00">Mar 10, 10:00 am</time> – '
            '<time datetime="2027-03-23T18:00:00-07:00">Mar 23, 6:00 pm</time>') in agenda
    assert ("Mar 2 – Mar 4", "Late Workshop") in items
    toronto = ('Thu, Mar 18, <span class="slot-time">7:00 pm <abbr title="Eastern Time">EDT'
               '</abbr></span> ')
    assert (toronto, "Toronto Folk Night") in items
    assert len(items) == len(EVENTS)


# -- in Chromium ---------------------------------------------------------------------------
# What the test reads from the month page, wide (1280 px) and narrow (390 px).
MEASURE = """() => {
  const style = sel => getComputedStyle(document.querySelector(sel)).display;
  const cell = date => document.querySelector('td[data-date="' + date + '"]')
    .getBoundingClientRect().toJSON();
  const bars = [...document.querySelectorAll('.month-grid .bar')].map(b => {
    const r = b.getBoundingClientRect();
    return {href: b.querySelector('a').getAttribute('href'), cls: b.className,
            left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  });
  return {bars, mon15: style('.month-grid') === 'none' ? null : cell('2027-03-15'),
          sun21: style('.month-grid') === 'none' ? null : cell('2027-03-21'),
          shown: [style('.month-grid'), style('.month-agenda')]};
}"""


@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
def test_month_grid_in_chromium(site: Path, tmp_path: Path, site_tab) -> None:
    # The process's tab (conftest) instead of three Chromium processes of the test's
    # own: the same measures, read from the page in a window of each width.
    page, problems = site_tab
    page.set_viewport_size({"width": 1280, "height": 1400})
    page.goto((site / MONTH).as_uri())
    wide = page.evaluate(MEASURE)
    page.screenshot(path=str(tmp_path / "month-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 1400})
    narrow = page.evaluate(MEASURE)
    page.screenshot(path=str(tmp_path / "month-phone.png"))
    assert problems == []
    assert wide["shown"] == ["table", "none"] and narrow["shown"] == ["none", "block"]
    # The week-long piece covers the row from Monday's cell to Sunday's.
    row = next(b for b in wide["bars"] if b["href"] == FESTIVAL and "span-7" in b["cls"])
    assert abs(row["left"] - wide["mon15"]["left"]) < 8
    assert abs(row["right"] - wide["sun21"]["right"]) < 8
    # No two bars overlap.
    shown = wide["bars"]
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            overlap_x = min(a["right"], b["right"]) - max(a["left"], b["left"])
            overlap_y = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            assert overlap_x <= 1 or overlap_y <= 1, (a, b)
    for name in ("desktop", "phone"):
        shot = tmp_path / f"month-{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000
