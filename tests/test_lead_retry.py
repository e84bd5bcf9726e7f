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
from test_replay import assert_clean, head, keys, make_sides, open_side, write

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

    def push(self, deadline, head=""):
        if self is b.sync and len(beaten) < sync.MAX_ROUNDS:  # a pushes first
            write(a, f"notes/a{len(beaten)}.yaml", "k: v\n", f"a: new a{len(beaten)}")
            assert a.sync.exchange(fetch=False).state == "pushed"
            beaten.append(1)
        return real_push(self, deadline, head)

    monkeypatch.setattr(RemoteSync, "_push", push)
    with b.sync.group.leading():
        result = b.sync._lead(time.monotonic() + 30, own=1)
    assert result.state == "queued" and "moved on during each of 2" in result.error
    assert b.sync.group.marks() == {"pushed": 0, "failed": 1}
    assert b.sync.await_push(2) == "pushed"  # the second writer's own push
    assert b.sync.group.marks()["pushed"] == 2
    assert git(bare, "log", "--format=%s", "main").split("\n")[:4] == [
        "b: new b2", "b: new b1", "a: new a1", "a: new a0"]


def lost_race(tmp_path: Path):
    """(bare, a, b): a pushed p1; b wrote p2, not pushed: b's next push is refused."""
    bare, (a, b) = make_sides(tmp_path)
    write(a, "notes/p1.yaml", "k1: a\n", "a: new p1")
    assert a.sync.exchange(fetch=False).state == "pushed"
    write(b, "notes/p2.yaml", "k2: b\n", "b: new p2")
    return bare, a, b


def test_lost_race_pushes_rebuilt_commits_before_taking_the_write_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare, _a, b = lost_race(tmp_path)
    events: list[str] = []
    real_push, real_locked = RemoteSync._push, type(b.tree).locked

    def push(self, deadline, head=""):
        pushed = real_push(self, deadline, head)
        events.append("pushed" if pushed else "refused")
        return pushed

    def locked(self):
        events.append("write lock")
        return real_locked(self)

    monkeypatch.setattr(RemoteSync, "_push", push)
    monkeypatch.setattr(type(b.tree), "locked", locked)
    seen: list[set[str]] = []
    b.sync.integrated_hooks.append(seen.append)
    with b.sync.group.leading():
        result = b.sync._lead(time.monotonic() + 30)
    assert result.state == "pushed" and result.changed == {"notes/p1.yaml"}
    # One lost race, then the rebuilt commits went out; the write lock only after them.
    assert events == ["refused", "pushed", "write lock"]
    assert seen == [{"notes/p1.yaml"}]  # the catalog re-reads the remote's file
    assert head(b.root) == head(bare, "main") == head(b.root, "origin/main")
    assert git(bare, "log", "--format=%s|%an", "main").split("\n")[:2] == [
        "b: new p2|Bo Side", "a: new p1|Ada Side"]
    assert (b.root / "notes" / "p1.yaml").read_text() == "k1: a\n"
    assert not b.sync.replay_marker.exists()
    assert_clean(b)


def test_rebuild_touches_nothing_but_objects(tmp_path: Path) -> None:
    _bare, _a, b = lost_race(tmp_path)
    before = (head(b.root), git(b.root, "status", "--porcelain"),
              (b.root / ".git" / "index").read_bytes())
    rebuilt = b.sync._rebuild(b.sync._fetch(time.monotonic() + 30))
    assert rebuilt is not None and rebuilt.old == before[0]
    assert rebuilt.changed == {"notes/p1.yaml"}
    assert (head(b.root), git(b.root, "status", "--porcelain"),
            (b.root / ".git" / "index").read_bytes()) == before
    assert not (b.root / "notes" / "p1.yaml").exists()
    assert not b.sync.replay_marker.exists()
    assert git(b.root, "log", "--format=%s", rebuilt.new).split("\n")[:3] == [
        "b: new p2", "a: new p1", "initial"]


def test_a_write_between_rebuild_and_adopt_is_replayed_on_top(tmp_path: Path) -> None:
    """A writer commits while the rebuilt commits are pushed: `_adopt` replays its
    commit on them under the write lock, in-process, and it is pushed next."""
    bare, _a, b = lost_race(tmp_path)
    rebuilt = b.sync._rebuild(b.sync._fetch(time.monotonic() + 30))
    assert rebuilt is not None
    write(b, "notes/p3.yaml", "k3: b\n", "b: new p3")
    assert b.sync._push(time.monotonic() + 30, rebuilt.new) == rebuilt.new
    assert b.sync._adopt(rebuilt) == {"notes/p1.yaml"}
    assert git(b.root, "rev-parse", "main~1").strip() == rebuilt.new
    assert git(b.root, "log", "--format=%s", "main").split("\n")[:4] == [
        "b: new p3", "b: new p2", "a: new p1", "initial"]
    assert [line.split(" ", 1)[1] for line in b.sync.unpushed()] == ["b: new p3"]
    assert b.sync.exchange(fetch=False).state == "pushed"
    assert head(bare, "main") == head(b.root)
    assert_clean(b)


