"""The suite's own shortcuts (conftest.py) say what git says."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_count, git, make_repo


def test_commit_count_is_what_git_rev_list_counts(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    git(repo, "checkout", "-qb", "side")
    (content / "side.txt").write_text("side\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "on the side")
    git(repo, "checkout", "-q", "main")
    (content / "main.txt").write_text("main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "on main")
    git(repo, "merge", "-q", "--no-edit", "side")  # both parents' lines count
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 4
    assert commit_count(content) == commit_count(repo) == 4
