"""The static site at its edges: a series with several dates on one day gives each its
own URL everywhere (issue 20, item 19); the builder refuses missing content and never
removes what it cannot account for (item 22)."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import BASE, REPO_ROOT, SAMPLE, git, site_options
from schemaorg_check import check

from calendar_app.http.app import create_app
from calendar_app.site import Builder, build, command
from calendar_app.store.starter import BUNDLED_CONTENT

SITE = "https://example.org/calendar/"  # the builder's, in the tests (site_options)
API_SITE = "https://calendar.example.org/"  # the sample's calendar.yaml
SLUG = "our-town"
# Evenings at 19:30 (Los Angeles) from Thursday 4 to Sunday 7 March 2027, with
# matinees: Friday's at 14:00, Saturday's three at 14:00 (one rdate moved there from
# 13:00, the evening moved there too), Sunday's cancelled.
SERIES = """\
id: 960
title: 'Riverside Players: Our Town'
slug: our-town
status: publish
start_date: 2027-03-04 19:30:00
end_date: 2027-03-04 21:30:00
venue: the-blue-lantern
recurrence:
  rrule: FREQ=DAILY;COUNT=4
  rdate:
    - 2027-03-05 14:00:00
    - 2027-03-06 13:00:00
    - 2027-03-06 14:00:00
    - 2027-03-07 14:00:00
  changes:
    '2027-03-06 13:00:00':
      start_date: 2027-03-06 14:00:00
    '2027-03-06 19:30:00':
      start_date: 2027-03-06 14:00:00
    '2027-03-07 14:00:00':
      cancelled: true
"""
# Each listed date's last URL part, in date order (the first of a day keeps the day).
DAYS = ["2027-03-04", "2027-03-05", "2027-03-05-1930", "2027-03-06", "2027-03-06-1400",
        "2027-03-06-1400-2", "2027-03-07-1930"]


def occurrence_urls(text: str) -> list[str]:
    return re.findall(rf"event/{SLUG}/(\d{{4}}-\d\d-\d\d[\d-]*)/", text)


# -- item 19: one URL per occurrence, in the interface ------------------------------------
@pytest.fixture
def app(config: dict, content: Path):
    (content / "events" / f"{SLUG}.yaml").write_text(SERIES)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "a play with matinees")
    return create_app(config)


def test_interface_gives_each_occurrence_of_a_day_its_own_url(client) -> None:
    body = client.get(f"{BASE}/events?start_date=2027-03-01&end_date=2027-03-31"
                      "&per_page=50").get_json()
    ours = [e for e in body["events"] if e.get("series_id") == 960]
    assert [e["url"] for e in ours] == [f"{API_SITE}event/{SLUG}/{d}/" for d in DAYS]
    for listed in ours:  # a single read answers the same URL, in its JSON-LD too
        single = client.get(f"{BASE}/events/{listed['id']}").get_json()
        assert single["url"] == listed["url"]
        assert single["json_ld"]["url"] == listed["url"]


# -- item 19: one page per occurrence, on the site ---------------------------------------
def small_calendar(target: Path, series: str = SERIES) -> Path:
    """The sample's settings and one venue, plus `series`."""
    (target / "venues").mkdir(parents=True)
    (target / "events").mkdir()
    shutil.copy(SAMPLE / "calendar.yaml", target / "calendar.yaml")
    shutil.copy(SAMPLE / "venues" / "the-blue-lantern.yaml", target / "venues")
    (target / "events" / f"{SLUG}.yaml").write_text(series)
    return target


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("matinees")
    report = build(site_options(small_calendar(tmp / "content"), tmp / "public",
                                tmp / "cache"))
    assert report.written and not report.problems
    return tmp / "public"


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def json_ld(html: str) -> dict:
    (found,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html,
                          re.DOTALL)
    return json.loads(found)


def test_each_occurrence_of_a_day_has_its_own_page_and_json_ld(site: Path) -> None:
    folder = site / "event" / SLUG
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == DAYS
    starts = []
    for day in DAYS:
        html = read(site, f"event/{SLUG}/{day}/index.html")
        ld = json_ld(html)
        assert [f for f in check(ld) if f.severity == "error"] == []
        assert ld["url"] == f"{SITE}event/{SLUG}/{day}/"
        assert f'<link rel="canonical" href="{SITE}event/{SLUG}/{day}/">' in html
        starts.append(ld["startDate"])
    assert starts == ["2027-03-04T19:30:00-08:00", "2027-03-05T14:00:00-08:00",
                      "2027-03-05T19:30:00-08:00", "2027-03-06T14:00:00-08:00",
                      "2027-03-06T14:00:00-08:00", "2027-03-06T14:00:00-08:00",
                      "2027-03-07T19:30:00-08:00"]


def test_sitemap_snapshots_and_feeds_name_each_occurrence_once(site: Path) -> None:
    locs = re.findall(r"<loc>(.*?)</loc>", read(site, "sitemap.xml"))
    assert len(locs) == len(set(locs))
    assert [u for u in locs if "/event/our-town/20" in u] == [
        f"{SITE}event/{SLUG}/{d}/" for d in DAYS]
    listed = json.loads(read(site, "wp-json/tribe/events/v1/events.json"))
    assert [occurrence_urls(e["url"])[0] for e in listed["events"]] == DAYS
    atom = ET.fromstring(read(site, "feed.xml"))
    links = [e.get("href") for e in atom.iter("{http://www.w3.org/2005/Atom}link")]
    assert [x for x in links if SLUG in x] == [f"{SITE}event/{SLUG}/2027-03-04/"]
    index = read(site, "events/search/search-index.js")
    assert sorted(occurrence_urls(index)) == DAYS


