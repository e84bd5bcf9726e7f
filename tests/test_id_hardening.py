"""Ids that stay JSON-safe and out of the occurrence range, and id leases that cannot
hang a server or hand out an id twice (issue 20, items 10, 11, 12 for leases, 18)."""

from __future__ import annotations

import itertools
import os
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import BASE, NOW, SAMPLE_NEXT_ID, clone, git
from gitserver import free_port, start_calendar_server, stop_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reliability_concurrency import Http, basic, wait_for_port

from calendar_app.catalog.occurrences import OCCURRENCE_BASE, SLOTS, occurrence_id
from calendar_app.cli import main
from calendar_app.http.app import create_app
from calendar_app.model.ids import MAX_ID, MAX_JSON_ID
from calendar_app.sync.idlease import (
    LEASES_REF,
    BadLeases,
    IdLeases,
    Lease,
    LeaseUnavailable,
    next_lease,
    parse_leases,
)

M = SAMPLE_NEXT_ID - 1  # the sample's highest id
STAMP = "2026-11-21T12:00:00Z"
SERIES = """\
id: {id}
title: Weekly Gathering
slug: weekly-gathering
start_date: 2027-03-02 19:00:00
end_date: 2027-03-02 21:00:00
recurrence:
  rrule: FREQ=WEEKLY;COUNT=4
"""


def _commit(content: Path, message: str) -> None:
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", message)


def _app(content: Path, tmp_path: Path, **extra: object):
    return create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                       "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                       **extra})


def _gig() -> dict:
    return {"title": "Gig", "start_date": "2027-01-05 20:00:00",
            "end_date": "2027-01-05 22:00:00"}


# -- item 10: occurrence ids stay JSON-safe -------------------------------------------------
def test_the_bound_keeps_every_occurrence_id_json_safe_and_apart_from_record_ids() -> None:
    assert MAX_ID == 899_719_925_473
    assert occurrence_id(MAX_ID, SLOTS - 1) <= MAX_JSON_ID == 2**53 - 1
    assert occurrence_id(MAX_ID + 1, SLOTS - 1) > MAX_JSON_ID
    assert MAX_ID < OCCURRENCE_BASE


def test_a_series_with_the_largest_id_answers_json_safe_ids(content: Path, tmp_path: Path,
                                                           users) -> None:
    (content / "events" / "weekly.yaml").write_text(SERIES.format(id=MAX_ID))
    _commit(content, "a series with the largest id")
    client = _app(content, tmp_path).test_client()
    window = client.get(f"{BASE}/events?start_date=2027-03-01&end_date=2027-03-31")
    assert window.status_code == 200
    ids = [e["id"] for e in window.get_json()["events"] if e.get("series_id") == MAX_ID]
    assert len(ids) == 4 and max(ids) <= MAX_JSON_ID
    children = client.get(f"{BASE}/events?post_parent={MAX_ID}")
    assert children.status_code == 200
    assert {e["id"] for e in children.get_json()["events"]} == set(ids)
    assert client.get(f"{BASE}/events/{ids[-1]}").status_code == 200


def test_a_series_id_above_the_bound_is_left_out_not_a_500(content: Path, tmp_path: Path,
                                                           users) -> None:
    """900,000,000,000 made occurrence ids above 2**53: post_parent and windows gave 500."""
    path = content / "events" / "weekly.yaml"
    path.write_text(SERIES.format(id=900_000_000_000))
    _commit(content, "a series with a large id")
    app = _app(content, tmp_path)
    client = app.test_client()
    window = client.get(f"{BASE}/events?start_date=2027-03-01&end_date=2027-03-31")
    assert window.status_code == 200
    assert not [e for e in window.get_json()["events"] if e["title"] == "Weekly Gathering"]
    assert client.get(f"{BASE}/events?post_parent=900000000000").status_code in (200, 400)
    problems = app.extensions["calendar"].catalog.problems
    assert "events/weekly.yaml" in problems
    assert "1 " in str(problems["events/weekly.yaml"]) or ":1" in str(
        problems["events/weekly.yaml"])


