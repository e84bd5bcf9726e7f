"""What the builder works out once per build or per record (issue 26's cold build):
the memos answer for the record they were made from, never for its edited version."""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import compiled_templates
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from calendar_app.model import markup
from calendar_app.model.records import Record
from calendar_app.site import Builder, Options
from calendar_app.site.model import address_lines
from calendar_app.store import parallel

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
VENUE = "venues/canyon-crest-community-hall.yaml"
EVENT_PAGE = "event/december-makers-market-2026/index.html"


def venue(**changes: object) -> Record:
    data = {"id": 46, "venue": "Hall", "slug": "hall", "address": "5225 Canyon Crest Drive",
            "city": "Riverside", "state": "CA", "zip": "92507", "country": "United States"}
    return Record("venues", {**data, **changes}, "venues/hall.yaml")


def test_plain_text_cached_is_what_it_was() -> None:
    # Markup and str arguments of the same text share a cache entry: the answer is a
    # plain str either way (re.sub returns one), as before the cache.
    for html in ('Tom > Jerry "live"', "<p>a</p><p>b &amp; c</p>", "x&nbsp;y", ""):
        for value in (Markup(html), html):
            for keep in (False, True):
                made = markup.plain_text(value, keep)
                assert made == markup.plain_text.__wrapped__(value, keep)
                assert type(made) is str
    assert markup.plain_text("<p>a</p><p>b &amp; c</p>") == "a b & c"


def test_address_lines_follow_an_edited_venue() -> None:
    first = venue()
    lines = address_lines(first, territory="US")
    assert lines == ["5225 Canyon Crest Drive", "Riverside, CA 92507", "United States"]
    lines.append("scribbled on by a caller")
    assert address_lines(first, territory="US") == lines[:-1]  # a copy was handed out
    assert address_lines(first, with_name=True, territory="US")[0] == "Hall"
    moved = venue(address="1 Main Street")  # the record a changed file becomes
    assert address_lines(moved, territory="US")[0] == "1 Main Street"
    assert address_lines(first, territory="US")[0] == "5225 Canyon Crest Drive"


def _freeze_count(_item: int) -> int:
    return gc.get_freeze_count()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (not on Windows)")
def test_a_forked_worker_freezes_what_it_inherited() -> None:
    before = gc.get_freeze_count()
    counts = parallel.run(list(range(6)), _freeze_count, lambda item, n: item % n, workers=2)
    assert counts[0::2] == [before] * 3  # the parent's share: nothing frozen here
    assert all(count > 0 for count in counts[1::2])  # the child's
    assert gc.get_freeze_count() == before


def _pid_after(seconds: float):
    def render(item: int) -> tuple[int, int]:
        time.sleep(seconds)
        return item, os.getpid()
    return render


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (not on Windows)")
def test_pulled_runs_end_together_and_keep_the_order() -> None:
    """Items are taken in runs by whichever process is free: results in the items'
    order, each item once, both processes busy, the child's caches merged."""
    merged: list = []
    steps: list[int] = []
    items = list(range(300))
    # The parent's items cost nothing: with fixed shares the child would do half.
    out = parallel.run_pulled(items, _pid_after(0.0005), workers=2,
                              collect=lambda: os.getpid(), merge=merged.append,
                              step=steps.append)
    assert [item for item, _ in out] == items
    pids = [pid for _, pid in out]
    assert os.getpid() in pids and merged and merged[0] in pids and len(set(pids)) == 2
    assert sum(steps) == len(items)
    # Runs of 64 neighbours: an event's outputs sit together (few process switches).
    switches = sum(1 for a, b in itertools.pairwise(pids) if a != b)
    assert switches <= len(items) // 64


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (not on Windows)")
@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=700), st.integers(min_value=1, max_value=3))
def test_pulled_runs_any_count(count: int, workers: int) -> None:
    items = list(range(count))
    assert parallel.run_pulled(items, lambda i: i * 2, workers=workers) == [2 * i for i in items]


def _fail_at(item: int) -> int:
    if item == 150:
        raise ValueError("boom")
    return item


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (not on Windows)")
def test_a_failing_pulled_item_fails_the_run() -> None:
    with pytest.raises((ValueError, RuntimeError)):
        parallel.run_pulled(list(range(400)), _fail_at, workers=2)


def _build(content: Path, out: Path, cache: Path) -> Builder:
    builder = Builder(Options(content=content, out=out, now=NOW, cache_dir=cache,
                              base_url="https://example.org/", progress=False,
                              compiled_templates=compiled_templates()))
    builder.workers = 1
    assert not builder.build().problems
    return builder


def test_watch_rebuild_shows_an_edited_venue_and_category(tmp_path: Path) -> None:
    # --watch keeps one builder: its URL and address memos see the edited records.
    content = tmp_path / "content"
    shutil.copytree(REPO / "content", content)
    builder = _build(content, tmp_path / "public", tmp_path / "cache")
    try:
        page = (tmp_path / "public" / EVENT_PAGE).read_text()
        assert "5225 Canyon Crest Drive" in page
        assert "category/community/markets-fairs/index.html" in page
        path = content / VENUE
        path.write_text(path.read_text().replace("5225 Canyon Crest Drive", "12 Orange Row"))
        category = content / "categories" / "markets-fairs.yaml"  # no parent: a new URL
        category.write_text(category.read_text().replace("parent: community\n", ""))
        builder.reader.catalog.refresh([VENUE, "categories/markets-fairs.yaml"])
        assert not builder.build().problems
        page = (tmp_path / "public" / EVENT_PAGE).read_text()
        assert "12 Orange Row" in page and "5225 Canyon Crest Drive" not in page
        assert "events/category/markets-fairs/index.html" in page
        assert "community/markets-fairs" not in page
    finally:
        builder.close()
