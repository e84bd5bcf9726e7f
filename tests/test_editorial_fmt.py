"""`fmt`: canonical form is what the interface writes; comments survive; idempotent."""

from __future__ import annotations

import argparse
import datetime as dt
import re
import time
from pathlib import Path

import pytest
import yaml
from conftest import BASE, CRAFTED_EVENT, SAMPLE, make_repo
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from calendar_app.editorial import register
from calendar_app.editorial.fmt import canonical_text
from calendar_app.editorial.snapshot import from_worktree
from calendar_app.model import records
from calendar_app.store import yamlfile


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def interface_text(collection: str, path: str, data: dict) -> str:
    """What service.py writes for a record: yamlfile.dump(to_file(record))."""
    return yamlfile.dump(records.to_file(records.Record(collection, data, path)))


def test_files_written_like_the_interface_are_unchanged(tmp_path: Path) -> None:
    snap = from_worktree(SAMPLE)
    for path, data in snap.records.items():
        collection = path.split("/", 1)[0]
        record = records.from_file(collection, yamlfile.load(data), path)
        text = yamlfile.dump(records.to_file(record))
        assert canonical_text(collection, path, text.encode()) == text, path


@pytest.mark.parametrize("description", [
    "Line one\n\nLine two: with a colon # and a hash\n",
    "  leading spaces\nand a trailing one \n",
    "Ünïcødé — “quotes” & 'apostrophes' ✓",
    "yes", "2027-01-01", "123", "- not a list", "",
])
def test_unusual_values_round_trip_byte_for_byte(description: str) -> None:
    text = interface_text("events", "events/odd.yaml", {
        "id": 7, "title": "Odd: #1 'quoted'", "slug": "odd", "status": "draft",
        "start_date": dt.datetime(2027, 1, 2, 3, 4, 5),
        "end_date": dt.datetime(2027, 1, 2, 4, 0), "categories": ["a", "b"],
        "cost": ["0", "20$"], "description": description or None})
    assert canonical_text("events", "events/odd.yaml", text.encode()) == text


def test_fmt_leaves_interface_written_files_alone(tmp_path: Path, client_factory=None):
    content = make_repo(tmp_path, source=None)
    (content / "venues").mkdir()
    text = interface_text("venues", "venues/hall.yaml", {
        "id": 1, "venue": "Hall", "slug": "hall", "status": "publish",
        "date": dt.datetime(2026, 1, 1, 9, 0), "show_map": True, "show_map_link": False,
        "zip": "01234", "geo_lat": 33.9})
    (content / "venues" / "hall.yaml").write_text(text)
    assert main(["fmt", str(content), "--check"]) == 0
    assert (content / "venues" / "hall.yaml").read_text() == text


def test_api_written_files_are_canonical(client, auth, content: Path) -> None:
    response = client.post(f"{BASE}/events", headers=auth("administrator"), json={
        "title": "Canonical Gig", "start_date": "2027-05-01 19:00:00",
        "end_date": "2027-05-01 21:00:00", "venue": 45, "description": "One\n\nTwo",
        "categories": ["jazz"]})
    assert response.status_code == 201, response.get_json()
    (path,) = list(content.glob("events/**/canonical-gig.yaml"))
    before = path.read_bytes()
    main(["fmt", str(content)])
    assert path.read_bytes() == before


COMMENTED = """\
# yaml-language-server: $schema=../../schemas/events.schema.json
title: Commented   # shown in lists
id: 800
# when it starts
start_date: 2027-05-01 19:00
end_date: 2027-05-01 21:00
all_day: false  # default, will go
venue: the-blue-lantern
tags:
  # the important one first
  - free
  - live-music  # and this
description: |
  # not a comment, part of the text
  Second line
# the end
"""

EXPECTED = """\
# yaml-language-server: $schema=../../schemas/events.schema.json
id: 800
title: Commented   # shown in lists
slug: crafted
# when it starts
start_date: 2027-05-01 19:00:00
end_date: 2027-05-01 21:00:00
# default, will go
venue: the-blue-lantern
# the important one first
# and this
tags: [free, live-music]
description: |
  # not a comment, part of the text
  Second line
# the end
"""


