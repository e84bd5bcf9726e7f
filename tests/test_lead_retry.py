"""A write's push and its retries (sync.py): the exchange thread's retry of writes answered
"queued" (`retry_queued`), which fetches nothing when a later write's push carried them;
a lead that lost every race gives up for its own write alone; the replay's trees made
from the folders on their way. Two real clones of a real bare repository."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from conftest import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_netfast_push import spawned
from test_replay import assert_clean, head, make_sides, write

from calendar_app.store import gitfast
from calendar_app.sync import replay, sync
from calendar_app.sync.settings import SyncSettings
from calendar_app.sync.sync import RemoteSync


def queued_write(side, path: str, bare: Path, message: str) -> int:
    """A write of `side` answered "queued": the remote is out of reach meanwhile."""
    hidden = bare.with_name("away.git")
    bare.rename(hidden)
    try:
        with side.tree.locked():
            side.tree.apply({path: "k: v\n"}, message, side.author)
            side.sync.on_commit()
        side.sync.settle()
    finally:
        hidden.rename(bare)
    assert side.sync.take_outcome() == "queued"
    return side.sync.group.made()


def test_queued_write_carried_by_a_later_push_costs_the_retry_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync, "QUEUED_GRACE_SECONDS", 0.0)
    bare, (a, _b) = make_sides(tmp_path)
    queued_write(a, "notes/q1.yaml", bare, "a: queued")
    with a.tree.locked():
        a.tree.apply({"notes/q2.yaml": "k: v\n"}, "a: next", a.author)
        a.sync.on_commit()
    a.sync.settle()
    assert a.sync.take_outcome() == "pushed"  # its push carried the queued commit too
    started = spawned(monkeypatch)
    assert a.sync.retry_queued() is None
    assert started == []  # nothing fetched, nothing pushed
    assert head(bare, "main") == head(a.root)


def test_queued_write_is_pushed_by_the_retry_as_a_write_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync, "QUEUED_GRACE_SECONDS", 0.0)
    bare, (a, b) = make_sides(tmp_path)
    queued_write(a, "notes/q1.yaml", bare, "a: queued")
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    assert b.sync.exchange(fetch=False).state == "pushed"  # a's retry loses a race
    result = a.sync.retry_queued()
    assert result is not None and result.state == "pushed"
    assert a.sync.group.marks()["pushed"] == a.sync.group.made()
    assert git(bare, "log", "--format=%s", "main").split("\n")[:2] == [
        "a: queued", "b: new p2"]
    assert head(bare, "main") == head(a.root) and replay.on_branch(a.tree.git_dir) == "main"
    assert_clean(a)


def test_queue_mode_retry_exchanges_at_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`queue` mode: no write pushes, so the retry is an exchange, without the grace."""
    monkeypatch.setattr(sync, "QUEUED_GRACE_SECONDS", 30.0)
    bare, (a, _b) = make_sides(tmp_path)
    a.sync = RemoteSync(a.tree, SyncSettings(remote="origin", push="queue", timeout=60),
                        "origin", a.sync.state_path.parent)
    with a.tree.locked():
        a.tree.apply({"notes/q1.yaml": "k: v\n"}, "a: queued", a.author)
        a.sync.on_commit()
    a.sync.settle()
    started = time.monotonic()
    result = a.sync.retry_queued()
    assert result is not None and result.state == "pushed"
    assert time.monotonic() - started < 10
    assert head(bare, "main") == head(a.root)


# A few paths where files and folders trade places (d, d/e: a file here, a folder there).
PATHS = ["a", "d", "d/b", "d/e", "d/e/c", "x/y/z"]


def valid_tree(files: dict[str, str]) -> dict[str, str]:
    """The files that can stand together: none where another one needs a folder."""
    kept: dict[str, str] = {}
    for path in sorted(files, key=len, reverse=True):
        if not any(other.startswith(f"{path}/") or path.startswith(f"{other}/")
                   for other in kept):
            kept[path] = files[path]
    return kept


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(PATHS), st.sampled_from(["1\n", "2\n"])),
                min_size=2, max_size=5))
def test_rebuilt_trees_are_the_commits_trees(tmp_path_factory, states) -> None:
    """Each commit's tree made again from its parent's with its changes alone (the
    folders on their way, gitfast.tree_with; an index where it answers None) is the
    commit's own tree, byte for byte."""
    import pygit2

    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("trees")), bare=True)
    trees = []
    for files in map(valid_tree, states):
        index = pygit2.Index()
        for path, text in files.items():
            index.add(pygit2.IndexEntry(path, repo.create_blob(text.encode()),
                                        pygit2.GIT_FILEMODE_BLOB))
        trees.append(repo[index.write_tree(repo)])
    for old, new in itertools.pairwise(trees):
        changes = replay._changes(repo, old, new)
        fast = gitfast.tree_with(repo, old, changes)
        assert fast is None or fast == new.id
        if None not in changes.values():  # files added or changed: no index needed
            assert fast == new.id or any(p.startswith(f"{q}/") for p in changes for q in PATHS)
        assert replay._tree_by_index(pygit2, repo, old.id, changes) == new.id


def test_a_lead_that_lost_every_race_gives_up_only_for_its_own_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of b's pushes is beaten by one of a's: after MAX_ROUNDS the leading write
    answers "queued"; a writer whose commit it carried leads again and is pushed."""
    monkeypatch.setattr(sync, "MAX_ROUNDS", 2)
    bare, (a, b) = make_sides(tmp_path)
    for n in (1, 2):
        with b.tree.locked():
            b.tree.apply({f"notes/b{n}.yaml": "k: v\n"}, f"b: new b{n}", b.author)
            b.sync.on_commit()
    real_push, beaten = RemoteSync._push, []

    def push(self, deadline):
        if self is b.sync and len(beaten) < sync.MAX_ROUNDS:  # a pushes first
            write(a, f"notes/a{len(beaten)}.yaml", "k: v\n", f"a: new a{len(beaten)}")
            assert a.sync.exchange(fetch=False).state == "pushed"
            beaten.append(1)
        return real_push(self, deadline)

    monkeypatch.setattr(RemoteSync, "_push", push)
    with b.sync.group.leading():
        result = b.sync._lead(time.monotonic() + 30, own=1)
    assert result.state == "queued" and "moved on during each of 2" in result.error
    assert b.sync.group.marks() == {"pushed": 0, "failed": 1}
    assert b.sync.await_push(2) == "pushed"  # the second writer's own push
    assert b.sync.group.marks()["pushed"] == 2
    assert git(bare, "log", "--format=%s", "main").split("\n")[:4] == [
        "b: new b2", "b: new b1", "a: new a1", "a: new a0"]
