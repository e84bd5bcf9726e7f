"""`sources run` and `import` from the command line in a clone of a shared repository:
the commit is pushed like a server write (wait mode), a refused push is fetched, rebased
and pushed again, a failure exits 1 naming the reason and keeps the local commit for the
next run. A real `git daemon` on the loopback (tests/gitserver.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SAMPLE, git
from gitserver import GitDaemon, bare_copy
from test_importing_sources import HEAD, ROWS
from test_sync import EVENT_FILE, editor_push, replace_key

from calendar_app.cli import main
from calendar_app.importing import sources

SUBJECT = "5 new, 0 changed from city-arts"  # the events, venues and terms new here


@pytest.fixture
def shared(tmp_path: Path):
    """(daemon URL of a bare repository holding the sample calendar and a CSV source,
    a clone of it, the feed file)."""
    feed = tmp_path / "feed.csv"
    feed.write_text(HEAD + ROWS, "utf-8")
    seed = tmp_path / "seed"
    shutil.copytree(SAMPLE, seed)
    (seed / "sources").mkdir()
    (seed / "sources" / "city-arts.yaml").write_text(
        f"kind: csv\nurl: {feed}\nschedule: 30m\nupdate: overwrite\n")
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "a calendar with a source")
    bare_copy(seed, tmp_path, "remote.git")
    with GitDaemon(tmp_path) as daemon:
        url = daemon.url("remote.git")
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
        yield daemon, url, clone, feed


def run(clone: Path, *extra: str) -> int:
    return main(["sources", "run", "city-arts", "--content", str(clone), "--cache-dir",
                 str(clone.parent / "cache"), *extra])


def remote_log(url: str, tmp: Path) -> list[str]:
    """The remote branch's history as another clone sees it ("author|subject")."""
    other = tmp / "check"
    shutil.rmtree(other, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", url, str(other)], check=True)
    return git(other, "log", "--format=%an|%s").splitlines()


def test_a_run_is_pushed_before_the_command_exits(shared, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    _daemon, url, clone, _feed = shared
    assert run(clone, "--remote", "origin") == 0
    assert "pushed to origin/main" in capsys.readouterr().out
    assert remote_log(url, tmp_path)[0] == f"sources|{SUBJECT}"
    assert git(clone, "status", "--porcelain") == ""
    # The clone now remembers its remote (the sync state): no --remote needed, and a
    # run that changes nothing makes no commit and pushes nothing.
    assert run(clone) == 0
    assert "pushed" not in capsys.readouterr().out
    assert len(remote_log(url, tmp_path)) == 2


def test_no_push_and_dry_run_stay_local(shared, tmp_path: Path) -> None:
    _daemon, url, clone, _feed = shared
    assert run(clone, "--remote", "origin", "--dry-run") == 0
    assert run(clone, "--remote", "origin", "--no-push") == 0
    assert git(clone, "log", "-1", "--format=%s").strip() == SUBJECT
    assert len(remote_log(url, tmp_path)) == 1


def test_a_refused_push_is_rebased_and_pushed_again(shared, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor pushes while the run reads its feed: the first push is refused, the
    editor's commit is fetched and ours rebased on it, then pushed."""
    _daemon, url, clone, _feed = shared
    text = (clone / EVENT_FILE).read_text()
    original = sources.read_source

    def slow_feed(*args, **kwargs):
        editor_push(url, tmp_path / "editor",
                    {EVENT_FILE: replace_key(text, "cost", "cost: $99")})
        return original(*args, **kwargs)

    monkeypatch.setattr(sources, "read_source", slow_feed)
    assert run(clone, "--remote", "origin") == 0
    assert remote_log(url, tmp_path)[:3] == [f"sources|{SUBJECT}",
                                             "Test Runner|an editor's change",
                                             "Test Runner|a calendar with a source"]
    assert "cost: $99" in (clone / EVENT_FILE).read_text()  # integrated here too


def test_a_failed_push_exits_1_keeps_the_commit_and_the_next_run_pushes_it(
        shared, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    daemon, url, clone, feed = shared
    assert run(clone, "--remote", "origin") == 0
    feed.write_text(HEAD + ROWS.replace("$10", "$12"), "utf-8")
    daemon.stop()
    capsys.readouterr()
    assert run(clone) == 1
    err = capsys.readouterr().err
    assert "1 commit(s) not pushed to origin/main: git fetch failed" in err
    assert "stay in this clone" in err
    assert git(clone, "log", "-1", "--format=%an|%s").strip() == (
        "sources|0 new, 1 changed from city-arts")
    daemon.start()  # the same port: the clone's URL holds
    assert len(remote_log(url, tmp_path)) == 2
    assert run(clone) == 0  # nothing new from the feed; what was left is pushed
    assert remote_log(url, tmp_path)[0] == "sources|0 new, 1 changed from city-arts"


def test_import_pushes_too(shared, tmp_path: Path) -> None:
    _daemon, url, clone, feed = shared
    assert main(["import", "csv", str(feed), "--content", str(clone), "--cache-dir",
                 str(tmp_path / "cache"), "--remote", url]) == 0
    assert remote_log(url, tmp_path)[0].startswith("import|5 new")


def test_an_unknown_remote_is_named(shared, tmp_path: Path) -> None:
    _daemon, _url, clone, _feed = shared
    with pytest.raises(SystemExit, match="no remote named or at elsewhere"):
        run(clone, "--remote", "elsewhere")
