"""The built site in headless Chromium: rendered content, console errors, screenshots."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sitebuilds


def open_page(site_tab, url: str, width: int):
    """The page at `url` loaded afresh in the process's tab (conftest), `width` pixels
    wide; the problems list emptied first."""
    page, problems = site_tab
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
def test_pages_render_in_chromium(tmp_path_factory: pytest.TempPathFactory, site_tab,
                                  tmp_path: Path, path: str, checks: list[str]) -> None:
    url = (sitebuilds.sample_site(tmp_path_factory) / path).as_uri()
    name = path.replace("/", "_").removesuffix("_index.html")
    for width, suffix in ((1280, "desktop"), (390, "phone")):
        page, problems = open_page(site_tab, url, width)
        dom = page.content()
        for pattern in checks:
            assert re.search(pattern, dom, re.DOTALL), (pattern, width)
        shot = tmp_path / f"{name}-{suffix}.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 5000
        assert problems == []


def test_the_tab_hears_what_a_page_throws_logs_and_fails_to_load(site_tab,
                                                                  tmp_path: Path) -> None:
    """The tests above would pass in a tab that heard nothing: show it hears each kind
    of problem, in the tab conftest shares with other modules."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>x</title><img src=missing.png alt=x>"
                   "<script>console.error('logged'); throw new Error('thrown')</script>",
                   encoding="utf-8")
    _, problems = open_page(site_tab, bad.as_uri(), 1280)
    assert {problem.split(" ", 1)[0] for problem in problems} == {
        "console", "failed:", "uncaught:"}, problems
