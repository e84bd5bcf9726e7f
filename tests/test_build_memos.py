"""What the builder works out once per build or per record (issue 26's cold build):
the memos answer for the record they were made from, never for its edited version."""

from __future__ import annotations

import datetime as dt
import gc
import os
import shutil
from pathlib import Path

import pytest
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


def _build(content: Path, out: Path, cache: Path) -> Builder:
    builder = Builder(Options(content=content, out=out, now=NOW, cache_dir=cache,
                              base_url="https://example.org/", progress=False))
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
