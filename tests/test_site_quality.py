"""Quality gates over a build of the sample calendar: the Nu Html Checker finds no
error, axe-core no violation, every internal link and fragment resolves, every feed
parses. Each kind of page is looked at: once, in one of the four languages, in the
default run; in every language under the slow marker (the same tests, `scope`)."""

from __future__ import annotations

import datetime as dt
import functools
import os
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import icalendar
import pytest
from conftest import NEEDS_CHROMIUM
from ical_strict import check_feed
from sitebuilds import LANGUAGES, language_sites
from sitechecks import (
    CHROMIUM,
    JAVA,
    NEEDS_JAVA,
    SCOPES,
    assert_nu_clean,
    axe_violations,
    nu_errors,
)

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://example.org/calendar/"
ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

# One page of each kind.
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
    "event in euros at a venue in Berlin": "event/adventskonzert/index.html",
    "multi-day event": "event/winter-lights-festival-2027/index.html",
    "canceled event (its label and reason)": "event/family-film-matinee-december-2026/index.html",
    "occurrence of a recurring event": "event/beginners-pottery-class-2027/2027-04-13/index.html",
    "venue": "venue/magnolia-arts-center/index.html",
    "organizer": "organizer/inland-chamber-players/index.html",
    "category": "events/category/music/index.html",
    "tag": "tag/live-music/index.html",
    "search": "events/search/index.html",
    "not found": "404.html",
    # The week of Sunday, December 13, by the locale's first day: Sunday (en_US),
    # Saturday (ar_EG), Monday (de, fr).
    "week": "events/week/2026-12-13/index.html | events/week/2026-12-12/index.html"
            " | events/week/2026-12-07/index.html",
    "week of the build day": "events/week/index.html",
    "photo": "events/photo/index.html",
    "photo page 2": "events/photo/page/2/index.html",
    "embedding help": "embed/index.html",
    "list for an iframe": "embed/list/index.html",
    "month for an iframe": "embed/month/2026-12/index.html",
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample calendar in English, German, French and Arabic (sitebuilds)."""
    return language_sites(tmp_path_factory)


@pytest.fixture(scope="module")
def site(sites: dict[str, Path]) -> Path:
    return sites["en"]


def pages_to_check(sites: dict[str, Path], scope: str) -> dict[str, Path]:
    """Each kind of page once, the languages taken in turn ("one"), or each kind in
    every language ("all"): "language kind" -> file."""
    def file(site: Path, paths: str) -> Path:
        found = [site / path for path in paths.split(" | ") if (site / path).is_file()]
        return found[0] if found else site / paths

    languages = list(sites)
    chosen = {f"{languages[i % len(languages)]} {kind}":
              file(sites[languages[i % len(languages)]], paths)
              for i, (kind, paths) in enumerate(PAGES.items())} if scope == "one" else {
        f"{language} {kind}": file(site, paths)
        for language, site in sites.items() for kind, paths in PAGES.items()}
    missing = [name for name, path in chosen.items() if not path.is_file()]
    assert not missing, f"the sample no longer makes these pages: {missing}"
    return chosen


# -- HTML validator --------------------------------------------------------------------
@pytest.mark.parametrize("scope", SCOPES)
def test_the_nu_html_checker_finds_no_error(sites: dict[str, Path], scope: str,
                                            tmp_path: Path) -> None:
    pages = pages_to_check(sites, scope)
    assert {name.split(" ", 1)[0] for name in pages} == set(LANGUAGES)
    assert_nu_clean(dict(pages), tmp_path)


@pytest.mark.slow  # Java's checker over every page of the site
@pytest.mark.skipif(JAVA is None, reason=NEEDS_JAVA)
def test_every_page_passes_the_nu_html_checker(site: Path, tmp_path: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 100
    assert nu_errors({str(page.relative_to(site)): page for page in pages}, tmp_path) == []


# -- axe-core ----------------------------------------------------------------------------
def axe_on(page, url: str) -> list[str]:
    """axe's violations on `url`, opened in the process's axe tab (conftest axe_page)."""
    page.goto(url)
    return axe_violations(page, url)


@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
@pytest.mark.parametrize("scope", SCOPES)
def test_axe_finds_no_violation_on_any_kind_of_page(sites: dict[str, Path], axe_page,
                                                    scope: str) -> None:
    pages = pages_to_check(sites, scope)
    found = {name: axe_on(axe_page, path.as_uri()) for name, path in pages.items()}
    assert {name: v for name, v in found.items() if v} == {}
    assert len(found) == len(PAGES) * (1 if scope == "one" else len(LANGUAGES))


def test_axe_reports_a_violation_when_there_is_one(tmp_path: Path, axe_page) -> None:
    """The gate above would pass on a page axe never looked at: show it looks."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><title>x</title><img src=x.png>", encoding="utf-8")
    ids = {v.split(" ", 1)[0] for v in axe_on(axe_page, bad.as_uri())}
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
    root = site.resolve()
    pages = {page: parse(page) for page in root.rglob("*.html")}
    # Thousands of links share a few hundred targets: each looked up once.
    is_dir, is_file = functools.cache(os.path.isdir), functools.cache(os.path.isfile)
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
                target = root / unquote(parts.path[len(base_path):])
            else:
                target = page.parent / unquote(parts.path)
            if parts.path.endswith("/") or is_dir(target):
                target = target / "index.html"
            # The builder writes no symbolic links: a path's own ".." say where it leads
            # (resolve() read every folder on the way of every link, a third of the test).
            target = Path(os.path.normpath(target))
            where = f"{page.relative_to(root)}: {link}"
            if root not in target.parents or not is_file(target):
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