# -- item 11: no record id in the occurrence range ------------------------------------------
def test_a_record_id_in_the_occurrence_range_is_refused_and_never_continued(
        content: Path, tmp_path: Path, users, admin: dict) -> None:
    (content / "events" / "weekly.yaml").write_text(SERIES.format(id=990))
    planted = occurrence_id(990, 1)  # the series' second occurrence's id
    (content / "venues" / "planted.yaml").write_text(f"id: {planted}\nname: Planted Hall\n")
    _commit(content, "a venue with an occurrence's id")
    app = _app(content, tmp_path)
    client = app.test_client()
    assert "venues/planted.yaml" in app.extensions["calendar"].catalog.problems
    assert client.get(f"{BASE}/venues/{planted}").status_code == 400  # an unknown venue
    read = client.get(f"{BASE}/events/{planted}")
    assert read.status_code == 200 and read.get_json()["title"] == "Weekly Gathering"
    created = client.post(f"{BASE}/venues", headers=admin, json={"venue": "New Hall"})
    assert created.status_code == 201
    assert created.get_json()["id"] == max(M, 990) + 1  # not planted + 1


def test_check_refuses_an_id_in_the_occurrence_range_with_its_line(content: Path) -> None:
    (content / "venues" / "planted.yaml").write_text(
        f"name: Planted Hall\nid: {OCCURRENCE_BASE + 5}\n")
    found = subprocess.run([sys.executable, "-m", "calendar_app", "check", str(content),
                            "--format", "github"], capture_output=True, text=True, check=False)
    assert found.returncode == 1
    assert "venues/planted.yaml,line=2" in found.stdout, found.stdout


@pytest.mark.parametrize("record_id", ["99999999999999999999999", str(2**53 + 1),
                                       str(OCCURRENCE_BASE + 3), str(MAX_ID + 1)])
def test_id_parameters_beyond_the_bound_answer_as_unknown_ids(client, record_id: str) -> None:
    for collection in ("events", "venues", "organizers", "categories", "tags"):
        unknown = client.get(f"{BASE}/{collection}/123456")  # an id nothing has
        response = client.get(f"{BASE}/{collection}/{record_id}")
        assert response.status_code == unknown.status_code, response.get_json()
        assert response.get_json()["code"] == unknown.get_json()["code"]
    assert client.get(f"{BASE}/events?post_parent={record_id}").status_code in (200, 400)
    assert client.get(f"{BASE}/events?include={record_id}").status_code in (200, 400)


def test_allocation_stops_at_the_bound_with_a_503(content: Path, tmp_path: Path, users,
                                                  admin: dict) -> None:
    (content / "venues" / "last.yaml").write_text(f"id: {MAX_ID}\nname: Last Hall\n")
    # Retired ids out of range (or not ASCII digits) are no record's: ignored.
    (content / ".retired-ids").write_text(f"¹ {2**60} 7\n")
    _commit(content, "the last id taken")
    client = _app(content, tmp_path).test_client()
    refused = client.post(f"{BASE}/events", headers=admin, json=_gig())
    assert refused.status_code == 503, refused.get_json()
    assert refused.get_json()["code"] == "calendar-ids-unavailable"
    assert refused.get_json()["data"] == {"status": 503}
    assert str(MAX_ID) in refused.get_json()["message"]
    changed = client.post(f"{BASE}/venues/{MAX_ID}", headers=admin, json={"venue": "Final"})
    assert changed.status_code == 200


def test_hostile_retired_ids_do_not_stop_creates(content: Path, tmp_path: Path, users,
                                                 admin: dict) -> None:
    (content / ".retired-ids").write_text(f"¹ {2**60} 7\n")
    _commit(content, "retired ids written by hand")
    client = _app(content, tmp_path).test_client()
    created = client.post(f"{BASE}/events", headers=admin, json=_gig())
    assert created.status_code == 201 and created.get_json()["id"] == M + 1