def test_series_and_day_pages_link_each_occurrence(site: Path) -> None:
    series = read(site, f"event/{SLUG}/index.html")
    section = series.split('<h2 id="dates-heading">Upcoming dates</h2>', 1)[1]
    assert occurrence_urls(section.split("</section>", 1)[0]) == DAYS
    saturday = read(site, "events/2027-03-06/index.html")
    assert sorted(set(occurrence_urls(saturday))) == DAYS[3:6]
    march = read(site, "events/month/2027-03/index.html")
    assert sorted(set(occurrence_urls(march))) == DAYS
    current = read(site, f"event/{SLUG}/2027-03-05-1930/index.html")
    assert (f'<a href="../../../event/{SLUG}/2027-03-05-1930/index.html" '
            'aria-current="page">' in current)


def test_adding_a_matinee_under_a_running_builder_matches_a_full_build(
        tmp_path: Path) -> None:
    """The evening's URL moves to make room for the day's first date: the running builder
    rewrites and removes exactly what a full build would."""
    without = SERIES.replace("    - 2027-03-05 14:00:00\n", "")
    content = small_calendar(tmp_path / "content", without)
    out = tmp_path / "public"
    builder = Builder(site_options(content, out, tmp_path / "cache"))
    try:
        builder.build()
        assert (out / f"event/{SLUG}/2027-03-05/index.html").exists()
        assert not (out / f"event/{SLUG}/2027-03-05-1930").exists()
        (content / "events" / f"{SLUG}.yaml").write_text(SERIES)
        builder.reader.catalog.refresh([f"events/{SLUG}.yaml"])
        report = builder.build()
        assert report.written and not report.problems, report.problems
    finally:
        builder.close()
    fresh = tmp_path / "fresh"
    build(site_options(content, fresh, tmp_path / "other"))
    assert tree_bytes(out) == tree_bytes(fresh)
    assert json_ld(read(out, f"event/{SLUG}/2027-03-05/index.html"))["startDate"] == (
        "2027-03-05T14:00:00-08:00")


def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


# -- item 22: no content, no site lost ---------------------------------------------------
def files(root: Path) -> dict[str, bytes]:
    """Every file under `root`, the manifest included: what must stay untouched."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site built from the small calendar: the output an operator would lose."""
    tmp = tmp_path_factory.mktemp("published")
    assert command.main(["--content", str(small_calendar(tmp / "content")),
                         "--out", str(tmp / "public")]) == 0
    return tmp / "public"


@pytest.fixture
def published(small_site: Path, tmp_path: Path) -> Path:
    shutil.copytree(small_site, tmp_path / "public")
    return tmp_path / "public"


def test_missing_content_folder_fails_and_leaves_the_site(published: Path,
                                                          tmp_path: Path) -> None:
    before = files(published)
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "build.py"), "--content", str(tmp_path / "no/such"),
         "--out", str(published)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert f"error: no content folder at {tmp_path / 'no/such'}" in result.stderr
    assert files(published) == before
    assert not (tmp_path / "no").exists()  # no cache folder made beside it either


def test_folder_without_a_calendar_fails_and_leaves_the_site(
        published: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    before = files(published)
    empty = tmp_path / "empty"
    (empty / "events").mkdir(parents=True)  # a folder, but no record in it
    (empty / "events" / ".hidden.yaml").write_text("id: 1\n")
    assert command.main(["--content", str(empty), "--out", str(published)]) == 2
    assert "holds no calendar" in capsys.readouterr().err
    assert files(published) == before


def test_without_content_the_sample_is_built_only_when_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    assert command.main([]) == 2
    err = capsys.readouterr().err
    assert "--content DIR" in err and "--sample" in err
    assert list(tmp_path.iterdir()) == []  # no public/, no cache
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    assert command.content_of(parser.parse_args(["--sample"])) == BUNDLED_CONTENT
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "calendar.yaml").write_text("title: Mine\n")
    assert command.content_of(parser.parse_args([])) == Path("content")
    with pytest.raises(SystemExit):  # one or the other
        parser.parse_args(["--sample", "--content", "content"])


def test_a_build_that_would_remove_more_than_it_makes_needs_force(
        published: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    before = files(published)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "calendar.yaml").write_text("title: Another calendar\ntimezone: UTC\n")
    args = ["--content", str(bare), "--out", str(published)]
    assert command.main(args) == 1
    err = capsys.readouterr().err
    assert "would remove" in err and "--force" in err and "nothing written" in err
    assert files(published) == before
    assert command.main([*args, "--force"]) == 0
    assert not (published / "event" / SLUG).exists()
    assert "removed" in capsys.readouterr().err


def test_a_folder_no_build_made_is_not_written_into_without_force(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    content = small_calendar(tmp_path / "content")
    mine = tmp_path / "mine"
    (mine / "notes").mkdir(parents=True)
    (mine / "index.html").write_text("my own page")
    (mine / "notes" / "todo.txt").write_text("keep me")
    before = files(mine)
    args = ["--content", str(content), "--out", str(mine)]
    assert command.main(args) == 1
    assert "not the output of an earlier build" in capsys.readouterr().err
    assert files(mine) == before
    # A folder with only hidden entries (a fresh clone of a pages branch) is fine.
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    assert command.main(["--content", str(content), "--out", str(clone)]) == 0
    # --force writes over the first folder and removes none of its own files.
    assert command.main([*args, "--force"]) == 0
    assert (mine / "notes" / "todo.txt").read_text() == "keep me"
    assert (mine / "event" / SLUG / "index.html").exists()
