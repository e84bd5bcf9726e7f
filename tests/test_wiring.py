"""The seams of issue 21 (items 5 and 6): a build reads through a `reader.Reader` and
opens none of the server's parts; a served calendar's parts are subscribed to each
other in one place."""

from __future__ import annotations

from pathlib import Path

from conftest import NOW, SAMPLE, make_repo

from calendar_app.http.app import create_app
from calendar_app.site import Builder, Options


def test_a_build_opens_no_index_journal_or_users(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    cache = tmp_path / "cache"
    builder = Builder(Options(content=content, out=tmp_path / "public", now=NOW,
                              base_url="https://example.org/", cache_dir=cache,
                              progress=False))
    try:
        report = builder.build()
    finally:
        builder.close()
    assert report.written and not report.problems
    assert (tmp_path / "public" / "wp-json/tribe/events/v1/events.json").is_file()
    # The records' start-up cache is shared with a server; nothing of the server is made.
    assert not {"journal", "whoosh", "whoosh-manifest.pickle"} & {
        p.name for p in cache.iterdir()}


def test_a_served_calendar_is_subscribed_in_the_wiring(tmp_path: Path) -> None:
    app = create_app({"CONTENT_DIR": str(make_repo(tmp_path, SAMPLE)), "TESTING": True,
                      "USERS_FILE": str(tmp_path / "users.yaml"), "NOW": NOW})
    cal = app.extensions["calendar"]
    assert cal.catalog.listeners == [cal.index.on_catalog_change,
                                     cal.journal.on_catalog_change]
    assert cal.tree.lock_hooks == [cal.journal.catch_up]
    assert cal.tree.recovery_hooks == [cal.catalog.refresh]
    assert cal.reader.catalog is cal.catalog and cal.reader.clock is cal.clock
