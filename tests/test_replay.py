"""A refused push integrated in-process (calendar_app/sync/replay.py, netfast.py): our unpushed
commits replayed on the fetched head when the remote's commits changed other paths,
git's rebase when paths overlap, a crash between the checkout and the branch move
finished under the next write lock. Two real clones of a real bare repository (by
path: the replay does not care how the remote is reached), real RemoteSync exchanges,
and random interleavings of both clones' writes and pushes (hypothesis)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git
from gitserver import GitDaemon
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync_hardening import StalledRemote

from calendar_app.store.content import ContentTree
from calendar_app.sync import gitrebase, netfast, replay
from calendar_app.sync.settings import RemoteStalled, SyncSettings
from calendar_app.sync.sync import RemoteSync

AUTHORS = ("Ada Side <ada@example.org>", "Bo Side <bo@example.org>")
FILES = 4  # notes/p0.yaml .. p3.yaml: few, so interleavings overlap often


@dataclass
class Side:
    root: Path
    tree: ContentTree
    sync: RemoteSync
    author: str


def make_sides(base: Path) -> tuple[Path, list[Side]]:
    """A bare remote with one commit and two clones of it, each with its sync."""
    seed = base / "seed"
    (seed / "notes").mkdir(parents=True)
    (seed / "notes" / "p0.yaml").write_text("k0: start\n")
    (seed / "README").write_text("calendar\n")
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial")
    bare = base / "remote.git"
    git(base, "clone", "-q", "--bare", str(seed), str(bare))
    shutil.rmtree(seed)
    sides = []
    for n, author in enumerate(AUTHORS):
        root = base / f"clone-{n}"
        git(base, "clone", "-q", str(bare), str(root))
        sides.append(open_side(root, base / f"state-{n}", author))
    return bare, sides


def open_side(root: Path, state: Path, author: str) -> Side:
    tree = ContentTree(root, state / "write.lock")
    sync = RemoteSync(tree, SyncSettings(remote="origin", timeout=60), "origin", state)
    return Side(root, tree, sync, author)


def write(side: Side, path: str, line: str, message: str) -> None:
    """One interface-like write: a line (a new key) added to a file, one commit."""
    with side.tree.locked():
        old = side.tree.read_text(path) if side.tree.exists(path) else ""
        side.tree.apply({path: old + line}, message, side.author)


def keys(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines())


def head(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).strip()


def assert_clean(side: Side) -> None:
    """Work tree and index hold exactly the branch (replay updated what it had to)."""
    assert git(side.root, "status", "--porcelain", "--untracked-files=all") == ""


def replays(side: Side) -> int:
    return git(side.root, "reflog", "main").count("rebase (in-process)")


def test_other_paths_replayed_in_process(tmp_path: Path, monkeypatch) -> None:
    bare, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    assert a.sync.exchange(fetch=False).state == "pushed"
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    write(b, "notes/p0.yaml", "k3: b\n", "b: edit p0")
    before = git(b.root, "log", "-2", "--format=%an <%ae>|%cn|%B%x00", "main")
    monkeypatch.setattr(gitrebase, "rebase", lambda sync: pytest.fail("git rebase ran"))
    result = b.sync.exchange(fetch=False)
    assert result.state == "pushed"
    assert result.changed == {"notes/p1.yaml"}  # what the catalog re-reads
    assert head(bare, "main") == head(b.root)
    # Each of ours its own commit again, author, committer name and message kept,
    # on top of the remote's commit.
    assert git(b.root, "log", "-2", "--format=%an <%ae>|%cn|%B%x00", "main") == before
    assert git(bare, "log", "--format=%s", "main").split("\n")[:4] == [
        "b: edit p0", "b: new p2", "a: new p1", "initial"]
    assert git(bare, "show", "--format=", "--name-only", "main") == "notes/p0.yaml\n"
    assert (b.root / "notes" / "p1.yaml").read_text() == "k1: a\n"
    assert replays(b) == 1
    assert_clean(b)


def test_remote_deleting_a_file_and_fast_forward(tmp_path: Path) -> None:
    bare, (a, b) = make_sides(tmp_path)
    with a.tree.locked():
        a.tree.apply({"notes/p0.yaml": None}, "a: remove p0", a.author)
    assert a.sync.exchange(fetch=False).state == "pushed"
    assert b.sync.exchange().state == "pushed"  # nothing of ours: a fast-forward
    assert not (b.root / "notes" / "p0.yaml").exists()
    assert head(b.root) == head(bare, "main")
    assert replays(b) == 1
    assert_clean(b)


@pytest.mark.parametrize("theirs, ours", [
    ("notes/p0.yaml", "notes/p0.yaml"),  # the same file
    ("notes", "notes/p5.yaml"),  # a file where we have a folder
])
def test_overlapping_paths_left_to_git(tmp_path: Path, theirs: str, ours: str) -> None:
    bare, (a, b) = make_sides(tmp_path)
    if theirs == "notes":  # the remote replaces the folder by a file
        work = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(bare), str(work))
        git(work, "rm", "-q", "-r", "notes")
        (work / "notes").write_text("now a file\n")
        git(work, "add", "notes")
        git(work, "commit", "-q", "-m", "notes is a file")
        git(work, "push", "-q", "origin", "main")
    else:
        write(a, theirs, "k1: a\n", "a: edit")
        assert a.sync.exchange(fetch=False).state == "pushed"
    write(b, ours, "k2: b\n" if ours == theirs else "k5: b\n", "b: edit")
    result = b.sync.exchange(fetch=False)
    assert replays(b) == 0
    if theirs == ours:  # git's rebase with the key-by-key driver: both keys kept
        assert result.state == "pushed"
        assert keys(git(bare, "show", f"main:{ours}")) == {"k0": "start", "k1": "a", "k2": "b"}
        assert_clean(b)
    else:  # whatever git's rebase makes of it, as before: ours is on the remote
        assert result.state == "pushed"
        assert git(bare, "show", "main:notes/p5.yaml") == "k5: b\n"



def test_local_edit_at_a_remote_path_left_to_git(tmp_path: Path) -> None:
    _, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    a.sync.exchange(fetch=False)
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    (b.root / "notes" / "p1.yaml").write_text("someone's file\n")  # untracked, in the way
    assert b.sync.exchange(fetch=False).state == "queued"  # as git rebase would refuse
    assert replays(b) == 0
    assert (b.root / "notes" / "p1.yaml").read_text() == "someone's file\n"


def test_killed_between_checkout_and_branch_move(tmp_path: Path) -> None:
    """SIGKILL after the remote's files were checked out but before the branch moved:
    the next write lock finishes the replay, nothing of either side lost."""
    bare, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    a.sync.exchange(fetch=False)
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    old = head(b.root)
    pid = os.fork()
    if pid == 0:  # the child integrates and dies at the branch move
        replay._move = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
        try:
            b.sync.exchange(fetch=False)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert head(b.root) == old and b.sync.replay_marker.exists()
    assert (b.root / "notes" / "p1.yaml").exists()  # the remote's file, not yet committed
    seen: list[set[str]] = []
    again = open_side(b.root, b.sync.replay_marker.parent, b.author)
    again.sync.integrated_hooks.append(seen.append)
    with again.tree.locked():
        pass
    assert seen == [{"notes/p1.yaml"}] and not again.sync.replay_marker.exists()
    assert git(b.root, "log", "--format=%s", "main").split("\n")[:3] == [
        "b: new p2", "a: new p1", "initial"]
    assert_clean(again)
    assert again.sync.exchange().state == "pushed"
    assert head(bare, "main") == head(b.root)


def test_a_torn_marker_is_dropped(tmp_path: Path) -> None:
    _, (a, _b) = make_sides(tmp_path)
    a.sync.replay_marker.parent.mkdir(parents=True, exist_ok=True)
    a.sync.replay_marker.write_text('{"ref": "refs/heads/ma')
    before = head(a.root)
    with a.tree.locked():
        pass
    assert not a.sync.replay_marker.exists() and head(a.root) == before


# -- random interleavings ----------------------------------------------------------
STEP = st.tuples(st.integers(0, 1), st.sampled_from(["write", "write", "push"]),
                 st.integers(0, FILES - 1))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two clones and their remote once; each example works on a fresh copy at one
    place (the clones' remote URL stays right)."""
    base = tmp_path_factory.mktemp("replay-template")
    make_sides(base / "work")
    shutil.move(base / "work", base / "made")
    return base


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=2, max_size=8))
def test_interleaved_writes_of_two_instances(template: Path, steps: list) -> None:
    """Whatever the order of two instances' writes and pushes, once both exchanged:
    the remote's history is linear, holds every write once as its own commit by its
    author, each file holds every key written to it, and both clones equal it."""
    work = template / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template / "made", work, symlinks=True)
    sides = [open_side(work / f"clone-{n}", work / f"state-{n}", author)
             for n, author in enumerate(AUTHORS)]
    written: dict[str, dict[str, str]] = {"notes/p0.yaml": {"k0": "start"}}
    messages = []
    for n, (who, action, file) in enumerate(steps):
        side = sides[who]
        if action == "push":
            assert side.sync.exchange(fetch=False).state == "pushed"
            continue
        path = f"notes/p{file}.yaml"
        write(side, path, f"w{n}: s{who}\n", f"w{n} by {who}")
        written.setdefault(path, {})[f"w{n}"] = f"s{who}"
        messages.append((f"w{n} by {who}", AUTHORS[who]))
    for side in (*sides, sides[0]):  # the first again: it gets the second's
        assert side.sync.exchange().state == "pushed"
    bare = work / "remote.git"
    log = git(bare, "log", "--format=%s|%an <%ae>|%p", "main").splitlines()
    assert all(len(line.rsplit("|", 1)[1].split()) <= 1 for line in log), "a merge"
    subjects = [line.split("|")[0] for line in log]
    for message, author in messages:
        assert subjects.count(message) == 1, f"{message}: {subjects}"
        assert f"{message}|{author}|" in "\n".join(log)
    assert len(subjects) == len(messages) + 1  # nothing else (no conflict records)
    for path, expected in written.items():
        assert keys(git(bare, "show", f"main:{path}")) == expected
    for side in sides:
        assert head(side.root) == head(bare, "main")
        assert_clean(side)


