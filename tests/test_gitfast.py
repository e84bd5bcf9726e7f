"""The in-process commit (calendar_app/store/gitfast.py) makes the commit git makes:
the same tree, the index as `git add` leaves it, other staged changes kept out, the
author and message as `git commit -m --author` stores them; and it leaves the commit to
git (None) whenever git would do more. Each property is checked against git itself,
on real repositories."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.store import gitfast
from calendar_app.store.content import git_env

AUTHOR = "Ada Editor <ada@users.calendar.invalid>"
NAMES = ["events/a.yaml", "events/b.yaml", "events/2027/c.yaml", "venues/d.yaml", "e.txt"]


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for name in NAMES[:3]:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(f"{name}\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "start")
    return path


def fast_commit(repo: Path, paths: list[str], message: str = "events: a write") -> bool | None:
    return gitfast.commit(repo, repo / ".git", paths, message, AUTHOR, git_env())


def cli_commit(repo: Path, paths: list[str], message: str = "events: a write") -> bool:
    """What content.py did before: `git add -A -- paths`, `git commit -- paths`."""
    known = [p for p in paths if (repo / p).exists() or git(repo, "ls-files", "--", p).strip()]
    if not known:
        return False
    git(repo, "add", "-A", "--", *known)
    proc = subprocess.run(["git", "commit", "-q", "--no-verify", "--author", AUTHOR, "-m",
                           message, "--", *known], check=False, cwd=repo, env=git_env(),
                          capture_output=True, text=True)
    return proc.returncode == 0


def state(repo: Path) -> tuple[str, str, str, str]:
    """HEAD's tree, the index, the commit count and HEAD's author and message."""
    return (git(repo, "rev-parse", "HEAD^{tree}"), git(repo, "ls-files", "-s"),
            git(repo, "rev-list", "--count", "HEAD"),
            git(repo, "log", "-1", "--format=%an <%ae>%n%cn <%ce>%n%B"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("gitfast") / "template")


def twins(template: Path, where: Path) -> tuple[Path, Path]:
    a, b = where / "fast", where / "git"
    shutil.copytree(template, a)
    shutil.copytree(template, b)
    return a, b


def apply(repo: Path, ops: list[tuple[str, str | None]]) -> None:
    for name, text in ops:
        path = repo / name
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def test_commit_is_gits_commit_and_keeps_other_staged_changes_out(template: Path,
                                                                     tmp_path: Path) -> None:
    fast, cli = twins(template, tmp_path)
    for repo in (fast, cli):  # staged by a person, not part of the write
        (repo / "e.txt").write_text("someone's staged note\n")
        git(repo, "add", "e.txt")
        apply(repo, [("events/a.yaml", "changed\n"), ("events/b.yaml", None),
                     ("venues/d.yaml", "new\n")])
    paths = ["events/a.yaml", "events/b.yaml", "venues/d.yaml"]
    assert fast_commit(fast, paths, "events: update \"A\"  \n\n\n(#1)\n") is True
    assert cli_commit(cli, paths, "events: update \"A\"  \n\n\n(#1)\n") is True
    assert state(fast) == state(cli)
    assert git(fast, "diff", "--cached", "--name-only") == "e.txt\n"  # still staged
    assert git(fast, "status", "--porcelain") == git(cli, "status", "--porcelain")
    assert "commit: events: update" in git(fast, "reflog", "-1", "main")


def test_nothing_changed_is_no_commit(template: Path, tmp_path: Path) -> None:
    fast, _ = twins(template, tmp_path)
    assert fast_commit(fast, ["events/a.yaml"]) is False
    assert fast_commit(fast, ["events/never-there.yaml"]) is False
    assert git(fast, "rev-list", "--count", "HEAD") == "1\n"


def test_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    apply(repo, [("events/a.yaml", "a\n")])
    assert fast_commit(repo, ["events/a.yaml"]) is True
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD") == "events/a.yaml\n"
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("setup", ["gpgsign", "post-commit", "prepare-commit-msg",
                                   "attributes", "index.lock", "hooksPath"])
def test_git_commits_when_it_would_do_more(template: Path, tmp_path: Path,
                                           setup: str) -> None:
    fast, _ = twins(template, tmp_path)
    hooks = fast / ".git" / "hooks"
    if setup == "gpgsign":
        git(fast, "config", "commit.gpgsign", "true")
    elif setup == "attributes":
        (fast / ".gitattributes").write_text("*.yaml text eol=crlf\n")
    elif setup == "index.lock":
        (fast / ".git" / "index.lock").write_text("")
    else:
        if setup == "hooksPath":
            hooks = fast / "our-hooks"
            git(fast, "config", "core.hooksPath", "our-hooks")
        hooks.mkdir(exist_ok=True)
        hook = hooks / ("post-commit" if setup == "hooksPath" else setup)
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
    apply(fast, [("events/a.yaml", "changed\n")])
    before = git(fast, "rev-parse", "HEAD")
    assert fast_commit(fast, ["events/a.yaml"]) is None
    assert git(fast, "rev-parse", "HEAD") == before


def test_dates_fixed_by_the_environment_and_odd_authors_go_to_git(template: Path,
                                                                  tmp_path: Path) -> None:
    fast, _ = twins(template, tmp_path)
    apply(fast, [("events/a.yaml", "changed\n")])
    env = {**git_env(), "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}
    assert gitfast.commit(fast, fast / ".git", ["events/a.yaml"], "m", AUTHOR, env) is None
    assert gitfast.commit(fast, fast / ".git", ["events/a.yaml"], "m", "no address",
                          git_env()) is None
    assert gitfast.commit(fast, fast / ".git", ["events/a.yaml"], " \n ", AUTHOR,
                          git_env()) is None


def test_refs_read_moved_and_counted_as_git_does(template: Path, tmp_path: Path) -> None:
    fast, _ = twins(template, tmp_path)
    gd = fast / ".git"
    head = git(fast, "rev-parse", "HEAD").strip()
    assert gitfast.read_ref(gd, "HEAD") == gitfast.read_ref(gd, "refs/heads/main") == head
    assert gitfast.read_ref(gd, "refs/remotes/origin/main") == ""
    assert gitfast.read_ref(gd, "main") is None  # short names: git's rules
    assert gitfast.ahead(gd, "refs/heads/main", "refs/remotes/origin/main") == 1
    assert gitfast.set_ref(gd, "refs/remotes/origin/main", head, "update by push")
    assert git(fast, "rev-parse", "origin/main").strip() == head
    assert gitfast.ahead(gd, "refs/heads/main", "refs/remotes/origin/main") == 0
    apply(fast, [("events/a.yaml", "changed\n")])
    assert fast_commit(fast, ["events/a.yaml"]) is True
    assert gitfast.ahead(gd, "refs/heads/main", "refs/remotes/origin/main") == 1
    assert gitfast.delete_ref(gd, "refs/remotes/origin/main")
    assert gitfast.read_ref(gd, "refs/remotes/origin/main") == ""
    assert gitfast.read_ref(None, "HEAD") is None and gitfast.ahead(None, "a", "b") is None


@pytest.mark.parametrize(("message", "stored"), [
    ("a", "a\n"), ("  a  \n\n\n\nb  \n\n", "  a\n\nb\n"), ("\n\na\n", "a\n"), ("\n \n", ""),
])
def test_message_cleanup_is_gits(message: str, stored: str) -> None:
    assert gitfast.cleanup_message(message) == stored


_ops = st.lists(st.tuples(st.sampled_from(NAMES),
                          st.one_of(st.none(), st.text("ab\n é", max_size=12))),
                min_size=1, max_size=6)


@settings(max_examples=10, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(ops=_ops, chosen=st.sets(st.sampled_from(NAMES), min_size=1))
def test_any_change_commits_as_git_would(template: Path, tmp_path: Path,
                                         ops: list[tuple[str, str | None]],
                                         chosen: set[str]) -> None:
    """Random edits, removals and new files; only `chosen` committed: the tree, the
    index and the commit count are git's (`git add -A -- p` + `git commit -- p`)."""
    where = tmp_path / f"case-{os.urandom(4).hex()}"
    where.mkdir()
    fast, cli = twins(template, where)
    for repo in (fast, cli):
        apply(repo, ops)
    paths = sorted(chosen)
    made = fast_commit(fast, paths)
    assert made is not None
    assert made == cli_commit(cli, paths)
    assert state(fast)[:3] == state(cli)[:3]
    assert git(fast, "status", "--porcelain") == git(cli, "status", "--porcelain")
    shutil.rmtree(where)


