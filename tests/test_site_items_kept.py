"""Each event's first movable list item outlives the recent-items bound
(render.cached_item, `EventView.kept_item`, a render.ItemShape): an event dropped from
the recent ones has its items on later pages made from it, not rendered again, with
the bytes the macro gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import site_options
from markupsafe import Markup
from test_build_memory import _content, _files

from calendar_app.site import Builder, memo, render

LIMIT = 4  # recent events whose items are kept: far fewer than the events


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _content(tmp_path_factory.mktemp("items"))


def _build(content: Path, out: Path, monkeypatch: pytest.MonkeyPatch,
           limit: int) -> tuple[Builder, int]:
    """A one-process build with `limit` recent events; (builder, list items rendered
    by the macro)."""
    monkeypatch.setattr(memo, "RECENT_LIMIT", limit)
    rendered = 0
    cached_item = render.cached_item

    @render.pass_context
    def counting(ctx, event, heading, macro):
        def counted(*args):
            nonlocal rendered
            rendered += 1
            return macro(*args)
        return cached_item(ctx, event, heading, counted)
    monkeypatch.setattr(render, "cached_item", counting)
    builder = Builder(site_options(content, out / "site", out / "cache"))
    builder.workers = 1
    report = builder.build()
    builder.close()
    assert not report.problems and len(report.written) > 500
    return builder, rendered


@pytest.fixture(scope="module")
def limited(content: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Builder, int, Path]:
    """The build with LIMIT recent events both tests look at (builder, list items
    rendered, its site). test_an_edit_drops_the_kept_item refreshes one of its events,
    which takes that event's kept item, nothing the other test counts on."""
    folder = tmp_path_factory.mktemp("small")
    with pytest.MonkeyPatch.context() as monkeypatch:
        builder, rendered = _build(content, folder, monkeypatch, LIMIT)
    return builder, rendered, folder / "site"


def test_dropped_events_derive_items_from_the_kept_one(
        content: Path, limited: tuple[Builder, int, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, whole_rendered = _build(content, tmp_path / "whole", monkeypatch, 10**9)
    small, small_rendered, site = limited
    assert _files(tmp_path / "whole" / "site") == _files(site)
    events = small._last.model.events
    kept = [e for e in events if e.kept_item is not None]
    assert len(kept) > 100 and sum(1 for e in events if e.items) <= LIMIT
    shape = kept[0].kept_item
    heading, link = shape.heading, shape.link
    assert link.startswith("../") and f'<{heading} class="event-title">' in shape.made(
        heading, link)
    # Without the kept items the same small build renders many more: each event again
    # on most list pages after its first (items first made at the site root, the home
    # page, cannot be moved and are made again either way).
    monkeypatch.setattr(render, "_from_kept", lambda *_args: None)
    _, without = _build(content, tmp_path / "without", monkeypatch, LIMIT)
    assert whole_rendered <= small_rendered and small_rendered * 2 < without


def test_an_edit_drops_the_kept_item(limited: tuple[Builder, int, Path]) -> None:
    builder = limited[0]
    model = builder._last.model
    view = next(e for e in model.events if e.kept_item is not None)
    model.refresh_event(view, view.record)
    assert view.kept_item is None and not view.items


def test_items_made_from_shapes_are_the_macros_bytes(
        content: Path, limited: tuple[Builder, int, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item rendered by the macro (nothing derived, nothing made from a shape):
    the same site as the build that makes most items from the kept shapes."""
    monkeypatch.setattr(render, "_from_kept", lambda *_args: None)
    monkeypatch.setattr(render, "_derived", lambda *_args: None)
    _, rendered = _build(content, tmp_path / "macro", monkeypatch, 10**9)
    _, small_rendered, site = limited
    assert _files(tmp_path / "macro" / "site") == _files(site)
    assert small_rendered * 2 < rendered


ITEM = Markup('<article><h3 class="event-title"><a href="../../event/a/index.html">A &amp; B'
              '</a></h3><p>Jazz</p></article>')


def test_a_shape_moves_the_link_and_changes_the_heading() -> None:
    shape = render.ItemShape("h3", "../../event/a/index.html", ITEM)
    assert shape.made("h3", "../../event/a/index.html") == ITEM
    assert shape.made("h2", "../event/a/index.html") == str(ITEM).replace(
        "<h3 ", "<h2 ").replace("</h3>", "</h2>").replace('"../../event', '"../event')
    assert shape.made("h3", "../../event/b/index.html") is None  # another event's page
    assert shape.made("h3", "event/a/index.html") is None  # not up to the root


def test_a_shape_keeps_a_heading_it_cannot_tell_apart() -> None:
    """An excerpt with an h3 of its own: the item is made at other depths under its
    own heading only (the macro renders the other headings)."""
    item = Markup(str(ITEM).replace("<p>Jazz</p>", "<h3>Jazz</h3>"))
    shape = render.ItemShape("h3", "../../event/a/index.html", item)
    assert shape.made("h3", "../event/a/index.html") == str(item).replace('"../../', '"../')
    assert shape.made("h4", "../../event/a/index.html") is None


def test_edits_rebuild_the_items_they_show(content: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """One builder with few recent events (as --watch keeps it): an edited event's
    title and then its venue's name are in every list item after the rebuild, the
    site the same as a fresh build of the edited files."""
    edited = tmp_path / "content"
    shutil.copytree(content, edited)
    monkeypatch.setattr(memo, "RECENT_LIMIT", LIMIT)
    builder = Builder(site_options(edited, tmp_path / "site", tmp_path / "cache"))
    builder.workers = 1
    try:
        assert not builder.build().problems
        for path, old, new in (("events/2026/bulk-3.yaml", "Bulk market 3", "Bulk fair 3"),
                               ("venues/canyon-crest-community-hall.yaml",
                                "name: Canyon Crest Community Hall", "name: Crest Hall")):
            file = edited / path
            file.write_text(file.read_text().replace(old, new))
            builder.reader.catalog.refresh([path])
            assert not builder.build().problems
            fresh = tmp_path / f"fresh-{path.split('/')[0]}"
            _, _ = _build(edited, fresh, monkeypatch, LIMIT)
            assert _files(tmp_path / "site") == _files(fresh / "site")
        page = (tmp_path / "site" / "events/list/index.html").read_text()
        assert "Crest Hall" in page and "Canyon Crest Community Hall" not in page
    finally:
        builder.close()
