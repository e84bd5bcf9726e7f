"""The list snapshots' representer (site/snapshots.py `ListSnapshots._context`): one per
catalog version, so the venues, organizers and terms that events share are represented
once per version, and an edit (a new version) is never answered from the old one's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import SAMPLE, site_options

from calendar_app.catalog import lists, query
from calendar_app.catalog.represent import Representer
from calendar_app.model.resources import RESOURCES
from calendar_app.site import Builder
from calendar_app.store.locations import DEFAULT_BASE_PATH

REST = "wp-json/tribe/events/v1"
BASE_URL = "https://example.org/calendar/"


def live_list(builder: Builder, raw: dict) -> bytes:
    """The answer a fresh, unmemoized representer gives, as the live interface would."""
    reader = builder.reader
    catalog = reader.catalog
    public = str(catalog.settings.get("url") or BASE_URL)
    rep = Representer(catalog, public, BASE_URL.rstrip("/") + DEFAULT_BASE_PATH)
    ctx = query.Context(reader, catalog.current, rep, None)
    return lists.answer(ctx, RESOURCES["events"], raw).text.encode("utf-8")


def test_one_representer_per_version_and_a_new_one_after_an_edit(tmp_path: Path) -> None:
    content = shutil.copytree(SAMPLE, tmp_path / "content")
    out = tmp_path / "public"
    builder = Builder(site_options(content, out, tmp_path / "cache", BASE_URL))
    builder.workers = 1  # the list snapshots' state is then this process's
    try:
        assert not builder.build().problems
        snapshots, reader = builder.lists, builder.reader
        first = snapshots._context(reader).rep
        assert snapshots._context(reader).rep is first  # kept within a version
        listed = (out / f"{REST}/events.json").read_bytes()
        assert listed == live_list(builder, {})
        venue = next(e["venue"] for e in json.loads(listed)["events"] if e["venue"])
        embed = (out / f"{REST}/events/embed/venue/{venue['slug']}.json").read_bytes()
        assert venue["venue"].encode() in embed

        path = next(p for p in (content / "venues").glob("*.yaml")
                    if f"slug: {venue['slug']}\n" in p.read_text())
        path.write_text(path.read_text().replace(f"name: {venue['venue']}\n",
                                                 "name: Renamed Hall é\n"))
        builder.reader.catalog.refresh([str(path.relative_to(content))])
        assert not builder.build().problems
        assert snapshots._context(reader).rep is not first  # a new version, a new one
        renamed = (out / f"{REST}/events.json").read_bytes()
        assert renamed == live_list(builder, {})
        assert renamed != listed
        body = json.loads(renamed)
        names = {e["venue"]["venue"] for e in body["events"] if e["venue"]}
        assert "Renamed Hall é" in names and venue["venue"] not in names
        embed = (out / f"{REST}/events/embed/venue/{venue['slug']}.json").read_bytes()
        assert embed == live_list(builder, {"per_page": "50", "venue": str(venue["id"])})
        assert b"Renamed Hall" in embed and venue["venue"].encode() not in embed
    finally:
        builder.close()
