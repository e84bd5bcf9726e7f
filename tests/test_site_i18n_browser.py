"""The translated sites in Chromium (issue 25 items 2 and 7): the right-to-left one is
laid out from the right; the scripts speak the page's language. The Nu Html Checker
and axe-core over the same builds, every kind of page in every language: test_site_quality.py.
Screenshots at 1280 and 390 px go to each test's folder (the tests' artifacts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import NEEDS_CHROMIUM, heard
from sitebuilds import NOW, language_site, language_sites
from sitechecks import CHROMIUM

SEARCH = "events/search/index.html"
EVENT = "event/holiday-messiah-sing-along-2026/index.html"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """German from calendar.yaml, French and Arabic from `build --locale` (sitebuilds,
    the builds the quality gates check)."""
    return language_sites(tmp_path_factory, ("de", "fr")) | {
        "ar": language_site(tmp_path_factory, "ar-001")}


@pytest.fixture
def page(clocked_page):
    """The process's clocked tab (conftest), its pages read on their build day, and
    nothing reported by them (`heard`)."""
    clocked_page.clock.set_fixed_time(NOW)
    clocked_page.set_viewport_size({"width": 1280, "height": 900})
    with heard(clocked_page) as problems:
        yield clocked_page
    assert problems == []


def box(page, selector: str) -> dict:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


@pytest.mark.slow  # the Arabic site measured in Chromium at two widths
@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
def test_right_to_left_pages_are_laid_out_from_the_right(sites: dict[str, Path], page,
                                                         tmp_path: Path) -> None:
    for language in ("ar", "de"):
        rtl = language == "ar"
        page.goto((sites[language] / "index.html").as_uri())
        assert page.evaluate("getComputedStyle(document.body).direction") == (
            "rtl" if rtl else "ltr")
        # The site's name at the start of the header, the menu after it.
        title, nav = box(page, ".site-title"), box(page, ".site-header nav")
        assert (title["x"] > nav["x"]) is rtl
        assert (title["x"] + title["width"] > 1280 / 2) is rtl
        # A list item: the date badge at the start, the text after it.
        badge, summary = box(page, ".date-badge"), box(page, ".event-summary")
        assert (badge["x"] > summary["x"]) is rtl
        page.goto((sites[language] / "events/month/2026-12/index.html").as_uri())
        first, last = box(page, "thead th:first-child"), box(page, "thead th:last-child")
        assert (first["x"] > last["x"]) is rtl
        # Every bar going on into the next week row (the ten-day festival) reaches
        # the end of its row, the left in Arabic: the last cell's inner edge (bars
        # sit within the cells' padding, as in left-to-right pages).
        if rtl:
            page.goto((sites[language] / "events/month/2027-01/index.html").as_uri())
            gaps = page.locator(".bar.continues").evaluate_all("""bars => bars.map(e => {
                const end = e.closest('tr').lastElementChild, style = getComputedStyle(end);
                return e.getBoundingClientRect().left - end.getBoundingClientRect().left
                    - parseFloat(style.paddingLeft) - parseFloat(style.borderLeftWidth);
            })""")
            assert gaps and all(gap <= 1 for gap in gaps), gaps
    for width, suffix in ((1280, "desktop"), (390, "phone")):
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in (("home", "index.html"),
                           ("month", "events/month/2026-12/index.html"),
                           ("event", EVENT)):
            page.goto((sites["ar"] / path).as_uri())
            shot = tmp_path / f"ar-{name}-{suffix}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000


@pytest.mark.skipif(CHROMIUM is None, reason=NEEDS_CHROMIUM)
def test_search_answers_in_the_pages_language(sites: dict[str, Path], page) -> None:
    page.goto((sites["de"] / SEARCH).as_uri())
    assert page.locator("#search-status").inner_text() == (
        "Geben Sie ein Wort ein oder wählen Sie einen Filter.")
    page.fill("#search-q", "lantern")
    page.check("#search-free")
    page.wait_for_function("document.querySelector('#search-status').textContent"
                           ".includes('gefunden')", timeout=5000)
    assert page.locator("#search-status").inner_text() == "3 Veranstaltungen gefunden."
    # Dates as German readers write them (the browser's Intl, told the page's lang).
    when = page.locator("#search-results li time").first.inner_text()
    assert when.startswith("Sa., 19. Dez. 2026") and "17:00" in when
    page.goto((sites["ar"] / SEARCH).as_uri())
    page.fill("#search-q", "lantern")
    page.check("#search-free")
    page.wait_for_function("document.querySelector('#search-status').textContent"
                           ".includes('مطابقة')", timeout=5000)
    # Three is a "few" in Arabic: its own form.
    assert page.locator("#search-status").inner_text() == "3 فعاليات مطابقة."
