"""The built site in headless Chromium: rendered content, console errors, screenshots."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from calendar_app.site import Options, build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    shutil.copytree(REPO / "content", tmp / "content")
    build(Options(content=tmp / "content", out=tmp / "public", now=NOW,
                  base_url="https://example.org/calendar/", cache_dir=tmp / "cache",
                  progress=False))
    return tmp / "public"


def chromium(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         *extra, page.as_uri()],
        capture_output=True, text=True, timeout=90, check=False)


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line or "Uncaught" in line or "Failed to load resource" in line]


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
def test_pages_render_in_chromium(site: Path, tmp_path: Path, path: str,
                                  checks: list[str]) -> None:
    page = site / path
    dom = chromium(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    for pattern in checks:
        assert re.search(pattern, dom.stdout, re.DOTALL), pattern
    assert console_errors(dom.stderr) == []
    name = path.replace("/", "_").removesuffix("_index.html")
    for width, suffix in ((1280, "desktop"), (390, "phone")):
        shot = tmp_path / f"{name}-{suffix}.png"
        result = chromium(page, tmp_path, f"--screenshot={shot}",
                          f"--window-size={width},1600", "--hide-scrollbars")
        assert result.returncode == 0, result.stderr[-2000:]
        assert shot.exists() and shot.stat().st_size > 5000
        assert console_errors(result.stderr) == []