def test_no_process_for_a_replay(tmp_path: Path, monkeypatch) -> None:
    """The replay itself starts no git process (that is what it is for)."""
    _, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    a.sync.exchange(fetch=False)
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    git(b.root, "fetch", "-q", "origin")
    target = head(b.root, "origin/main")
    started = []
    real = subprocess.Popen.__init__
    git_dir, git_root = b.tree.git_dir, b.tree.git_root
    monkeypatch.setattr(subprocess.Popen, "__init__",
                        lambda self, *a, **k: started.append(a) or real(self, *a, **k))
    with b.tree.locked():
        done = replay.replay(git_dir, git_root, "main", target,
                             b.sync.replay_marker)
    assert done is not None and started == []
    assert done.changed == {"notes/p1.yaml"} and done.new == head(b.root)


# -- the fetch after a refused push, in-process over git:// (sync/netfast.py) --------
def test_fetch_over_git_protocol_in_process(tmp_path: Path, monkeypatch) -> None:
    bare, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    a.sync.exchange(fetch=False)
    started = []
    real = subprocess.Popen.__init__
    with GitDaemon(tmp_path) as daemon:
        git(b.root, "remote", "set-url", "origin", daemon.url("remote.git"))
        git_dir = b.tree.git_dir  # (looked up by git once)
        monkeypatch.setattr(subprocess.Popen, "__init__",
                            lambda self, *a, **k: started.append(a) or real(self, *a, **k))
        done = netfast.fetch(git_dir, "origin", "+refs/heads/main:refs/calendar/x",
                             time.monotonic() + 30)
        monkeypatch.undo()
        assert done is True and started == []
        assert head(b.root, "refs/calendar/x") == head(bare, "main")
        assert head(b.root, "origin/main") != head(bare, "main")  # moved only under the lock
        # A write's refused push fetches so, then replays and pushes.
        write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
        with b.sync.group.leading():
            assert b.sync._lead(time.monotonic() + 30).state == "pushed"
        assert head(bare, "main") == head(b.root) and replays(b) == 1


