"""Writers waiting for their pushes share one (calendar_app/sync/pushgroup.py): many
writers at once, as threads of one process and as gunicorn workers, against a real
`git daemon` remote. Every write answered 201 "pushed" is on the remote when it is
answered, each write is its own commit, no id is given twice, and the remote took
fewer pushes than there were writes (a hook on the bare repository counts them)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BASE, git
from gitserver import GitDaemon, free_port, start_calendar_server, stop_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reliability_concurrency import Http, ThreadedServer, basic, wait_for_port
from test_sync import make_app, make_remote

from calendar_app.sync.pushgroup import PushGroup


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[GitDaemon, Path]]:
    """The sample calendar in a bare repository served over git://, with a hook that
    notes every push to a branch (id leases push refs/calendar/..., not counted)."""
    bare = make_remote(tmp_path)
    hook = bare / "hooks" / "post-receive"
    hook.write_text("#!/bin/sh\ngrep ' refs/heads/' >> \"$GIT_DIR/branch-pushes.log\"\n"
                    "exit 0\n")
    hook.chmod(0o755)
    with GitDaemon(tmp_path, log=tmp_path / "daemon.log") as served:
        yield served, bare


def branch_pushes(bare: Path) -> int:
    log = bare / "branch-pushes.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def hammer(port: int, password: str, clients: int, each: int, tag: str,
           bare: Path) -> list[dict]:
    """`clients` threads POSTing `each` events; each answer, with whether its id was
    on the remote's branch the moment it was answered."""
    results: list[dict] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        http = Http(port, basic("administrator", password))
        for n in range(each):
            title = f"{tag} {k}-{n}"
            status, headers, body = http.request("POST", f"{BASE}/events", {
                "title": title, "start_date": "2027-03-01 20:00:00",
                "end_date": "2027-03-01 22:00:00"}, timeout=120)
            record_id = body.get("id") if isinstance(body, dict) else None
            on_remote = status == 201 and f"(#{record_id})" in git(
                bare, "log", "-1", "--format=%s", "--fixed-strings",
                f"--grep=(#{record_id})", "main")
            with lock:
                results.append({"title": title, "status": status, "id": record_id,
                                "sync": headers.get("x-calendar-sync"),
                                "on_remote": on_remote})

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def assert_all_pushed_once(results: list[dict], bare: Path, writes: int) -> None:
    assert len(results) == writes
    assert [r for r in results if r["status"] != 201] == []
    # No other clone pushes to this remote: no push loses a race, nothing is queued.
    assert {r["sync"] for r in results} == {"pushed"}
    assert [r["title"] for r in results if not r["on_remote"]] == []
    ids = [r["id"] for r in results]
    assert len(set(ids)) == writes, "an id was given twice"
    subjects = git(bare, "log", "--format=%s", "main")
    for r in results:  # each write its own commit
        assert subjects.count(f'events: create "{r["title"]}" (#{r["id"]})') == 1
    pushes = branch_pushes(bare)
    assert 1 <= pushes < writes, f"{pushes} pushes for {writes} writes: none was shared"


def test_threads_of_one_process_share_pushes(tmp_path: Path, daemon, users) -> None:
    served, bare = daemon
    app = make_app(tmp_path, served.url("remote.git"))
    try:
        with ThreadedServer(app) as server:
            results = hammer(server.port, users["administrator"], 6, 4, "threads", bare)
        assert_all_pushed_once(results, bare, 24)
        # The clone and the remote agree; nothing is left to push.
        assert git(bare, "rev-parse", "main") == git(tmp_path / "server", "rev-parse", "HEAD")
        assert app.extensions["calendar"].remote_sync.unpushed() == []
    finally:
        app.extensions["calendar"].close()


@pytest.mark.slow  # gunicorn, 3 workers; quick form: test_threads_of_one_process_share_pushes
def test_gunicorn_workers_share_pushes_through_the_repository(tmp_path: Path, daemon,
                                                              users) -> None:
    """Three worker processes of one instance (two threads each): a push led by one
    carries the commits the others made meanwhile; they find theirs pushed. (About
    ten seconds: a production server is started, then hammered.)"""
    served, bare = daemon
    port = free_port()
    log = tmp_path / "server.log"
    proc = start_calendar_server(tmp_path / "clone", tmp_path / "users.yaml",
                                 tmp_path / "cache", port, served.url("remote.git"), log,
                                 workers=3, threads=2)
    try:
        wait_for_port(port, proc, timeout=60, log=log)
        results = hammer(port, users["administrator"], 6, 4, "workers", bare)
    finally:
        stop_process(proc)
    assert_all_pushed_once(results, bare, 24)
    assert git(bare, "rev-parse", "main") == git(tmp_path / "clone", "rev-parse", "HEAD")


def test_a_push_that_fails_answers_every_waiting_writer_queued(tmp_path: Path, daemon,
                                                              users) -> None:
    """The remote goes away: each waiting writer answers 201 "queued" (committed here)
    without hanging; once the remote is back one exchange pushes them all."""
    served, bare = daemon
    app = make_app(tmp_path, served.url("remote.git"))
    sync = app.extensions["calendar"].remote_sync
    try:
        with ThreadedServer(app) as server:
            app.test_client().get(f"{BASE}/")
            assert sync.caught_up.wait(30)
            served.stop()
            started = time.monotonic()
            results = hammer(server.port, users["administrator"], 4, 2, "offline", bare)
            assert time.monotonic() - started < 60
            assert {(r["status"], r["sync"]) for r in results} == {(201, "queued")}
            assert not any(r["on_remote"] for r in results)
            assert len(sync.unpushed()) == 8
            served.start()
            assert sync.exchange().state == "pushed"
        subjects = git(bare, "log", "--format=%s", "main")
        assert all(f'(#{r["id"]})' in subjects for r in results)
        marks = sync.group.marks()
        assert marks["pushed"] >= marks["failed"] >= 1
    finally:
        app.extensions["calendar"].close()


# -- the counter and the marks ------------------------------------------------------
OPS = st.lists(st.one_of(st.just(("commit",)),
                         st.tuples(st.just("record"), st.integers(-5, 60), st.booleans()),
                         st.just(("lose-counter",)),
                         st.tuples(st.just("garble"), st.binary(max_size=40))),
               max_size=40)


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_numbers_grow_and_marks_never_claim_a_new_commit(tmp_path_factory, ops) -> None:
    """Whatever happens to the two files (lost, garbled), a new commit's number is above
    the pushed mark (never taken for pushed), numbers only grow while the counter is
    kept, and the marks only grow."""
    group = PushGroup(tmp_path_factory.mktemp("group"))
    last = 0
    for op in ops:
        before = group.marks()
        if op[0] == "commit":
            number = group.commit_made()
            assert number > group.marks()["pushed"] and number > last
            last = number
        elif op[0] == "record":
            group.record(op[1], op[2])
            after = group.marks()
            assert after["pushed"] >= before["pushed"] and after["failed"] >= before["failed"]
        elif op[0] == "lose-counter":  # numbering starts again above the pushed mark
            group.counter_path.unlink(missing_ok=True)
            last = 0
        else:
            group.marks_path.write_bytes(op[1])
            assert all(isinstance(v, int) for v in group.marks().values())


def test_one_leader_at_a_time(tmp_path: Path) -> None:
    group = PushGroup(tmp_path)
    inside = []
    overlap = []

    def lead() -> None:
        for _ in range(20):
            with group.leading():
                inside.append(1)
                overlap.append(len(inside))
                time.sleep(0.001)
                inside.pop()

    threads = [threading.Thread(target=lead) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(overlap) == 80 and max(overlap) == 1
