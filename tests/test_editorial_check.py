"""`check`: each problem on a crafted file, with its exact line; output formats."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from conftest import CRAFTED_EVENT as EVENT
from conftest import make_repo

from calendar_app.editorial import register


def main(argv: list[str]) -> int:
    """`python -m calendar_app ARGV` with only the editorial commands."""
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)

@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def run_check(content: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["check", str(content), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def found(report: dict, path: str) -> list[tuple[int, str, str]]:
    return [(f["line"], f["severity"], f["code"]) for f in report["findings"]
            if f["path"].endswith(path)]


def test_sample_content_has_no_errors(tree: Path, capsys) -> None:
    code, report = run_check(tree, capsys)
    assert code == 0 and report["errors"] == 0
    assert report["files_checked"] == 99
    assert report["findings"] == []  # the online events have an online_url, not a venue


def test_strict_fails_on_warnings(tree: Path, capsys) -> None:
    (tree / "events/2027/crafted.yaml").write_text(
        EVENT.replace("venue: the-blue-lantern\n", ""))
    code, report = run_check(tree, capsys, "--strict")
    assert code == 1 and report["errors"] == 0 and report["warnings"] == 1
    assert report["findings"][0]["message"] == "event has neither a venue nor an online_url"


@pytest.mark.parametrize(("text", "line", "code", "words"), [
    (EVENT.replace("venue: the-blue-lantern", "venue: [oops"), 7, "yaml-syntax", ""),
    (EVENT.replace("title:", "titel:"), 2, "unknown-key", "did you mean 'title'"),
    (EVENT + "organizer: [riverside-jazz-collective]\n", 7, "unknown-key",
     "did you mean 'organizers'"),
    (EVENT.replace("id: 900", "id: nine"), 1, "wrong-type", "whole number"),
    (EVENT + "all_day: sometimes\n", 7, "wrong-type", "true or false"),
    (EVENT.replace("title: Crafted\n", ""), 1, "missing-key", "'title'"),
    (EVENT.replace("2027-05-01 21:00:00", "2027-02-30 21:00"), 5, "invalid-date", ""),
    (EVENT.replace("21:00:00", "18:00:00"), 5, "end-before-start", "before start_date"),
    (EVENT + "timezone: Europe/Berln\n", 7, "unknown-timezone", "Europe/Berln"),
    (EVENT.replace("2027-05-01 19:00:00", "2027-03-14 02:30:00")
     .replace("2027-05-01 21:00", "2027-03-14 04:00"), 4, "dst-gap", "does not exist"),
    (EVENT.replace("the-blue-lantern", "the-blue-lanten"), 6, "dangling-link",
     "did you mean 'the-blue-lantern'"),
    (EVENT + "categories:\n  - music\n  - jaz\n", 9, "dangling-link", "category"),
    (EVENT.replace("id: 900", "id: 132"), 1, "duplicate-id", "back-to-school"),
    (EVENT.replace("slug: crafted", "slug: crafty"), 3, "file-name", "crafty.yaml"),
    (EVENT.replace("venue: the-blue-lantern\n", ""), 1, "no-venue", ""),
])
def test_each_problem_on_its_line(tree: Path, capsys, text: str, line: int, code: str,
                                  words: str) -> None:
    (tree / "events" / "crafted.yaml").write_text(text)
    exit_code, report = run_check(tree, capsys)
    hits = [f for f in report["findings"] if f["path"].endswith("events/crafted.yaml")
            and f["code"] == code]
    assert hits, report["findings"]
    assert hits[0]["line"] == line
    assert words in hits[0]["message"]
    assert exit_code == (0 if code == "no-venue" else 1)


def test_syntax_error_has_a_column(tree: Path, capsys) -> None:
    (tree / "events" / "crafted.yaml").write_text(EVENT + "title: [a\n  b: c\n")
    _, report = run_check(tree, capsys)
    (hit,) = [f for f in report["findings"] if f["code"] == "yaml-syntax"]
    assert hit["line"] > 0 and hit["column"] > 0


def test_all_problems_of_one_file_are_reported(tree: Path, capsys) -> None:
    text = EVENT.replace("title:", "titel:").replace("21:00:00", "18:00:00") + "all_day: 2\n"
    (tree / "events" / "crafted.yaml").write_text(text)
    _, report = run_check(tree, capsys)
    assert found(report, "events/crafted.yaml") == [
        (1, "error", "missing-key"), (2, "error", "unknown-key"),
        (5, "error", "end-before-start"), (7, "error", "wrong-type")]


def test_duplicate_slug_across_folders(tree: Path, capsys) -> None:
    (tree / "events" / "2026" / "crafted.yaml").write_text(EVENT)
    (tree / "events" / "crafted.yaml").write_text(EVENT.replace("id: 900", "id: 901"))
    _, report = run_check(tree, capsys)
    assert (3, "error", "duplicate-slug") in found(report, "events/crafted.yaml")
    assert (1, "error", "duplicate-id") not in found(report, "events/crafted.yaml")


def test_duplicate_ids_across_collections(tree: Path, capsys) -> None:
    (tree / "tags" / "new-tag.yaml").write_text("id: 45\nname: New tag\n")
    _, report = run_check(tree, capsys)
    assert (1, "error", "duplicate-id") in found(report, "tags/new-tag.yaml")
    assert (1, "error", "duplicate-id") in found(report, "venues/the-blue-lantern.yaml")


def test_category_parent_loop(tree: Path, capsys) -> None:
    music = tree / "categories" / "music.yaml"
    music.write_text(music.read_text() + "parent: jazz\n")
    _, report = run_check(tree, capsys)
    loop = [f for f in report["findings"] if f["code"] == "parent-loop"]
    assert {f["path"].split("/content/")[1] for f in loop} == {
        "categories/music.yaml", "categories/jazz.yaml"}
    jazz_line = (tree / "categories" / "jazz.yaml").read_text().split("\n").index(
        "parent: music") + 1
    assert any(f["line"] == jazz_line for f in loop if f["path"].endswith("jazz.yaml"))
    assert "music -> jazz -> music" in loop[0]["message"] or (
        "jazz -> music -> jazz" in loop[0]["message"])


def test_retired_id_and_stray_file(tree: Path, capsys) -> None:
    (tree / ".retired-ids").write_text("900\n")
    (tree / "events" / "crafted.yaml").write_text(EVENT)
    (tree / "events" / "notes.yml").write_text("id: 5\n")
    _, report = run_check(tree, capsys)
    assert (1, "error", "retired-id") in found(report, "events/crafted.yaml")
    assert (0, "warning", "not-a-record") in found(report, "events/notes.yml")


def test_unquoted_number_warning(tree: Path, capsys) -> None:
    venue = tree / "venues" / "the-blue-lantern.yaml"
    venue.write_text(venue.read_text().replace("zip: '92501'", "zip: 01234"))
    _, report = run_check(tree, capsys)
    assert (11, "warning", "unquoted-number") in found(report, "the-blue-lantern.yaml")


def test_github_format(tree: Path, capsys) -> None:
    (tree / "events" / "crafted.yaml").write_text(EVENT.replace("title:", "titel:"))
    assert main(["check", str(tree), "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"::error file={tree}/events/crafted.yaml,line=2,title=unknown-key::unknown key " \
           "'titel' (did you mean 'title'?)" in lines


def test_human_format_groups_by_file_without_colour(tree: Path, capsys) -> None:
    (tree / "events" / "crafted.yaml").write_text(EVENT.replace("title:", "titel:"))
    main(["check", str(tree)])
    out = capsys.readouterr().out
    assert "\033[" not in out  # not a terminal
    assert f"{tree}/events/crafted.yaml\n" in out
    assert "unknown key 'titel'" in out and "2 errors, 0 warnings in 1 file" in out


def test_canonical_option_reports_unformatted_files(tree: Path, capsys) -> None:
    venue = tree / "venues" / "the-blue-lantern.yaml"  # the sample is canonical: undo that
    venue.write_text(venue.read_text().replace("zip: '92501'", 'zip: "92501"'))
    _, report = run_check(tree, capsys, "--canonical")
    assert any(f["code"] == "not-canonical" for f in report["findings"])
    assert main(["fmt", str(tree)]) == 0
    capsys.readouterr()
    _, report = run_check(tree, capsys, "--canonical")
    assert not any(f["code"] == "not-canonical" for f in report["findings"])