def test_fmt_reorders_and_keeps_comments(tmp_path: Path, capsys) -> None:
    # The list's style is whatever the interface writes.
    expected = EXPECTED.replace("tags: [free, live-music]\n",
                                yamlfile.dump({"tags": ["free", "live-music"]}))
    content = make_repo(tmp_path)
    path = content / "events" / "crafted.yaml"
    path.write_text(COMMENTED)
    assert main(["fmt", str(content), "--check"]) == 1
    assert path.read_text() == COMMENTED
    assert main(["fmt", str(content)]) == 0
    assert path.read_text() == expected
    # Idempotent: a second run changes nothing anywhere.
    snapshot = {p: p.read_bytes() for p in content.rglob("*.yaml")}
    assert main(["fmt", str(content), "--check"]) == 0
    assert {p: p.read_bytes() for p in content.rglob("*.yaml")} == snapshot
    # Without its comments, the file is exactly the interface's text.
    raw = records.from_file("events", yamlfile.load(path.read_bytes()), "events/crafted.yaml")
    plain = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    stripped = "\n".join(line.split("   #")[0] for line in plain) + "\n"
    assert stripped == yamlfile.dump(records.to_file(raw))
    capsys.readouterr()


def test_fmt_skips_invalid_files(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    (content / "events" / "broken.yaml").write_text("id: [\n")
    assert main(["fmt", str(content)]) == 1
    assert "broken.yaml: skipped" in capsys.readouterr().err
    assert (content / "events" / "broken.yaml").read_text() == "id: [\n"


# -- block scalars (issue 20, item 23) -------------------------------------------------------
def test_fmt_keeps_a_one_line_block_scalar_a_block(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    path = content / "events" / "crafted.yaml"
    path.write_text(CRAFTED_EVENT + "description: |\n  One line only.\n")
    assert main(["fmt", str(content)]) == 0
    assert path.read_text().endswith("\ndescription: |\n  One line only.\n")
    before = path.read_bytes()
    assert main(["fmt", str(content), "--check"]) == 0
    assert path.read_bytes() == before


# Lines of a literal block: text (unicode, YAML indicators, a `#`), blank lines, lines
# with leading spaces (the first one then needs an indentation indicator).
_LINE = st.one_of(
    st.text(st.sampled_from("ab Z:#-'\"é—“✓字🎉"), max_size=12).map(str.strip),
    st.just(""),
    st.text(st.sampled_from("ab é"), min_size=1, max_size=6).map(lambda t: "  " + t.strip()))


@st.composite
def _block(draw: st.DrawFn) -> tuple[str, bool]:
    """A hand-written `description:` literal block, and whether a comment is above it."""
    lines = draw(st.lists(_LINE, min_size=1, max_size=5))
    chomp = draw(st.sampled_from(["", "-", "+"]))
    indent = "2" if lines[0][:1] in (" ", "") else ""
    trailing = draw(st.sampled_from(["", "\n", "\n\n"]))  # blank lines after the block
    body = "".join(f"  {line}\n" if line else "\n" for line in lines)
    comment = draw(st.booleans())
    return (("# the text\n" if comment else "") + f"description: |{indent}{chomp}\n"
            + body + trailing), comment


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(_block())
@example(("description: |\n  One line only.\n", False))
@example(("# the text\ndescription: |+\n  kept\n\n\n", True))
@example(("description: |2-\n   leading\n  x\n", False))
def test_fmt_round_trips_block_scalars_exactly(block: tuple[str, bool]) -> None:
    text, comment = block
    source = CRAFTED_EVENT + text
    value = yaml.safe_load(source).get("description")  # PyYAML's reading is the truth
    assert yamlfile.load(source.encode()).get("description") == value
    started = time.monotonic()
    once = canonical_text("events", "events/crafted.yaml", source.encode())
    twice = canonical_text("events", "events/crafted.yaml", once.encode())
    assert time.monotonic() - started < 2  # no hang
    assert twice == once  # idempotent
    assert ("# the text\ndescription:" in once) == comment
    assert (yamlfile.load(once.encode()).get("description") or None) == (value or None)
    assert yaml.safe_load(once).get("description") == yaml.safe_load(twice).get("description")
    if value and "\n" in value and not re.search(r" (\n|$)", value):
        assert "\ndescription: |" in once, once  # a block stays a block
        # and an interface edit writes it as the canonical form does
        assert yamlfile.edit("id: 1\n", {"description": value}, ["id", "description"]) == (
            "id: 1\n" + yamlfile.dump({"description": value}))