@pytest.mark.parametrize("ops, paths", [
    # a folder emptied by the write: git keeps no empty folder
    ([("events/2027/c.yaml", None)], ["events/2027/c.yaml"]),
    # a file where a folder was (its files gone first)
    ([("events/2027/c.yaml", None), ("events/2027", "now a file\n")],
     ["events/2027/c.yaml", "events/2027"]),
    # new folders several levels deep, beside an untouched one
    ([("venues/2028/05/v.yaml", "v\n"), ("e.txt", "e\n")], ["venues/2028/05/v.yaml", "e.txt"]),
])
def test_tree_built_from_the_touched_folders_is_gits(template: Path, tmp_path: Path,
                                                      ops: list, paths: list[str]) -> None:
    """The commit's tree is built from the folders on the written paths' way only
    (`_tree_with`); emptied folders, files and folders trading places end as git's."""
    fast, cli = twins(template, tmp_path)
    for repo in (fast, cli):
        for name, text in ops:
            path = repo / name
            if text is None:
                path.unlink()
                with contextlib.suppress(OSError):  # emptied: gone, as a tree leaves it
                    path.parent.rmdir()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    assert fast_commit(fast, paths) is True
    assert cli_commit(cli, paths) is True
    assert state(fast)[:3] == state(cli)[:3]
    assert git(fast, "status", "--porcelain") == git(cli, "status", "--porcelain")
