"""The builder's memory stays flat in pages written (issue 26: 3.7 GiB at 100,000
events, growing with every page): per-event memos keep only the recent events, and
dropping one changes no byte of the site."""

from __future__ import annotations

import shutil
import tracemalloc
from collections import OrderedDict
from pathlib import Path

import pytest
from conftest import SAMPLE, site_options

from calendar_app.catalog import lists
from calendar_app.site import Builder, memo
from calendar_app.site.memo import Recent

EVENTS = 60  # added to the sample's 57: outputs enough to see growth per page
LIMIT = 8  # Recent's size in these builds: far fewer than the events
ITEMS = 16  # list items (API representations) kept by catalog/lists.py in the reference build


def test_recent_keeps_the_most_recently_used() -> None:
    kept = Recent(3)
    for key in "abc":
        kept[key] = key.upper()
    assert kept.get("a") == "A"  # used: now the newest
    kept["d"] = "D"
    assert list(kept) == ["c", "a", "d"]  # b, the least recently used, went
    assert kept.get("b") is None and kept.get("b", 0) == 0
    kept.pop("c")
    assert list(kept) == ["a", "d"]


def _content(root: Path) -> Path:
    content = root / "content"
    shutil.copytree(SAMPLE, content)
    source = (content / "events/2026/december-makers-market-2026.yaml").read_text()
    for i in range(EVENTS):
        text = (source.replace("id: 102", f"id: {5000 + i}")
                .replace("slug: december-makers-market-2026", f"slug: bulk-{i}")
                .replace("start_date: 2026-12-05", f"start_date: 2026-12-{1 + i % 28:02d}")
                .replace("end_date: 2026-12-06", f"end_date: 2026-12-{1 + i % 28:02d}")
                .replace("title: December Makers Market", f"title: Bulk market {i}")
                .replace("Ceramics,", f"Ceramics number {i},"))
        (content / f"events/2026/bulk-{i}.yaml").write_text(text)
    return content


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file() and p.name != ".build-manifest"}


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _content(tmp_path_factory.mktemp("bulk"))


def _builder(content: Path, out: Path, cache: Path) -> Builder:
    builder = Builder(site_options(content, out, cache))
    builder.workers = 1  # all of it in this process, where tracemalloc sees it
    return builder


@pytest.mark.slow  # traced builds of a generated calendar
def test_memory_flat_in_pages_and_outputs_unchanged(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Unbounded first (every event's representation kept, as before), as reference.
    monkeypatch.setattr(memo, "RECENT_LIMIT", 10**9)
    # ... but few list items (catalog/lists.py): dropped ones are made again, same bytes.
    monkeypatch.setattr(lists, "MAX_ITEMS", ITEMS)
    represent, items_held = lists._represent, []

    def watched(q, chunk):
        made = represent(q, chunk)
        items_held.append(len(q.ctx.view.derive("list-items", OrderedDict)))
        return made
    monkeypatch.setattr(lists, "_represent", watched)
    whole = _builder(content, tmp_path / "whole", tmp_path / "cache-whole")
    assert not whole.build().problems
    whole_model = whole._last.model
    assert len(whole_model.api_bodies) > EVENTS
    assert len(items_held) > 10 and max(items_held) == ITEMS  # reached and held

    monkeypatch.undo()
    # The measured build holds its caches to bounds it passes early, before the first
    # mark, so that what grows between the marks grows with the outputs: the events'
    # representations, list items and shared blocks (memo.Recent) to LIMIT, the list
    # snapshots' items and answers (catalog/lists.py, bounds of 4,096 and 512 that a
    # build this small never reaches: their filling ate the margin, 5.05 MB once) to
    # one. Those two have their own tests (test_lists); dropped ones are made again,
    # same bytes (checked below against the reference build).
    monkeypatch.setattr(memo, "RECENT_LIMIT", LIMIT)
    monkeypatch.setattr(lists, "MAX_ITEMS", 1)
    monkeypatch.setattr(lists.Recent.__init__, "__defaults__", (1,))
    builder = _builder(content, tmp_path / "small", tmp_path / "cache-small")
    render = builder._render_one
    seen: list[tuple[int, int]] = []  # (outputs done, bytes traced) at two moments

    def counted(item):
        made = render(item)
        counted.done += 1
        if counted.done in counted.marks:
            # Traced from the first mark only: tracing slows the build threefold, and
            # what the first quarter allocated is not what this measures.
            if not tracemalloc.is_tracing():
                tracemalloc.start()
            seen.append((counted.done, tracemalloc.get_traced_memory()[0]))
        return made
    counted.done = 0
    counted.marks = set()
    builder._render_one = counted
    plan_and_write = builder._render_and_write

    def traced(todo, current, report):
        counted.marks = {len(todo) // 4, 3 * len(todo) // 4}
        try:
            return plan_and_write(todo, current, report)
        finally:
            tracemalloc.stop()
    builder._render_and_write = traced
    report = builder.build()
    assert not report.problems and len(report.written) > 1000

    (first, low), (last, high) = seen
    per_thousand = (high - low) * 1000 / (last - first)
    # Measured at 60 events (traced from the first mark on): 6.9 MB per 1,000 outputs
    # with every representation kept, 4.7 MB with those bounded and the list caches
    # filling, 2.9-3.1 MB with these bounds. What is left is a few KB per event, kept
    # for the next build (VEVENTs, Markdown renderings: the Stash; each event's first
    # list item: render.cached_item) and lru_caches of texts. An unbounded cache of the
    # events' representations (RECENT_LIMIT unbounded) gives 5.5 MB: the bound sits between.
    assert per_thousand < 4_500_000, f"{per_thousand / 1e6:.1f} MB per 1,000 outputs"
    model = builder._last.model
    for cache in (model.bodies, model.api_bodies, model.snapshots):
        assert 0 < len(cache) <= LIMIT
    # Each event's rendered list items (render.cached_item) only for the recent events.
    assert 0 < len(builder.env.globals["items_kept"]) <= LIMIT
    assert 0 < sum(1 for e in model.events if e.items) <= LIMIT
    assert sum(1 for e in whole_model.events if e.items) > LIMIT  # as before: every event
    assert _files(tmp_path / "small") == _files(tmp_path / "whole")
