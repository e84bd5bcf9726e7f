"""`diff BASE [HEAD]`: what a pull request does to the calendar, matched by id."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from conftest import git, make_repo

from calendar_app.editorial import register


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


NEW_EVENT = """\
id: 500
title: Poetry Slam
start_date: 2027-09-10 20:00:00
end_date: 2027-09-10 22:30:00
timezone: America/New_York
venue: hudson-street-loft
"""


@pytest.fixture
def changed(tmp_path: Path) -> Path:
    content = make_repo(tmp_path)
    repo = content.parent
    git(repo, "checkout", "-q", "-b", "pr")
    (content / "events/2027/poetry-slam.yaml").write_text(NEW_EVENT)
    git(repo, "rm", "-q", "content/events/2027/holiday-craft-fair-2027.yaml")
    april = content / "events/2027/jazz-night-april-2027.yaml"
    edit(april, "start_date: 2027-04-01 19:30:00", "start_date: 2027-04-02 20:00:00")
    edit(april, "end_date: 2027-04-01 22:00:00", "end_date: 2027-04-02 22:30:00")
    # A rename: new slug and file name, same id.
    git(repo, "mv", "content/events/2027/fall-arts-walk-2027.yaml",
        "content/events/2027/autumn-arts-walk-2027.yaml")
    edit(content / "events/2027/autumn-arts-walk-2027.yaml", "title: Fall Arts Walk\n",
         "title: Autumn Arts Walk\n")
    edit(content / "events/2027/autumn-arts-walk-2027.yaml", "slug: fall-arts-walk-2027",
         "slug: autumn-arts-walk-2027")
    edit(content / "venues/the-blue-lantern.yaml", "name: The Blue Lantern",
         "name: Blue Lantern Jazz Club")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pr changes")
    return content


def test_markdown_summary(changed: Path, capsys) -> None:
    assert main(["diff", "main", "HEAD", "--content", str(changed)]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### Calendar changes: main → HEAD\n")
    assert "**Events:** 1 added, 1 removed, 1 rescheduled, 1 changed" in md
    assert ("- **Poetry Slam**, 2027-09-10 (Fri) 20:00–22:30 America/New_York at Hudson "
            "Street Loft") in md
    assert "#### Removed (1)\n\n- **Holiday Craft Fair**, 2027-12-04 (Sat) all day" in md
    assert ("- **Jazz Night: Naomi Takeda, vocals**: ~~2027-04-01 (Thu) 19:30–22:00 "
            "America/Los_Angeles~~ → 2027-04-02 (Fri) 20:00–22:30 America/Los_Angeles") in md
    assert "- **Autumn Arts Walk** (was “Fall Arts Walk”): slug, title" in md
    assert ("- renamed **The Blue Lantern** → **Blue Lantern Jazz Club** — 8 events "
            "affected") in md
    assert "Content problems introduced" not in md


def test_json_summary(changed: Path, capsys) -> None:
    assert main(["diff", "main", "HEAD", "--content", str(changed), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in doc["events"]["added"]] == [500]
    assert doc["events"]["rescheduled"][0]["before"].startswith("2027-04-01 (Thu) 19:30")
    assert doc["events"]["changed"][0]["path"] == "events/2027/autumn-arts-walk-2027.yaml"
    assert doc["venues"]["renamed"][0]["was_slug"] == "the-blue-lantern"
    assert doc["problems_introduced"] == []


def test_work_tree_status_changes_and_problems(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    april = content / "events/2027/jazz-night-april-2027.yaml"
    edit(april, "status: publish", "status: trash")
    edit(april, "venue: the-blue-lantern", "venue: magnolia-arts-center")
    edit(content / "events/2027/holiday-craft-fair-2027.yaml", "tags:", "tagz:")
    assert main(["diff", "HEAD", "--content", str(content)]) == 0  # HEAD vs the work tree
    md = capsys.readouterr().out
    assert "→ work tree" in md.splitlines()[0]
    # Trashing removes an event; "Cancelled" is kept for its event status.
    assert "#### Removed (moved to the trash) (1)" in md
    assert "Cancelled" not in md
    assert "The Blue Lantern → Magnolia Arts Center" in md
    assert "#### Content problems introduced (1)" in md
    assert "unknown key 'tagz' (did you mean 'tags'?)" in md


def test_merge_base_syntax_and_no_changes(changed: Path, capsys) -> None:
    repo = changed.parent
    git(repo, "checkout", "-q", "main")
    (changed / "tags/new-on-main.yaml").write_text("id: 600\nname: New on main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main moves on")
    git(repo, "checkout", "-q", "pr")
    assert main(["diff", "main...pr", "--content", str(changed), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tags"]["removed"] == []  # main's later commit is not part of the PR
    assert main(["diff", "pr", "pr", "--content", str(changed)]) == 0
    assert "No calendar changes." in capsys.readouterr().out


def test_event_status_changes_are_listed_with_their_reason(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    april = content / "events/2027/jazz-night-april-2027.yaml"
    edit(april, "status: publish", "status: publish\nevent_status: canceled\n"
                                   "event_status_reason: The band is ill")
    fair = content / "events/2027/holiday-craft-fair-2027.yaml"
    text = fair.read_text()
    fair.write_text(text + "event_status: postponed\n")
    assert main(["diff", "HEAD", "--content", str(content)]) == 0
    md = capsys.readouterr().out
    assert "#### Cancelled (1)" in md
    line = next(x for x in md.splitlines() if x.startswith("- **Jazz Night"))
    assert ": cancelled on 2027-04-" in line and line.endswith("— The band is ill")
    assert "#### Postponed (1)" in md and "postponed on " in md
    assert "Removed (moved to the trash)" not in md
    assert "event_status" not in md  # not also listed as a changed field
    assert main(["diff", "HEAD", "--content", str(content), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["events"]["cancelled"][0]["reason"] == "The band is ill"
    assert doc["events"]["trashed"] == [] and doc["events"]["changed"] == []
    git(content.parent, "commit", "-qam", "cancel")
    edit(april, "event_status: canceled", "event_status: scheduled")
    assert main(["diff", "HEAD", "--content", str(content)]) == 0
    assert "#### Scheduled again (1)" in capsys.readouterr().out
