"""The loader refuses what the calendar cannot serve: each such file is left out and
reported with its path and line, and the rest of the calendar keeps being served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BASE, make_repo

from calendar_app import create_app, parsing
from calendar_app.cli import main
from calendar_app.content import ContentTree

EVENT = """\
id: 900
title: Crafted
slug: crafted
start_date: 2027-05-01 19:00:00
end_date: 2027-05-01 21:00:00
venue: the-blue-lantern
"""


def loaded(content: Path, relpath: str) -> tuple:
    """What the app's loader makes of one file: ("record", data) or ("problem", line,
    message)."""
    tree = ContentTree(content, content.parent / "lock")
    return parsing.parse(tree, relpath, tree.collection_of(relpath))


def check_errors(content: Path, capsys, relpath: str) -> list[tuple[int, str, str]]:
    main(["check", str(content), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return [(f["line"], f["code"], f["message"]) for f in findings
            if f["path"].endswith(relpath) and f["severity"] == "error"]


# -- ids ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad_id", [2**64 + 5, 2**53 + 1, 0, -3])
def test_ids_outside_json_safe_range_are_refused(tmp_path: Path, capsys, bad_id: int) -> None:
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(EVENT.replace("id: 900", f"id: {bad_id}"))
    outcome = loaded(content, relpath)
    assert outcome[:2] == ("problem", 1) and "id" in outcome[2]
    assert [(line, code) for line, code, _ in check_errors(content, capsys, relpath)] == [
        (1, "wrong-type")]


def test_the_largest_json_safe_id_is_fine(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(EVENT.replace("id: 900", f"id: {2**53}"))
    assert loaded(content, relpath)[0] == "record"


def test_an_id_beyond_64_bits_leaves_the_lists_working(content: Path, config: dict) -> None:
    def events(cache: str, query: str = "") -> tuple[int, dict]:
        app = create_app({**config, "CACHE_DIR": str(content.parent.parent / cache)})
        try:
            response = app.test_client().get(f"{BASE}/events{query}")
            return response.status_code, response.get_json()
        finally:
            app.extensions["calendar"].close()

    _, before = events("cache-before")
    (content / "events/2027/crafted.yaml").write_text(
        EVENT.replace("id: 900", f"id: {2**64}").replace("2027-05-01", "2026-12-01"))
    status, after = events("cache-after")
    assert status == 200 and after["total"] == before["total"]
    assert events("cache-after", "?search=crafted")[0] == 200