def test_fetch_left_to_git(tmp_path: Path) -> None:
    """By path, or with a URL rewrite configured: git's fetch, as before."""
    _, (a, _b) = make_sides(tmp_path)
    spec = "+refs/heads/main:refs/calendar/x"
    assert netfast.fetch(a.tree.git_dir, "origin", spec, time.monotonic() + 30) is None
    git(a.root, "remote", "set-url", "origin", "git://127.0.0.1:9/remote.git")
    git(a.root, "config", "url.git://127.0.0.1:9/.insteadOf", "mirror:")
    assert netfast.fetch(a.tree.git_dir, "origin", spec, time.monotonic() + 30) is None
    assert netfast.fetch(a.tree.git_dir, "nosuch", spec, time.monotonic() + 30) is None


def test_libgit2_timing_out_a_hair_early_is_still_a_stall() -> None:
    """libgit2 gets the time left in whole ms, so its time-out may fire just before the
    deadline: that is the remote stalling, not a failure to hand to git."""
    import pygit2

    soon = time.monotonic() + 5
    assert netfast._out_of_time(pygit2.GitError("could not read from socket: timed out"), soon)
    assert not netfast._out_of_time(pygit2.GitError("unexpected http status code: 404"), soon)
    assert netfast._out_of_time(pygit2.GitError("anything"), time.monotonic() - 0.001)


def test_stalled_remote_is_stalled_in_time(tmp_path: Path) -> None:
    _, (a, _b) = make_sides(tmp_path)
    server = StalledRemote()
    try:
        git(a.root, "remote", "set-url", "origin", server.url("remote.git"))
        began = time.monotonic()
        with pytest.raises(RemoteStalled, match="no answer"):
            netfast.fetch(a.tree.git_dir, "origin", "+refs/heads/main:refs/calendar/x",
                          began + 0.2)
        assert time.monotonic() - began < 3
    finally:
        server.close()
