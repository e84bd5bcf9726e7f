"""The built site in headless Chromium: rendered content, console errors, screenshots."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sitebuilds


@pytest.fixture(scope="module")
def tab(browser):
    """One tab for the module (a new one costs a browser context), and everything it
    reported on the console, threw, or failed to load since the last navigation."""
    page = browser.new_page(viewport={"width": 1280, "height": 1600})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: "
                                                        f"{message.text}"))
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    yield page, problems
    page.close()


def open_page(tab, url: str, width: int):
    """The page at `url` loaded afresh in the module's tab, `width` pixels wide; the
    problems list emptied first."""
    page, problems = tab
    page.goto("about:blank")
    problems.clear()
    page.set_viewport_size({"width": width, "height": 1600})
    page.goto(url)
    return page, problems


@pytest.mark.parametrize("path, checks", [
    ("events/month/2026-12/index.html",
     [r'data-date="2026-12-13".{0,900}?Holiday Messiah Sing-Along']),
    ("event/holiday-messiah-sing-along-2026/index.html",
     [r"<h1[^>]*>Holiday Messiah Sing-Along</h1>", r"Add to calendar"]),
    ("events/category/music/index.html", [r"<h1>Music</h1>", r"Jazz Night"]),
    ("events/week/2026-12-13/index.html",
     [(r'<ol class="week-day" aria-label="Sunday, December 13, 2026">\s*<li class="slot"'
      r'[^>]*><a [^>]*><time [^>]*>3:00 pm</time> Holiday Messiah Sing-Along')]),
    ("events/photo/index.html", [r'<li class="photo-card[^"]*">\s*<h2 class="event-title">']),
    ("embed/index.html", [r"<h1>Embed this calendar</h1>", r'<iframe class="embed-preview"']),
    ("embed/list/index.html", [r'<ol class="embed-list">']),
    ("embed/month/2026-12/index.html", [r'<table class="embed-month">']),
])
def test_pages_render_in_chromium(tmp_path_factory: pytest.TempPathFactory, tab,
                                  tmp_path: Path, path: str, checks: list[str]) -> None:
    url = (sitebuilds.sample_site(tmp_path_factory) / path).as_uri()
    name = path.replace("/", "_").removesuffix("_index.html")
    for width, suffix in ((1280, "desktop"), (390, "phone")):
        page, problems = open_page(tab, url, width)
        dom = page.content()
        for pattern in checks:
            assert re.search(pattern, dom, re.DOTALL), (pattern, width)
        shot = tmp_path / f"{name}-{suffix}.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 5000
        assert problems == []