def test_new_and_check_ignore_hostile_retired_ids(content: Path, capsys) -> None:
    (content / ".retired-ids").write_text(f"¹ {2**60}\n")
    assert main(["new", "venue", "Fresh Hall", "--content", str(content)]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.read_text().startswith(f"id: {M + 1}\n")  # before: ValueError; 2**60 + 1
    assert main(["check", str(content), "--format", "json"]) == 0


# -- item 18: the leases ref is untrusted ---------------------------------------------------
def put_leases(bare: Path, text: str, parent: bool = True) -> str:
    """Write `text` as the leases file on the shared repository's ref (as anyone who
    may push can), on top of the ref's commit when there is one."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, input=text,
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=bare, input=f"100644 blob {blob}\tleases\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    old = subprocess.run(["git", "rev-parse", "-q", "--verify", LEASES_REF], cwd=bare,
                         capture_output=True, text=True, check=False).stdout.strip()
    args = ["commit-tree", tree, "-m", "by hand"] + (["-p", old] if old and parent else [])
    sha = git(bare, *args).strip()
    git(bare, "update-ref", LEASES_REF, sha)
    return sha


def free(_record_id: int) -> bool:
    return False


@pytest.mark.parametrize("text, reason", [
    ("x ¹ 5 t\n", "line 1"),
    (f"a 1 5 {STAMP}\nb 200 {2**60} {STAMP}\n", "line 2"),  # above the bound
    (f"a 200 {OCCURRENCE_BASE + 500} {STAMP}\n", "line 1"),  # into the occurrence range
    (f"a 200 300 {STAMP}\nb 250 400 {STAMP}\n", "line 2"),  # overlapping
    (f"a 500 600 {STAMP}\nb 200 300 {STAMP}\n", "line 2"),  # backwards
    (f"a 200 300 {STAMP} extra\n", "line 1"),
    (f"a ٢٠٠ ٣٠٠ {STAMP}\n", "line 1"),  # digits int() reads, ASCII only here
])
def test_a_bad_leases_ref_is_refused_naming_the_line(bare: Path, tmp_path: Path, text: str,
                                                     reason: str) -> None:
    put_leases(bare, text)
    leases = IdLeases(clone(bare, tmp_path / "a"), "origin", instance="a", block_size=10)
    with pytest.raises(BadLeases, match=reason):
        leases.allocate(152, free)
    assert leases.current() is None
    # Nothing was added to the ref: the servers wait until someone repairs it.
    assert git(bare, "log", "--format=%s", LEASES_REF).splitlines() == ["by hand"]


def test_a_bad_line_does_not_stop_the_server_from_starting(bare: Path, tmp_path: Path, users,
                                                           admin: dict) -> None:
    put_leases(bare, "x ¹ 5 t\n")
    repo = clone(bare, tmp_path / "a")
    app = _app(repo / "content", tmp_path, SYNC_REMOTE="origin")
    client = app.test_client()
    assert client.get(f"{BASE}/events").status_code == 200
    refused = client.post(f"{BASE}/events", headers=admin, json=_gig())
    assert refused.status_code == 503
    assert refused.get_json()["code"] == "calendar-ids-unavailable"
    assert "line 1" in refused.get_json()["message"]
    changed = client.post(f"{BASE}/venues/{_a_venue_id(repo)}", headers=admin,
                          json={"phone": "555-0100"})
    assert changed.status_code == 200
    # Repaired by hand: new records again, above every block.
    put_leases(bare, f"someone 200 300 {STAMP}\n")
    created = client.post(f"{BASE}/events", headers=admin, json=_gig())
    assert created.status_code == 201 and created.get_json()["id"] == 301
    app.extensions["calendar"].close()


def _a_venue_id(repo: Path) -> int:
    path = next((repo / "content" / "venues").glob("*.yaml"))
    return int(next(line for line in path.read_text().splitlines()
                    if line.startswith("id:")).split(":")[1])


def test_a_vanished_ref_is_refused_while_this_clone_leased_there(bare: Path,
                                                                  tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    leases = IdLeases(repo, "origin", instance="a", block_size=2)
    assert [leases.allocate(152, free) for _ in range(2)] == [153, 154]
    git(bare, "update-ref", "-d", LEASES_REF)  # a forge migration drops custom refs
    with pytest.raises(LeaseUnavailable, match="is gone"):
        leases.allocate(152, free)  # before: leased 153-154 again, ids already given
    # Restored from this clone's copy, as the message says: leasing goes on above it.
    git(repo, "push", "-q", "origin", LEASES_REF)
    assert leases.allocate(152, free) == 155


def test_a_rewound_ref_is_refused(bare: Path, tmp_path: Path) -> None:
    a = IdLeases(clone(bare, tmp_path / "a"), "origin", instance="a", block_size=2)
    b = IdLeases(clone(bare, tmp_path / "b"), "origin", instance="b", block_size=2)
    a.allocate(152, free)  # 153-154
    before_b = git(bare, "rev-parse", LEASES_REF).strip()
    assert b.allocate(152, free) == 155  # 155-156
    first_commit = git(bare, "rev-list", "--max-parents=0", LEASES_REF).strip()
    assert first_commit == before_b
    git(bare, "update-ref", LEASES_REF, first_commit)  # a force-push undid b's lease
    b.allocate(152, free)  # 156: still in b's block, no remote needed
    with pytest.raises(LeaseUnavailable, match="went backwards"):
        b.allocate(152, free)  # before: leased 155-156 again
    # Restored from b's copy, as the message says: b leases above its own block again.
    git(b.repo, "push", "-q", "--force", "origin", LEASES_REF)
    assert b.allocate(152, free) == 157


# -- hypothesis: hostile lease files ----------------------------------------------------------
UNICODE_DIGITS = str.maketrans(string.digits, "٠١٢٣٤٥٦٧٨٩")
NUMBERS = st.one_of(st.integers(0, 3000), st.integers(MAX_ID - 3, MAX_ID + 3),
                    st.integers(OCCURRENCE_BASE - 2, OCCURRENCE_BASE + 2),
                    st.integers(2**53 - 2, 2**70))
NUMBER_TEXT = st.one_of(
    NUMBERS.map(str), NUMBERS.map(lambda n: str(n).translate(UNICODE_DIGITS)),
    st.sampled_from(["¹", "", "-5", "1e3", "0x10", "007", " 12"]))
LINES = st.one_of(
    st.builds(lambda who, a, b, t, sep: sep.join([who, a, b, t]),
              st.sampled_from(["a", "b", "é", "x" * 300, ""]) | st.text(max_size=4),
              NUMBER_TEXT, NUMBER_TEXT, st.sampled_from([STAMP, "t", ""]),
              st.sampled_from([" ", " ", "  ", "\t", "\u00a0"])),
    st.text(max_size=20))
LEASE_FILES = st.lists(LINES, max_size=8).map("\n".join)


def _held(text: str) -> list[Lease]:
    """Every well-formed block of a lease file, as the editorial tools read it."""
    found = []
    for line in text.split("\n"):
        parts = line.split(" ")
        if len(parts) == 4 and all(p.isascii() and p.isdigit() for p in parts[1:3]):
            found.append(Lease(parts[0], int(parts[1]), int(parts[2]), parts[3]))
    return found


@settings(max_examples=200, deadline=500)
@given(LEASE_FILES, st.integers(0, MAX_ID + 5))
def test_parsing_hostile_lease_files_never_crashes_or_leaves_the_bound(text: str,
                                                                       highest: int) -> None:
    started = time.monotonic()
    try:
        leases = parse_leases(text)
    except BadLeases:
        leases = None
    if leases is not None:
        assert all(1 <= x.first <= x.last <= MAX_ID for x in leases)
        assert all(a.last < b.first for a, b in itertools.pairwise(leases))
        try:
            lease = next_lease(leases, highest, "me", 100, STAMP)
        except LeaseUnavailable:
            assert max([highest, *(x.last for x in leases)]) >= MAX_ID
        else:
            assert 1 <= lease.first <= lease.last <= MAX_ID and lease.first > highest
            assert not any(lease.first <= x.last and x.first <= lease.last for x in leases)
    assert time.monotonic() - started < 0.5


def test_allocating_over_hostile_lease_files_never_repeats_a_held_id(bare: Path,
                                                                    tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    state = repo / ".git" / "calendar-id-lease.json"

    @settings(max_examples=30, deadline=5000, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(LEASE_FILES)
    def allocate_over(text: str) -> None:
        put_leases(bare, text, parent=False)
        state.unlink(missing_ok=True)  # a fresh instance each time
        leases = IdLeases(repo, "origin", instance="a", block_size=5)
        started = time.monotonic()
        try:
            got = leases.allocate(152, free)
        except LeaseUnavailable:
            return
        finally:
            assert time.monotonic() - started < 5
        assert 152 < got <= MAX_ID
        assert not any(got in x for x in _held(text))

    allocate_over()


# -- item 12: a stalled remote ----------------------------------------------------------------
@pytest.fixture
def stalled_remote() -> Iterator[str]:
    """A git:// address whose server accepts every connection and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"git://127.0.0.1:{server.getsockname()[1]}/calendar.git"
    stopping.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def git_processes_in(repo: Path) -> list[int]:
    """Ids of git processes working in `repo` (fetch, push and their helpers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if (Path(os.readlink(f"/proc/{entry}/cwd")) == repo
                    and b"git" in Path(f"/proc/{entry}/cmdline").read_bytes()):
                found.append(int(entry))
        except OSError:
            continue
    return found


def within(seconds: float, call: Callable[[], object]) -> object:
    """`call()`, failing the test when it takes longer than `seconds` (it used to hang)."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # noqa: BLE001  (raised again in the test's thread)
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def test_a_stalled_remote_bounds_the_lease_and_leaves_no_git_behind(
        bare: Path, tmp_path: Path, stalled_remote: str) -> None:
    repo = clone(bare, tmp_path / "a")
    git(repo, "remote", "set-url", "origin", stalled_remote)
    leases = IdLeases(repo, "origin", instance="a", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(LeaseUnavailable, match="did not answer within 0.5 s"):
        within(8, lambda: leases.allocate(152, free))
    assert time.monotonic() - started < 3
    assert git_processes_in(repo) == []
    # Asked again at once, it answers at once: queued writes do not each wait again.
    started = time.monotonic()
    with pytest.raises(LeaseUnavailable, match="asking again"):
        leases.allocate(152, free)
    assert time.monotonic() - started < 0.5


def test_a_stalled_remote_lets_the_server_start_serve_and_refuse_only_creates(
        bare: Path, tmp_path: Path, stalled_remote: str, users, admin: dict,
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = clone(bare, tmp_path / "a")
    git(repo, "remote", "set-url", "origin", stalled_remote)
    started = time.monotonic()
    app = within(10, lambda: _app(repo / "content", tmp_path, SYNC_REMOTE="origin",
                                  SYNC_PUSH="queue", ID_LEASE_TIMEOUT=0.5))
    assert time.monotonic() - started < 5
    calendar = app.extensions["calendar"]
    # The branch's own exchange with the remote (sync.py) is not on trial here: its
    # thread is not started, so the write lock is only ever the lease's.
    calendar.remote_sync = None
    client = app.test_client()
    assert client.get(f"{BASE}/events").status_code == 200
    started = time.monotonic()
    refused = within(8, lambda: client.post(f"{BASE}/events", headers=admin, json=_gig()))
    assert time.monotonic() - started < 3
    assert refused.status_code == 503
    assert refused.get_json()["code"] == "calendar-ids-unavailable"
    changed = client.post(f"{BASE}/venues/{_a_venue_id(repo)}", headers=admin,
                          json={"phone": "555-0100"})
    assert changed.status_code == 200
    assert git_processes_in(repo) == []
    # The remote answers again: after the pause a stall earns, creates go on.
    git(repo, "remote", "set-url", "origin", str(bare))
    # The leases' wall clock moves past the pause instead of the test waiting it out.
    from types import SimpleNamespace

    from calendar_app.sync import idlease

    later = SimpleNamespace(time=lambda: time.time() + 1.1, monotonic=time.monotonic,
                            sleep=time.sleep)
    monkeypatch.setattr(idlease, "time", later)
    created = client.post(f"{BASE}/events", headers=admin, json=_gig())
    assert created.status_code == 201 and created.get_json()["id"] == M + 1
    calendar.close()


# gunicorn, 2 workers; quick form: test_a_stalled_remote_lets_the_server_start_serve_and_...
@pytest.mark.slow
def test_a_stalled_remote_does_not_keep_gunicorn_from_serving(
        bare: Path, tmp_path: Path, stalled_remote: str, users) -> None:
    repo = clone(bare, tmp_path / "a")
    git(repo, "remote", "set-url", "origin", stalled_remote)
    port = free_port()
    log = tmp_path / "server.log"
    proc = start_calendar_server(repo / "content", tmp_path / "users.yaml", tmp_path / "cache",
                                 port, "origin", log, workers=2,
                                 extra_env={"CALENDAR_ID_LEASE_TIMEOUT": "1"})
    try:
        wait_for_port(port, proc, timeout=15, log=log)  # before: never opened
        http = Http(port, basic("administrator", users["administrator"]))
        status, _, body = http.request("GET", f"{BASE}/events", timeout=10)
        assert status == 200 and body["events"]
    finally:
        stop_process(proc)
    assert "no block of ids leased at start" in log.read_text()
