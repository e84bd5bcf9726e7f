"""The Whoosh rebuild runs in a child process (catalog/forked.py): requests and writes
go on meanwhile, and a child killed at any point leaves an index state the next
flush repairs."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from test_index import BASE, search_ids, setup  # noqa: F401 - `setup` is a fixture

from calendar_app.catalog import forked, index


def whoosh_ids(cal, text: str, collection: str = "events") -> set[int]:
    fields = index.EVENT_SEARCH_FIELDS if collection == "events" else index.TEXT_FIELDS[
        collection]
    found = cal.index.text.search(index.SearchTerms(text).query(collection, fields))
    return found[0] if found else set()


def assert_reaped(pid: int) -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_rebuild_runs_in_a_child_while_requests_and_writes_go_on(setup, auth) -> None:  # noqa: F811
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    seen: dict = {}

    def while_child_runs(pid: int) -> None:
        # Stopped, the child cannot finish before the requests below are answered.
        os.kill(pid, signal.SIGSTOP)
        seen["pid"] = pid
        seen["search"] = search_ids(app, "jazz")
        # A write takes the catalog's lock: the rebuild must not hold it.
        seen["write"] = app.test_client().post(
            f"{BASE}/events/105", json={"title": "Jazz Zebrafest"},
            headers=auth("administrator")).status_code
        seen["venues"] = app.test_client().get(f"{BASE}/venues?search=barn").status_code
        os.kill(pid, signal.SIGCONT)

    cal.index.text.on_child = while_child_runs
    assert not cal.index.text.exists()
    cal.index.flush()
    assert seen["pid"] != os.getpid()
    assert seen["search"] == [103, 104]
    assert seen["write"] == 200
    assert seen["venues"] == 200
    assert_reaped(seen["pid"])
    assert cal.index.text.exists()
    assert whoosh_ids(cal, "bebop") == {103}
    # The write made during the rebuild stays pending, and the next flush writes it.
    assert cal.index.pending() == {cal.catalog.get(105).path}
    cal.index.text.on_child = None
    cal.index.flush()
    assert not cal.index.pending()
    assert 105 in whoosh_ids(cal, "zebrafest")
    assert search_ids(app, "zebrafest") == [105]


def test_a_killed_first_build_leaves_no_index_and_the_next_flush_builds(setup) -> None:  # noqa: F811
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    pids = []
    cal.index.text.on_child = lambda pid: (pids.append(pid), os.kill(pid, signal.SIGKILL))
    with pytest.raises(forked.ChildFailed):
        cal.index.flush()
    assert_reaped(pids[0])
    assert not cal.index.text.exists()
    assert cal.index.pending()  # still to do
    assert search_ids(app, "jazz") == [103, 104]  # answered from memory meanwhile
    r = app.test_client().get(f"{BASE}/venues?search=barn")
    assert [v["id"] for v in r.get_json()["venues"]] == [22]
    cal.index.text.on_child = None
    cal.index.flush()
    assert not cal.index.pending()
    assert whoosh_ids(cal, "barn", "venues") == {22}
    assert not list(cal.index.text.folder.glob("whoosh.new.*"))


def _indexed_then_edited(setup, monkeypatch):  # noqa: F811
    """An app over a tree indexed by an earlier run and edited while it was down (one
    event renamed), whose catch-up goes to a child however small it is."""
    content, make = setup
    first = make()
    first.extensions["calendar"].index.flush()
    first.extensions["calendar"].close()
    jazz = content / "events" / "jazz-night.yaml"
    jazz.write_text(jazz.read_text().replace("Jazz Night", "Blues Night"))
    monkeypatch.setattr(index, "DETACH_ABOVE", 0)  # any catch-up is a rebuild here
    return make()


def test_a_catch_up_killed_midway_keeps_the_old_index(setup, monkeypatch) -> None:  # noqa: F811
    app = _indexed_then_edited(setup, monkeypatch)
    cal = app.extensions["calendar"]
    cal.index.text.on_child = lambda pid: os.kill(pid, signal.SIGKILL)
    with pytest.raises(forked.ChildFailed):
        cal.index.flush()
    # The old index and its manifest, untouched: usable, one path still to catch up.
    assert cal.index.text.exists()
    assert cal.index.text.differences(cal.catalog) == {"events/jazz-night.yaml"}
    assert whoosh_ids(cal, "bebop") == {103}
    cal.index.text.on_child = None
    monkeypatch.undo()
    assert cal.index.flush() == 1  # one document: the old index was kept
    assert whoosh_ids(cal, "blues") == {103}


def test_a_child_dying_between_swap_and_manifest_forces_a_rebuild(setup, monkeypatch) -> None:  # noqa: F811
    """The worst moment: the new folder is in place, its manifest not yet written. The
    old manifest is gone first, so that folder is never trusted with it."""
    app = _indexed_then_edited(setup, monkeypatch)
    cal = app.extensions["calendar"]
    parent = os.getpid()
    real_save = index.TextIndex._save_manifest

    def die_in_child(self, entries):
        if os.getpid() != parent:
            os._exit(9)
        real_save(self, entries)

    monkeypatch.setattr(index.TextIndex, "_save_manifest", die_in_child)
    with pytest.raises(forked.ChildFailed):
        cal.index.flush()
    assert not cal.index.text.exists()
    monkeypatch.setattr(index.TextIndex, "_save_manifest", real_save)
    assert cal.index.flush() == -1  # rebuilt
    assert cal.index.text.exists()
    assert whoosh_ids(cal, "blues") == {103}
    assert not list(cal.index.text.folder.glob("whoosh.old.*"))


def test_the_child_answers_a_failure_and_a_value() -> None:
    assert forked.run_in_child(lambda alive: (alive(), os.getpid())) != (True, os.getpid())
    assert forked.run_in_child(lambda alive: alive()) is True
    assert forked.run_in_child(lambda alive: os.nice(0)) == min(19, os.nice(0) + forked.NICENESS)

    def fails(alive):
        raise ValueError("no good")

    with pytest.raises(forked.ChildFailed, match="ValueError: no good"):
        forked.run_in_child(fails)


def test_the_parent_thread_alone_waits() -> None:
    """Another thread runs on while the calling thread waits for its child."""
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.01)

    t = threading.Thread(target=tick)
    t.start()
    try:
        import time
        before = len(ticks)
        forked.run_in_child(lambda alive: time.sleep(0.3))
        assert len(ticks) - before >= 5
    finally:
        stop.set()
        t.join()


def test_the_child_dies_with_the_process_that_forked_it(tmp_path) -> None:
    """A worker killed mid-rebuild (gunicorn's timeout, an operator) takes its child
    along: no orphan builds on for minutes."""
    import subprocess
    import sys
    import time

    script = ("import os, sys, time\n"
              "from calendar_app.catalog import forked\n"
              "forked.run_in_child(lambda alive: time.sleep(60),\n"
              "                    started=lambda pid: print(pid, flush=True))\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        os.kill(child, 0)  # running
        proc.kill()
        proc.wait(5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the child outlived its parent")
    finally:
        proc.kill()
