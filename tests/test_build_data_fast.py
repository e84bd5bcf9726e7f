"""The builder's data outputs made faster keep their exact bytes: iCalendar TEXT escaping
by chained replaces, JSON lists joined from their items' texts; a cold build signs its
outputs where it renders them, with the signatures the builder would have made."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from conftest import SAMPLE, site_options
from hypothesis import given
from hypothesis import strategies as st

from calendar_app.catalog.represent import Representer, dumps, dumps_joined
from calendar_app.site import Builder, ical, manifest
from calendar_app.site import ahead as ahead_module
from calendar_app.site import builder as builder_module
from calendar_app.site.plan import signature
from calendar_app.store import parallel
from tests.test_site_build import tree_bytes

# Characters that matter to the escaping, mixed with any others.
_TRICKY = st.sampled_from(["\\", ";", ",", "\n", "\r", "\r\n", "\\n", "\x00", "\x1f", "\x7f",
                           "\t", "é", "😀", "/", '"'])
_TEXTS = st.lists(st.one_of(_TRICKY, st.text(max_size=8)), max_size=30).map("".join)


def _reference_text(value: str) -> str:
    """RFC 5545 3.3.11 character by character: what ical.text must give."""
    specials = {"\\": "\\\\", ";": "\\;", ",": "\\,", "\n": "\\n", "\r": ""}
    escaped = "".join(specials.get(c, c) for c in value)
    return re.sub("[\x00-\x08\x0a-\x1f\x7f]", "", escaped)


@given(_TEXTS)
def test_ical_text_escapes_each_character_once(value: str) -> None:
    assert ical.text(value) == _reference_text(value)


def test_ical_text_escapes_a_backslash_before_what_it_adds() -> None:
    assert ical.text("a\\;b,c\nd\re") == "a\\\\\\;b\\,c\\nde"


def _reference_fold(line: str) -> bytes:
    """RFC 5545 3.1: controls dropped, then 75 octets a line, never inside a character."""
    data = re.sub("[\x00-\x08\x0a-\x1f\x7f]", "", line).encode("utf-8")
    parts, start, limit = [], 0, 75
    while len(data) - start > limit:
        cut = start + limit
        while data[cut] & 0xC0 == 0x80:
            cut -= 1
        parts.append(data[start:cut])
        start, limit = cut, 74
    parts.append(data[start:])
    return b"\r\n ".join(parts)


@given(st.lists(st.one_of(_TRICKY, st.text(max_size=40), st.just("x" * 74)), max_size=12)
       .map("".join))
def test_ical_fold_drops_controls_and_splits_as_the_rfc_says(line: str) -> None:
    assert ical.fold(line) == _reference_fold(line)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(), st.sampled_from(["/", "</script>", "a\\/b", "é/😀", "\u2028"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)


@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=5),
       st.lists(st.dictionaries(st.text(max_size=6), _JSON, max_size=4), max_size=5),
       st.text(max_size=8), st.integers(min_value=0, max_value=5))
def test_a_list_joined_from_its_items_texts_is_dumps_of_the_whole(
        others: dict, items: list, name: str, at: int) -> None:
    keys = [k for k in others if k != name]
    at = min(at, len(keys))
    body = {**{k: others[k] for k in keys[:at]}, name: items,
            **{k: others[k] for k in keys[at:]}}
    assert dumps_joined(body, name, [dumps(i) for i in items]) == dumps(body)


def test_a_joined_list_keeps_the_key_order_and_escapes() -> None:
    body = {"events": [{"url": "https://x/é"}, {}], "rest_url": "https://x/y", "total": 2}
    texts = [dumps(i) for i in body["events"]]
    assert dumps_joined(body, "events", texts) == (
        '{"events": [{"url": "https:\\/\\/x\\/\\u00e9"}, {}], '
        '"rest_url": "https:\\/\\/x\\/y", "total": 2}')


def test_a_cold_build_signs_where_it_renders_and_a_rebuild_skips_everything(
        tmp_path: Path, monkeypatch) -> None:
    shutil.copytree(SAMPLE, tmp_path / "content")
    options = site_options(tmp_path / "content", tmp_path / "public", tmp_path / "cache")
    builder = Builder(options)
    planned = builder._outputs_to_render
    signed_when_planned: list[int] = []

    def counting(outputs, *args):
        calls = []
        monkeypatch.setattr(builder_module, "signature",
                            lambda *a: calls.append(1) or signature(*a))
        try:
            return planned(outputs, *args)
        finally:
            monkeypatch.setattr(builder_module, "signature", signature)
            signed_when_planned.append(len(calls))

    monkeypatch.setattr(builder, "_outputs_to_render", counting)
    try:
        first = builder.build()
        last = builder._last
        assert last is not None
        fingerprints, common = last.fingerprints, last.common
        written = manifest.load(options.out)
        assert written == {o.path: [signature(o, fingerprints, common), written[o.path][1]]
                           for o in last.outputs}
        assert len(first.written) == len(written) and signed_when_planned == [0]
    finally:
        builder.close()
    builder = Builder(options)  # a new process: the manifest from disk, signed when planned
    try:
        again = builder.build()
    finally:
        builder.close()
    assert again.skipped == len(written) and not again.written


SNAPSHOT = "wp-json/tribe/events/v1/events/by-slug/december-makers-market-2026.json"
VENUE = "venues/canyon-crest-community-hall.yaml"


def test_an_events_json_ld_place_follows_an_edited_venue(tmp_path: Path) -> None:
    # The build's representer keeps each venue's JSON-LD place; --watch keeps the
    # builder, and a rebuild after the venue's edit must show the new address.
    shutil.copytree(SAMPLE, tmp_path / "content")
    options = site_options(tmp_path / "content", tmp_path / "public", tmp_path / "cache")
    builder = Builder(options)
    try:
        builder.build()
        snapshot = tmp_path / "public" / SNAPSHOT
        place = json.loads(snapshot.read_text())["json_ld"]["location"]
        assert place["address"]["streetAddress"] == "5225 Canyon Crest Drive"
        rep = builder._last.model.api_rep
        venue = builder.reader.catalog.by_slug("venues", "canyon-crest-community-hall")
        assert rep._place_ld(venue) is rep._place_ld(venue)  # made once
        assert rep._place_ld(venue) == Representer._place_ld(rep, venue)
        path = tmp_path / "content" / VENUE
        path.write_text(path.read_text().replace("5225 Canyon Crest Drive", "12 Orange Row"))
        builder.reader.catalog.refresh([VENUE])
        assert not builder.build().problems
        place = json.loads(snapshot.read_text())["json_ld"]["location"]
        assert place["address"]["streetAddress"] == "12 Orange Row"
    finally:
        builder.close()


def test_work_started_in_a_child_gives_its_value_or_none() -> None:
    wait = parallel.start(lambda stopped: {"made": [1, 2, 3]})
    assert wait() == {"made": [1, 2, 3]}

    def fails(stopped) -> None:
        raise ValueError("no")
    assert parallel.start(fails)() is None


def test_work_in_a_child_stops_when_asked_and_gives_what_it_has() -> None:
    def count(stopped) -> int:
        done = 0
        while not stopped():
            done += 1
        return done
    wait = parallel.start(count)
    time.sleep(0.05)
    assert wait() > 0  # it ran until told, then returned


def test_a_cold_build_makes_its_vevents_while_planning_the_same_bytes(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ahead_module, "AHEAD_MIN", 1)  # the sample has ~100 events
    started: list[int] = []
    ahead = ahead_module.start
    monkeypatch.setattr(ahead_module, "start",
                        lambda *args: started.append(os.getpid()) or ahead(*args))
    shutil.copytree(SAMPLE, tmp_path / "content")
    builds = {}
    for workers in (2, 1):  # one process: nothing made ahead, all in place
        out = tmp_path / f"public-{workers}"
        builder = Builder(site_options(tmp_path / "content", out, tmp_path / f"cache-{workers}"))
        builder.workers = workers
        try:
            assert not builder.build().problems
            vevents = builder._vevents_of
            kept = builder.vevents.data
            builds[workers] = {e.id: kept[e.id] for e in builder._last.model.events}
            assert all(made == (vevents.sig(e), vevents._make(e))
                       for e in builder._last.model.events for made in [kept[e.id]])
        finally:
            builder.close()
        assert len(started) == 1  # the two-process build only
    assert builds[2] == builds[1]
    assert tree_bytes(tmp_path / "public-2") == tree_bytes(tmp_path / "public-1")