def test_a_write_on_the_remotes_path_meanwhile_is_integrated_by_git(tmp_path: Path) -> None:
    """The commit made meanwhile changed a path the remote changed: no in-process
    replay; git's rebase (key-level merge) integrates, nothing is lost or doubled."""
    bare, _a, b = lost_race(tmp_path)
    rebuilt = b.sync._rebuild(b.sync._fetch(time.monotonic() + 30))
    assert rebuilt is not None
    write(b, "notes/p1.yaml", "k9: b\n", "b: new p1 too")
    assert b.sync._push(time.monotonic() + 30, rebuilt.new) == rebuilt.new
    b.sync._adopt(rebuilt)
    assert b.sync.exchange().state == "pushed"
    assert head(bare, "main") == head(b.root)
    log = git(bare, "log", "--format=%s", "main").split("\n")
    assert log.count("b: new p2") == 1 and log.count("a: new p1") == 1
    assert set(keys(git(bare, "show", "main:notes/p1.yaml"))) >= {"k1", "k9"}
    assert_clean(b)


def test_killed_after_pushing_the_rebuilt_commits(tmp_path: Path) -> None:
    """The process dies after the remote took the rebuilt commits, before the branch
    moved: the restart's exchange integrates them (git drops the copies of ours), so
    the clone holds exactly what the remote has, each commit once."""
    bare, _a, b = lost_race(tmp_path)
    rebuilt = b.sync._rebuild(b.sync._fetch(time.monotonic() + 30))
    assert rebuilt is not None
    assert b.sync._push(time.monotonic() + 30, rebuilt.new) == rebuilt.new
    again = open_side(b.root, b.sync.replay_marker.parent, b.author)  # the restart
    assert again.sync.exchange().state == "pushed"
    assert head(b.root) == head(bare, "main") == rebuilt.new
    assert not again.sync.unpushed()
    assert git(bare, "log", "--format=%s", "main").count("b: new p2") == 1
    assert (b.root / "notes" / "p1.yaml").read_text() == "k1: a\n"
    assert_clean(again)


def test_no_rebuild_where_paths_overlap(tmp_path: Path) -> None:
    """Both sides changed one file: nothing is rebuilt nor pushed early; the lead
    integrates under the write lock (git's key-level merge) and pushes after."""
    bare, (a, b) = make_sides(tmp_path)
    write(a, "notes/p0.yaml", "k1: a\n", "a: edit p0")
    assert a.sync.exchange(fetch=False).state == "pushed"
    write(b, "notes/p0.yaml", "k2: b\n", "b: edit p0")
    assert b.sync._rebuild(b.sync._fetch(time.monotonic() + 30)) is None
    with b.sync.group.leading():
        assert b.sync._lead(time.monotonic() + 30).state == "pushed"
    assert head(bare, "main") == head(b.root)
    assert keys(git(bare, "show", "main:notes/p0.yaml")) == {"k0": "start", "k1": "a", "k2": "b"}


def test_the_sync_thread_pushes_a_queued_write_without_another_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The running exchange thread, woken by the write answered "queued", waits the
    grace and pushes it as a write's push would; nothing else writes meanwhile."""
    monkeypatch.setattr(sync, "QUEUED_GRACE_SECONDS", 0.2)
    bare, (a, _b) = make_sides(tmp_path)
    a.sync.start()
    try:
        assert a.sync.caught_up.wait(30)
        made = queued_write(a, "notes/q1.yaml", bare, "a: queued")
        deadline = time.monotonic() + 20
        while a.sync.group.marks()["pushed"] < made and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        a.sync.stop()
    assert a.sync.group.marks()["pushed"] == made
    assert git(bare, "log", "-1", "--format=%s", "main").strip() == "a: queued"
    assert head(bare, "main") == head(a.root)


def test_two_clones_writing_at_once_lose_and_double_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two clones, two writer threads each, every write waiting for its push: races
    are lost and won, rebuilt commits pushed and adopted while the other threads keep
    committing. Every write ends on the remote exactly once, in both clones' work
    trees, and nothing is left half-done (no marker, clean trees)."""
    import threading

    adopted: list[int] = []
    real_adopt = RemoteSync._adopt

    def adopt(self, rebuilt):
        adopted.append(1)
        return real_adopt(self, rebuilt)

    monkeypatch.setattr(RemoteSync, "_adopt", adopt)
    bare, sides = make_sides(tmp_path)
    outcomes: list[str] = []
    errors: list[BaseException] = []

    def writer(side, name: str) -> None:
        try:
            for n in range(12):
                with side.tree.locked():
                    side.tree.apply({f"notes/{name}-{n}.yaml": f"n: {n}\n"},
                                    f"{name}: {n}", side.author)
                    side.sync.on_commit()
                side.sync.settle()
                outcomes.append(side.sync.take_outcome())
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(side, f"{k}{t}"))
               for k, side in zip("ab", sides) for t in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors and len(outcomes) == 48
    assert adopted, "no race was lost: the rebuilt pushes were not exercised"
    assert set(outcomes) <= {"pushed", "queued"}
    for side in sides * 2:  # what one pushed last, the other fetches
        assert side.sync.exchange().state == "pushed"
    log = git(bare, "log", "--format=%s", "main").split("\n")
    wanted = [f"{k}{t}: {n}" for k in "ab" for t in range(2) for n in range(12)]
    assert sorted(m for m in log if m in wanted) == sorted(wanted)  # each once
    for side in sides:
        assert head(side.root) == head(bare, "main")
        assert not side.sync.replay_marker.exists()
        assert sorted(p.name for p in (side.root / "notes").glob("[ab]*.yaml")) == \
            sorted(f"{w.split(':')[0]}-{w.split(': ')[1]}.yaml" for w in wanted)
        assert_clean(side)
