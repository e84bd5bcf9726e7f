"""Group commit of durability (calendar_app/store/durable.py): an interface write
flushes nothing under the write lock; once it let go of it, its files are flushed in
one batch with the other writers' waiting then, before its push and its answer. The
faults injected here (a flush held back) show the order: nothing is answered nor
pushed before its files are flushed."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from conftest import BASE, git
from test_sync import make_app, make_remote

from calendar_app.store import content as content_mod
from calendar_app.store import durable
from calendar_app.store.content import ContentTree
from calendar_app.sync import netfast

AUTHOR = "Writer <writer@example.org>"


def _venue(n: int) -> dict[str, str]:
    return {f"venues/group-{n}.yaml": f"id: {9100 + n}\nname: Group {n}\nslug: group-{n}\n"}


class Gate:
    """A batch's flushes as they are, noted in `events` ("synced" once per batch),
    held back while `open` is clear; `held` is set once a flush waits there."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, events: list[str],
                 pause: float = 0.0) -> None:
        self.open = threading.Event()
        self.open.set()
        self.held = threading.Event()
        self.paths: list[Path] = []
        real = durable.fsync_path
        first = [True]

        def fsync_path(path: Path) -> None:
            if not self.open.is_set():
                self.held.set()
            self.open.wait(30)
            if first[0]:  # the first path of a batch: sorted, files before folders
                time.sleep(pause)
            real(path)
            self.paths.append(path)
            first[0] = False
        real_flush = durable.GroupSync.flush

        def flush(group: durable.GroupSync, paths: object) -> None:
            before = group.batches
            real_flush(group, paths)
            if group.batches > before:
                events.append("synced")
        monkeypatch.setattr(durable, "fsync_path", fsync_path)
        monkeypatch.setattr(durable.GroupSync, "flush", flush)


def test_no_flush_under_the_lock_and_the_sync_after_the_settling(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "state" / "lock")
    events: list[str] = []
    gate = Gate(monkeypatch, events)
    real_fsync = os.fsync
    monkeypatch.setattr(content_mod.os, "fsync",
                        lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    with tree.group_synced(lambda: events.append("settled")), tree.locked():
        tree.apply(_venue(1), "venues: one", AUTHOR)
        events.append("lock let go")
    # Not one flush under the lock; the files flushed, then the push (settling).
    assert "fsync" not in events[:events.index("lock let go")]
    assert [e for e in events if e != "fsync"] == ["lock let go", "synced", "settled"]
    assert content / "venues/group-1.yaml" in gate.paths
    assert content / "venues" in gate.paths
    assert git(content, "log", "-1", "--format=%s").strip() == "venues: one"
    # Outside a group-synced block a write still flushes its own files (CLI, imports).
    events.clear()
    with tree.locked():
        tree.apply(_venue(2), "venues: two", AUTHOR)
    assert "fsync" in events and "synced" not in events


def test_writers_waiting_together_share_one_sync(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "state" / "lock")
    events: list[str] = []
    gate = Gate(monkeypatch, events, pause=0.05)
    gate.open.clear()
    done: list[int] = []

    def writer(n: int) -> None:
        with tree.group_synced(lambda: None), tree.locked():
            tree.apply(_venue(n), f"venues: {n}", AUTHOR)
        done.append(n)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    assert done == []  # every writer waits for a sync; the first one is held
    gate.open.set()
    for thread in threads:
        thread.join(30)
    assert sorted(done) == list(range(6))
    # The first batch took what was there; the writers arriving meanwhile went in one.
    assert 1 <= tree.group_sync.batches <= 3, tree.group_sync.batches
    assert {content / f"venues/group-{n}.yaml" for n in range(6)} <= set(gate.paths)
    assert len(git(content, "log", "--format=%s", "-6").splitlines()) == 6


def test_a_large_write_keeps_its_one_syncfs(content: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An import in a group-synced block: its thousands of files are not flushed one
    by one in the batch, the file system is synced once as before."""
    tree = ContentTree(content, tmp_path / "state" / "lock")
    syncs: list[Path] = []
    monkeypatch.setattr(content_mod.bulkwrite, "syncfs",
                        lambda folder: syncs.append(folder) or True)
    events: list[str] = []
    gate = Gate(monkeypatch, events)
    changes: dict[str, str] = {}
    for n in range(content_mod.SYNC_ONCE_FROM + 3):
        changes.update(_venue(n))
    with tree.group_synced(lambda: None), tree.locked():
        tree.apply(changes, "venues: many", AUTHOR)
    assert syncs and not [p for p in gate.paths if p.suffix == ".yaml"]


def test_answered_only_after_the_sync_without_a_remote(
        client, admin: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    client.get(f"{BASE}/events")  # the app is up before the gate closes
    events: list[str] = []
    gate = Gate(monkeypatch, events)
    gate.open.clear()
    answers: list[int] = []
    thread = threading.Thread(target=lambda: answers.append(client.post(
        f"{BASE}/venues", headers=admin, json={"venue": "Held venue"}).status_code))
    thread.start()
    assert gate.held.wait(30)
    time.sleep(0.1)  # an answer not waiting for the sync would be in by now
    assert answers == [] and events == []  # committed, not answered before its sync
    gate.open.set()
    thread.join(30)
    assert answers == [201] and events == ["synced"]


def test_pushed_and_answered_only_after_the_sync(
        tmp_path: Path, admin: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = make_remote(tmp_path)
    app = make_app(tmp_path, str(remote))
    client = app.test_client()
    client.get(f"{BASE}/")
    assert app.extensions["calendar"].remote_sync.caught_up.wait(30)
    events: list[str] = []
    real_push = netfast.push
    monkeypatch.setattr(netfast, "push", lambda *a, **k: (events.append("push"),
                                                          real_push(*a, **k))[1])
    gate = Gate(monkeypatch, events)
    gate.open.clear()
    answers: list = []
    thread = threading.Thread(target=lambda: answers.append(client.post(
        f"{BASE}/venues", headers=admin, json={"venue": "Pushed venue"})))
    thread.start()
    assert gate.held.wait(30)
    time.sleep(0.1)  # a push or an answer not waiting for the sync would be in by now
    assert answers == [] and events == []  # neither pushed nor answered
    assert 'create "Pushed venue"' not in git(remote, "log", "-1", "--format=%s", "main")
    gate.open.set()
    thread.join(30)
    resp = answers[0]
    assert resp.status_code == 201 and resp.headers["X-Calendar-Sync"] == "pushed"
    # The write's files flushed, then its push.
    assert events == ["synced", "push"]
    assert 'create "Pushed venue"' in git(remote, "log", "-1", "--format=%s", "main")
    app.extensions["calendar"].close()
