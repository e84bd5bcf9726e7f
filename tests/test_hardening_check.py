"""`check` on files the calendar cannot serve: every problem of a broken file is reported
with its place, and nothing the loader would refuse passes unnoticed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CRAFTED_EVENT as EVENT
from conftest import make_repo

from calendar_app.cli import main


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def check(content: Path, capsys) -> tuple[int, list[dict]]:
    """`python -m calendar_app check DIR --format json`: exit code and findings."""
    code = main(["check", str(content), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["findings"]


def of(findings: list[dict], name: str) -> list[tuple[int, int, str]]:
    return [(f["line"], f["column"], f["code"]) for f in findings
            if f["path"].endswith(f"events/{name}") and f["severity"] == "error"]


def test_unreadable_date_has_line_and_column_and_the_file_is_still_checked(
        tree: Path, capsys) -> None:
    # A date YAML recognises but no calendar has: PyYAML fails building it.
    text = EVENT.replace("2027-05-01 19:00:00", "2027-02-30 10:00:00").replace(
        "the-blue-lantern", "no-such-venue")
    (tree / "events" / "crafted.yaml").write_text(text)
    code, findings = check(tree, capsys)
    assert code == 1
    assert of(findings, "crafted.yaml") == [(4, 13, "invalid-date"), (6, 0, "dangling-link")]
    (date,) = [f for f in findings if f["code"] == "invalid-date"]
    assert "start_date" in date["message"] and "2027-02-30 10:00:00" in date["message"]


def test_end_before_start_next_to_an_unreadable_value(tree: Path, capsys) -> None:
    text = (EVENT.replace("21:00:00", "18:00:00").replace("the-blue-lantern", "nowhere")
            + "modified: 2027-13-01 10:00:00\n")
    (tree / "events" / "crafted.yaml").write_text(text)
    _, findings = check(tree, capsys)
    assert of(findings, "crafted.yaml") == [
        (5, 0, "end-before-start"), (6, 0, "dangling-link"), (7, 11, "invalid-date")]


def test_several_unreadable_values_are_each_reported(tree: Path, capsys) -> None:
    text = EVENT.replace("2027-05-01 19:00:00", "2027-02-30 10:00:00").replace(
        "2027-05-01 21:00:00", "2027-02-31 10:00:00") + f"cost: {'9' * 5000}\n"
    (tree / "events" / "crafted.yaml").write_text(text)
    _, findings = check(tree, capsys)
    assert of(findings, "crafted.yaml") == [
        (4, 13, "invalid-date"), (5, 11, "invalid-date"), (7, 7, "invalid-value")]
    assert not any(f["code"] == "missing-key" for f in findings)
