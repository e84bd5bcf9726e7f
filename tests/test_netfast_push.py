"""A write's push made in-process over git:// (calendar_app/sync/netfast.py `push`), the
back-off after a lost race (pushgroup.back_off) and the remote configuration README
recommends (settings.REMOTE_CONFIG). Real clones of a real bare repository served by
a real `git daemon`; the remote's git processes counted from git's own trace2 files."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from conftest import git
from gitserver import GitDaemon
from hypothesis import given, settings
from hypothesis import strategies as st
from test_replay import Side, head, make_sides, write
from test_sync_hardening import StalledRemote

from calendar_app.sync import netfast, pushgroup
from calendar_app.sync.settings import REMOTE_CONFIG, RemoteStalled, SyncError

MAIN = "refs/heads/main"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Side, Side]]:
    """(the bare remote, clone a, clone b), both clones reaching it over git://."""
    bare, (a, b) = make_sides(tmp_path)
    with GitDaemon(tmp_path) as daemon:
        for side in (a, b):
            git(side.root, "remote", "set-url", "origin", daemon.url("remote.git"))
        yield bare, a, b


def spawned(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every process this test process starts from now on."""
    started: list = []
    real = subprocess.Popen.__init__
    monkeypatch.setattr(subprocess.Popen, "__init__",
                        lambda self, *a, **k: started.append(a) or real(self, *a, **k))
    return started


def test_push_in_process(served, monkeypatch: pytest.MonkeyPatch) -> None:
    bare, a, _b = served
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    git_dir, sha = a.tree.git_dir, head(a.root)
    started = spawned(monkeypatch)
    assert netfast.push(git_dir, "origin", sha, MAIN, time.monotonic() + 30) == "pushed"
    monkeypatch.undo()
    assert started == []
    assert head(bare, "main") == head(a.root)
    # Through the sync's push: the remote-tracking branch follows, nothing left unpushed.
    write(a, "notes/p2.yaml", "k2: a\n", "a: new p2")
    with a.sync.group.leading():
        assert a.sync._lead(time.monotonic() + 30).state == "pushed"
    assert head(bare, "main") == head(a.root) == head(a.root, "origin/main")
    assert a.sync.unpushed() == []


def no_delay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_push_socket_sends_without_delay(served, monkeypatch: pytest.MonkeyPatch) -> None:
    """The push's connection has TCP_NODELAY before its commands and pack are sent: the
    pack no longer waits ~40 ms for the remote's delayed acknowledgement."""
    bare, a, _b = served
    port = int(a.sync.git("remote", "get-url", "origin").stdout.split(":")[2].split("/")[0])
    seen: list[int] = []

    class Watched(netfast._Connection):
        def no_delay(self) -> None:
            super().no_delay()
            for fd, inode in netfast._sockets().items():
                if inode in self.before:
                    continue
                with socket.socket(fileno=os.dup(fd)) as sock:
                    if sock.getpeername()[1] == port:
                        seen.append(no_delay(sock))

    monkeypatch.setattr(netfast, "_Connection", Watched)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    assert netfast.push(a.tree.git_dir, "origin", head(a.root), MAIN,
                        time.monotonic() + 30) == "pushed"
    assert seen == [1]
    assert head(bare, "main") == head(a.root)


def test_no_delay_only_on_new_sockets_to_the_remote() -> None:
    """Sockets open before the push, or to another port, are left as they are."""
    with socket.create_server(("127.0.0.1", 0)) as remote, \
            socket.create_server(("127.0.0.1", 0)) as other:
        port = remote.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as older:
            connection = netfast._Connection(f"git://127.0.0.1:{port}/calendar.git")
            with socket.create_connection(("127.0.0.1", port)) as ours, \
                    socket.create_connection(other.getsockname()) as elsewhere:
                connection.no_delay()
                assert (no_delay(ours), no_delay(older), no_delay(elsewhere)) == (1, 0, 0)
                assert connection.set == 1


def test_push_refused_when_the_remote_moved_on(served) -> None:
    bare, a, b = served
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    assert a.sync.exchange(fetch=False).state == "pushed"
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    deadline = time.monotonic() + 30
    # The remote's head unknown here (libgit2 says so before sending anything) ...
    assert netfast.push(b.tree.git_dir, "origin", head(b.root), MAIN, deadline) == "refused"
    # ... or known and not an ancestor of ours: refused, never forced.
    git(b.root, "fetch", "-q", "origin")
    assert netfast.push(b.tree.git_dir, "origin", head(b.root), MAIN, deadline) == "refused"
    assert head(bare, "main") == head(a.root)
    # The write's push fetches, integrates and pushes again: both commits on the remote.
    with b.sync.group.leading():
        assert b.sync._lead(time.monotonic() + 30).state == "pushed"
    assert git(bare, "log", "--format=%s", "main").split("\n")[:3] == [
        "b: new p2", "a: new p1", "initial"]


def test_race_lost_at_the_remote_is_a_refusal(served) -> None:
    """Another push lands between our pack and our ref update (an `update` hook moves the
    branch, as a concurrent receive-pack would): the remote reports the lost race, the
    write's push integrates that commit and pushes again."""
    bare, a, b = served
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    other = head(a.root)
    git(a.root, "push", "-q", "origin", f"{other}:refs/heads/side")
    hook = bare / "hooks" / "update"
    hook.write_text(f"#!/bin/sh\n[ -e race-done ] && exit 0\ntouch race-done\n"
                    f"git update-ref refs/heads/main {other}\n")
    hook.chmod(0o755)
    assert netfast.push(b.tree.git_dir, "origin", head(b.root), MAIN,
                        time.monotonic() + 30) == "refused"
    assert head(bare, "main") == other
    with b.sync.group.leading():
        assert b.sync._lead(time.monotonic() + 30).state == "pushed"
    assert git(bare, "log", "--format=%s", "main").split("\n")[:3] == [
        "b: new p2", "a: new p1", "initial"]


def test_hook_refusal_is_an_error_with_the_remote_words(served) -> None:
    bare, a, _b = served
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no pushes on Sunday' >&2\nexit 1\n")
    hook.chmod(0o755)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    with pytest.raises(SyncError, match="refused refs/heads/main: pre-receive hook declined"):
        netfast.push(a.tree.git_dir, "origin", head(a.root), MAIN, time.monotonic() + 30)
    with a.sync.group.leading():
        result = a.sync._lead(time.monotonic() + 30)
    assert result.state == "queued" and "hook declined" in result.error
    assert a.sync.group.marks()["failed"] == a.sync.group.made()  # waiters answer queued
    assert head(bare, "main") != head(a.root)


def test_push_left_to_git(tmp_path: Path) -> None:
    """By path, with a URL rewrite, an unknown remote, no time left: git pushes."""
    _, (a, _b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    sha, soon = head(a.root), time.monotonic() + 30
    assert netfast.push(a.tree.git_dir, "origin", sha, MAIN, soon) is None
    assert netfast.push(a.tree.git_dir, "nosuch", sha, MAIN, soon) is None
    assert netfast.push(None, "origin", sha, MAIN, soon) is None
    git(a.root, "remote", "set-url", "origin", "git://127.0.0.1:9/remote.git")
    assert netfast.push(a.tree.git_dir, "origin", sha, MAIN, time.monotonic() - 1) is None
    git(a.root, "config", "url.git://127.0.0.1:9/.insteadOf", "mirror:")
    assert netfast.push(a.tree.git_dir, "origin", sha, MAIN, soon) is None
    git(a.root, "config", "--unset", "url.git://127.0.0.1:9/.insteadOf")
    # Nobody listening: libgit2 fails at once, git is left to say so.
    assert netfast.push(a.tree.git_dir, "origin", sha, MAIN, soon) is None


def test_stalled_remote_push_is_stalled_in_time(tmp_path: Path) -> None:
    _, (a, _b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    server = StalledRemote()
    try:
        git(a.root, "remote", "set-url", "origin", server.url("remote.git"))
        began = time.monotonic()
        with pytest.raises(RemoteStalled, match="no answer"):
            netfast.push(a.tree.git_dir, "origin", head(a.root), MAIN, began + 0.2)
        assert time.monotonic() - began < 3
    finally:
        server.close()


@settings(max_examples=300, deadline=200)
@given(st.one_of(st.none(), st.text(max_size=300)))
def test_any_remote_report_is_pushed_refused_or_an_error(report: str | None) -> None:
    try:
        answer = netfast.verdict(MAIN, report)
    except SyncError as exc:
        assert report is not None and "\n" not in str(exc) and len(str(exc)) < 300
    else:
        assert answer == ("pushed" if report is None else "refused")


@settings(max_examples=200, deadline=500)
@given(lost=st.integers(-5, 10**6), left=st.floats(-1, 0.3), seed=st.integers(0, 2**32))
def test_back_off_is_bounded(lost: int, left: float, seed: int) -> None:
    slept: list[float] = []
    with mock.patch.object(pushgroup.time, "sleep", slept.append):
        pause = pushgroup.back_off(lost, time.monotonic() + left, random.Random(seed))
    assert 0 <= pause <= min(pushgroup.BACKOFF_CAP, max(0.0, left))
    assert slept == ([pause] if pause > 0 else [])


def test_back_off_after_a_first_lost_race_is_short() -> None:
    rng, far = random.Random(7), time.monotonic() + 60
    assert max(pushgroup.back_off(1, far, rng) for _ in range(3)) \
        <= pushgroup.BACKOFF_SECONDS


def git_commands(trace: Path, skip: set[str]) -> list[str]:
    """The git commands of the processes that wrote a trace2 file in `trace` but not
    one of `skip` (the daemon's per-connection `--serve` children name none)."""
    names = []
    for name in set(os.listdir(trace)) - skip:
        for line in (trace / name).read_text().splitlines():
            event = json.loads(line)
            if event.get("event") == "cmd_name":
                names.append(event["name"])
                break
    return names


def test_recommended_remote_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With README's settings the remote takes pushes as before and spawns no gc per
    push; the pushing side starts no git process at all."""
    bare, (a, _b) = make_sides(tmp_path)
    for key, value in REMOTE_CONFIG.items():
        git(bare, "config", key, value)
    trace = tmp_path / "trace"
    trace.mkdir()
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))  # the daemon and its children
    with GitDaemon(tmp_path) as daemon:
        git(a.root, "remote", "set-url", "origin", daemon.url("remote.git"))
        before = set(os.listdir(trace))
        for n in range(3):
            write(a, f"notes/q{n}.yaml", f"k: {n}\n", f"a: q{n}")
            with a.sync.group.leading():
                assert a.sync._lead(time.monotonic() + 30).state == "pushed"
        commands = git_commands(trace, before)
    assert head(bare, "main") == head(a.root)
    assert commands.count("receive-pack") == 3
    assert not {"gc", "maintenance", "push", "pack-objects"} & set(commands), commands
