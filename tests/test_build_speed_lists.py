"""The list snapshots' representer (site/snapshots.py `ListSnapshots._context`): one per
catalog version, so the venues, organizers and terms that events share are represented
once per version, and an edit (a new version) is never answered from the old one's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLE, site_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.catalog import lists, query
from calendar_app.catalog.represent import Representer
from calendar_app.model.resources import RESOURCES
from calendar_app.site import Builder
from calendar_app.site.memo import BuildRepresenter
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


@pytest.fixture(scope="module")
def sample_builder(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("linked")
    content = shutil.copytree(SAMPLE, tmp / "content")
    builder = Builder(site_options(content, tmp / "public", tmp / "cache", BASE_URL))
    yield builder
    builder.close()


SLUGS = st.one_of(
    st.none(), st.integers(-2, 2), st.text(max_size=12),
    st.sampled_from(["the-blue-lantern", "music", "jazz", "nope", ""]),
    st.lists(st.one_of(st.sampled_from(["the-blue-lantern", "music", "jazz", "classical",
                                        "nope", ""]), st.text(max_size=6),
                       st.integers(0, 3), st.lists(st.text(max_size=3), max_size=2),
                       st.dictionaries(st.text(max_size=2), st.integers(), max_size=1)),
             max_size=4))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collection=st.sampled_from(["venues", "organizers", "categories", "tags"]),
       slugs=SLUGS)
def test_memoized_links_are_the_plain_lookups(sample_builder: Builder, collection: str,
                                              slugs: object) -> None:
    """Whatever a file names (a list holding lists or mappings included), the memoized
    lookup gives what the plain one gives, or fails as it fails, each call a list of
    the caller's own."""
    catalog = sample_builder.reader.catalog
    plain, memo = Representer(catalog, BASE_URL, "r"), BuildRepresenter(catalog, BASE_URL, "r")
    try:
        expected = plain.linked(collection, slugs)
    except TypeError:
        with pytest.raises(TypeError):
            memo.linked(collection, slugs)
        return
    first = memo.linked(collection, slugs)
    first.append(None)  # the caller's list: the next answer is not changed by it
    assert memo.linked(collection, slugs) == expected == first[:-1]


def test_memoized_links_follow_a_new_version(tmp_path: Path) -> None:
    content = shutil.copytree(SAMPLE, tmp_path / "content")
    builder = Builder(site_options(content, tmp_path / "public", tmp_path / "cache", BASE_URL))
    try:
        catalog = builder.reader.catalog
        memo = BuildRepresenter(catalog, BASE_URL, "r")
        assert memo.linked("venues", ["new-hall", "the-blue-lantern"])[0].slug == (
            "the-blue-lantern")
        (content / "venues/new-hall.yaml").write_text(
            "id: 9001\nname: New Hall\nslug: new-hall\nstatus: publish\n")
        catalog.refresh(["venues/new-hall.yaml"])
        assert [r.slug for r in memo.linked("venues", ["new-hall", "the-blue-lantern"])] == [
            "new-hall", "the-blue-lantern"]
    finally:
        builder.close()
