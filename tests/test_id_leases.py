"""Ids leased in blocks from a shared bare repository: several instances never hand out
the same id, even cut off from each other, and never repeat one across restarts."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import signal
import threading
from pathlib import Path

import pytest
from conftest import BASE, NOW, SAMPLE, cli_here, clone, git, make_repo
from gitserver import GitDaemon, bare_copy

from calendar_app.http.app import create_app
from calendar_app.sync.idlease import LEASES_REF, IdLeases, LeaseUnavailable, read_leases

# What the unit tests tell `allocate` the tree's highest id is (they never read a tree).
HIGHEST = 152
# Tests through the app, `check` and `new` read the bundled sample's own highest id.
SAMPLE_MAX_ID = max(int(line.split(":")[1]) for path in SAMPLE.rglob("*.yaml")
                    for line in path.read_text().splitlines() if line.startswith("id:"))
M = SAMPLE_MAX_ID


def free_of(ids: set[int]):
    return lambda record_id: record_id in ids


def test_first_id_leases_a_block_above_every_id(bare: Path, tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    leases = IdLeases(repo, "origin", instance="a", block_size=10)
    assert leases.allocate(HIGHEST, free_of(set())) == HIGHEST + 1
    [lease] = read_leases(bare)
    assert (lease.instance, lease.first, lease.last) == ("a", 153, 162)
    # The next ids come from the block, without asking the remote again.
    assert [leases.allocate(HIGHEST, free_of(set())) for _ in range(9)] == list(
        range(154, 163))
    assert leases.lease_attempts == 1
    # Used up: the next block starts above every lease.
    assert leases.allocate(HIGHEST, free_of(set())) == 163
    assert [(x.first, x.last) for x in read_leases(bare)] == [(153, 162), (163, 172)]
    # The ref is a chain of commits: the history of every lease is kept.
    log = git(bare, "log", "--format=%s", LEASES_REF).splitlines()
    assert log == ["lease ids 163-172 to a", "lease ids 153-162 to a"]


def test_lost_race_is_retried_on_top_of_the_winner(bare: Path, tmp_path: Path) -> None:
    a = IdLeases(clone(bare, tmp_path / "a"), "origin", instance="a", block_size=10)
    b = IdLeases(clone(bare, tmp_path / "b"), "origin", instance="b", block_size=10)
    b.allocate(HIGHEST, free_of(set()))  # the ref exists: the race is on an update
    real_commit = a._commit
    raced = []

    def commit_after_b_leases(parent, leases):
        if not raced:  # between a's read and a's push, b takes a block
            raced.append(b.allocate(HIGHEST, free_of(set(range(153, 163)))))
        return real_commit(parent, leases)

    a._commit = commit_after_b_leases
    first_a = a.allocate(HIGHEST, free_of(set()))
    assert a.lease_attempts == 2  # the first push was refused as stale
    assert raced == [163]
    assert first_a == 173
    assert [(x.instance, x.first, x.last) for x in read_leases(bare)] == [
        ("b", 153, 162), ("b", 163, 172), ("a", 173, 182)]


def _allocate_many(repo: str, instance: str, count: int, out) -> None:
    leases = IdLeases(Path(repo), "origin", instance=instance, block_size=7)
    out.put([leases.allocate(HIGHEST, free_of(set())) for _ in range(count)])


def test_three_processes_lease_disjoint_blocks(bare: Path, tmp_path: Path) -> None:
    repos = [clone(bare, tmp_path / name) for name in "abc"]
    out = multiprocessing.get_context("fork").Queue()
    procs = [multiprocessing.get_context("fork").Process(
        target=_allocate_many, args=(str(repo), repo.name, 40, out)) for repo in repos]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    ids = [i for result in results for i in result]
    assert len(ids) == 120 and len(set(ids)) == 120
    assert min(ids) > HIGHEST
    blocks = sorted((x.first, x.last) for x in read_leases(bare))
    assert all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(blocks))
    # 40 ids in blocks of 7: 6 blocks each, all recorded.
    assert len(blocks) == 18


@pytest.mark.slow  # processes and a server end to end; the threads test covers the default run
def test_three_processes_lease_over_a_git_daemon(tmp_path: Path) -> None:
    """The compare-and-swap holds over a real git server, not only a local path."""
    served = tmp_path / "served"
    served.mkdir()
    bare = bare_copy(make_repo(tmp_path).parent, served)
    with GitDaemon(served) as daemon:
        repos = [tmp_path / name for name in "abc"]
        for repo in repos:
            git(tmp_path, "clone", "-q", daemon.url("calendar.git"), str(repo))
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        procs = [ctx.Process(target=_allocate_many, args=(str(repo), repo.name, 30, out))
                 for repo in repos]
        for proc in procs:
            proc.start()
        ids = [i for _ in procs for i in out.get(timeout=120)]
        for proc in procs:
            proc.join(timeout=30)
            assert proc.exitcode == 0
    assert len(ids) == 90 and len(set(ids)) == 90
    blocks = sorted((x.first, x.last) for x in read_leases(bare))
    assert len(blocks) == 15  # 30 ids in blocks of 7: 5 blocks per instance
    assert all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(blocks))


def test_threads_of_three_instances_share_no_id(bare: Path, tmp_path: Path) -> None:
    instances = [IdLeases(clone(bare, tmp_path / n), "origin", instance=n, block_size=3)
                 for n in "abc"]
    barrier = threading.Barrier(3)
    got: dict[str, list[int]] = {}

    def run(leases: IdLeases) -> None:
        barrier.wait()
        got[str(leases.repo.name)] = [leases.allocate(HIGHEST, free_of(set()))
                                      for _ in range(15)]

    threads = [threading.Thread(target=run, args=(x,)) for x in instances]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [i for values in got.values() for i in values]
    assert len(ids) == 45 and len(set(ids)) == 45
    assert len(read_leases(bare)) == 15


def test_cut_off_instance_uses_its_block_then_refuses(bare: Path, tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    leases = IdLeases(repo, "origin", instance="a", block_size=5)
    assert leases.allocate(HIGHEST, free_of(set())) == 153
    git(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert [leases.allocate(HIGHEST, free_of(set())) for _ in range(4)] == [
        154, 155, 156, 157]
    with pytest.raises(LeaseUnavailable, match="could not reach origin"):
        leases.allocate(HIGHEST, free_of(set()))
    # Refused again, not handed out unleased, on every later try.
    with pytest.raises(LeaseUnavailable):
        leases.allocate(HIGHEST, free_of(set()))
    git(repo, "remote", "set-url", "origin", str(bare))  # back in touch
    assert leases.allocate(HIGHEST, free_of(set())) == 158


def test_restart_resumes_the_block_and_never_repeats_an_id(bare: Path,
                                                         tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    first = IdLeases(repo, "origin", block_size=10, step=2)
    assert [first.allocate(HIGHEST, free_of(set())) for _ in range(3)] == [
        153, 154, 155]
    assert first.current() == (157, 162)  # 155-156 reserved, saved before 155 was used
    again = IdLeases(repo, "origin", block_size=10, step=2)  # a new process, same clone
    # 155 is no longer in the tree (deleted), yet it was handed out once: never again;
    # 156 was reserved by the first process and is skipped.
    assert again.allocate(HIGHEST, free_of(set())) == 157
    assert again.lease_attempts == 0
    assert again.current() == (159, 162)


def test_restarts_never_repeat_an_id_and_save_once_per_step(bare: Path,
                                                            tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    given_out: list[int] = []
    saves = blocks = 0
    # (ids, step) per process life: every restart is a new object on the same state.
    for count, step in [(5, 4), (1, 16), (23, 16), (7, 3), (40, 16), (2, 1)]:
        leases = IdLeases(repo, "origin", block_size=10, step=step)
        given_out += [leases.allocate(HIGHEST, free_of(set())) for _ in range(count)]
        saves += leases.durable_saves
        blocks += leases.lease_attempts
        assert leases.durable_saves <= -(-count // step) + leases.lease_attempts
    assert len(given_out) == len(set(given_out))
    assert given_out == sorted(given_out)  # one process at a time: in order
    # Every run stays inside its block: each id is in a block leased to this clone.
    held = read_leases(bare)
    assert all(any(i in x for x in held) for i in given_out)
    assert saves < len(given_out)
    assert len({x.instance for x in read_leases(bare)}) == 1


def test_hand_added_ids_in_the_block_are_skipped(bare: Path, tmp_path: Path) -> None:
    leases = IdLeases(clone(bare, tmp_path / "a"), "origin", block_size=10)
    assert leases.allocate(HIGHEST, free_of(set())) == 153
    # An editor's file took 154 and 155 (pulled meanwhile); the tree's highest is 155.
    assert leases.allocate(155, free_of({154, 155})) == 156
    # A hand-added id above the block: the next block starts above it.
    for _ in range(6):
        leases.allocate(400, free_of({400}))
    assert leases.current() == (163, 162)
    assert leases.allocate(400, free_of({400})) == 401


def test_a_block_is_leased_once_at_start(bare: Path, tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    IdLeases(repo, "origin", block_size=10).ensure_block(HIGHEST)
    again = IdLeases(repo, "origin", block_size=10)
    again.ensure_block(HIGHEST)  # a restart: the block still has ids
    assert [(x.first, x.last) for x in read_leases(bare)] == [(153, 162)]
    assert again.allocate(HIGHEST, free_of(set())) == 153
    git(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    cut_off = IdLeases(clone(bare, tmp_path / "b"), "origin")
    git(cut_off.repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    cut_off.ensure_block(HIGHEST)  # only logged: the first new record will say
    assert cut_off.current() is None


def test_unreachable_remote_for_the_first_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path).parent
    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    with pytest.raises(LeaseUnavailable, match="could not reach origin"):
        IdLeases(repo, "origin").allocate(1, free_of(set()))


# -- through the interface ----------------------------------------------------------------
def _app(tmp_path: Path, bare: Path, name: str, users_file: Path, **extra: object):
    repo = clone(bare, tmp_path / name)
    return create_app({"CONTENT_DIR": str(repo / "content"), "USERS_FILE": str(users_file),
                       "CACHE_DIR": str(tmp_path / f"cache-{name}"), "NOW": NOW,
                       "TESTING": True, "SYNC_REMOTE": "origin", **extra}), repo


@pytest.mark.slow  # processes and a server end to end; the threads test covers the default run
def test_instances_hand_out_disjoint_ids_over_http(bare: Path, tmp_path: Path, users,
                                                   admin: dict) -> None:
    apps = [_app(tmp_path, bare, n, tmp_path / "users.yaml") for n in "abc"]
    answered: dict[str, list[int]] = {}

    def post_events(app, repo: Path, count: int) -> None:
        client = app.test_client()
        for i in range(count):
            response = client.post(f"{BASE}/events", headers=admin, json={
                "title": f"Show {repo.name}-{i}", "start_date": "2027-01-05 20:00:00",
                "end_date": "2027-01-05 22:00:00"})
            assert response.status_code == 201, response.get_json()
            answered.setdefault(repo.name, []).append(response.get_json()["id"])

    threads = [threading.Thread(target=post_events, args=(app, repo, 12))
               for app, repo in apps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [i for values in answered.values() for i in values]
    assert len(ids) == 36 and len(set(ids)) == 36
    assert min(ids) > SAMPLE_MAX_ID
    for app, repo in apps:  # every id answered came from that instance's own block
        blocks = [x for x in read_leases(bare) if x.instance == _instance(repo)]
        assert len(blocks) == 1
        assert blocks[0].time == "2026-11-21T12:00:00Z"  # the app's clock (NOW)
        assert all(i in blocks[0] for i in answered[repo.name])
    for app, _ in apps:  # a write whose push lost every race is queued: push it now
        assert app.extensions["calendar"].remote_sync.exchange().state == "pushed"
        app.extensions["calendar"].close()
    on_remote = git(bare, "grep", "-h", "^id:", "main", "--", "content/events")
    assert sorted(int(line.split(":")[1]) for line in on_remote.splitlines()
                  if int(line.split(":")[1]) > SAMPLE_MAX_ID) == sorted(ids)


def _instance(repo: Path) -> str:
    return json.loads((repo / ".git" / "calendar-id-lease.json").read_text())["instance"]


def test_cut_off_server_answers_503_and_writes_nothing(bare: Path, tmp_path: Path, users,
                                                      admin: dict) -> None:
    app, repo = _app(tmp_path, bare, "a", tmp_path / "users.yaml", ID_BLOCK=2)
    # Leased at start, before any write: a cut right after the start still leaves ids.
    assert [(x.first, x.last) for x in read_leases(bare)] == [(M + 1, M + 2)]
    client = app.test_client()
    body = {"title": "Gig", "start_date": "2027-01-05 20:00:00",
            "end_date": "2027-01-05 22:00:00"}
    assert client.post(f"{BASE}/events", headers=admin, json=body).status_code == 201
    git(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    second = client.post(f"{BASE}/events", headers=admin, json=body)
    assert second.status_code == 201 and second.get_json()["id"] == M + 2
    commits = git(repo, "rev-list", "--count", "HEAD")
    refused = client.post(f"{BASE}/events", headers=admin, json=body)
    assert refused.status_code == 503
    payload = refused.get_json()
    assert payload["code"] == "calendar-ids-unavailable"
    assert payload["data"]["status"] == 503
    assert "could not reach origin" in payload["message"]
    assert git(repo, "rev-list", "--count", "HEAD") == commits
    assert git(repo, "status", "--porcelain") == ""
    # Updates need no new id: they go on.
    event_id = second.get_json()["id"]
    changed = client.post(f"{BASE}/events/{event_id}", headers=admin, json={"title": "Gig 2"})
    assert changed.status_code == 200
    app.extensions["calendar"].close()


def test_without_a_remote_ids_stay_max_plus_one(tmp_path: Path, users, admin: dict) -> None:
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True})
    response = app.test_client().post(f"{BASE}/events", headers=admin, json={
        "title": "Solo", "start_date": "2027-01-05 20:00:00",
        "end_date": "2027-01-05 22:00:00"})
    assert response.get_json()["id"] == SAMPLE_MAX_ID + 1
    assert not (content.parent / ".git" / "calendar-id-lease.json").exists()


# -- hand-added files in pull requests ------------------------------------------------------
def test_check_flags_a_hand_added_id_in_a_leased_block(bare: Path, tmp_path: Path) -> None:
    server = IdLeases(clone(bare, tmp_path / "server"), "origin", instance="server-1",
                      block_size=10)
    first, last = M + 1, M + 10
    assert server.allocate(M, free_of(set())) == first  # leases first-last
    editor = clone(bare, tmp_path / "editor")
    git(editor, "fetch", "-q", "origin", f"+{LEASES_REF}:{LEASES_REF}")
    git(editor, "switch", "-q", "-c", "new-gig")
    # The editor's tree ends at M: by hand the next id looks like M + 1.
    (editor / "content/events/2027").mkdir(parents=True, exist_ok=True)
    (editor / "content/events/2027/gig.yaml").write_text(
        f"id: {first}\ntitle: Gig\nstart_date: 2027-05-01 19:00:00\n"
        "end_date: 2027-05-01 21:00:00\n")
    git(editor, "add", "-A")
    git(editor, "commit", "-q", "-m", "a gig")
    found = cli_here("check", "content", "--against", "origin/main",
                     "--format", "json", cwd=editor)
    assert found.returncode == 1
    errors = [f for f in json.loads(found.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["path"], f["line"], f["code"]) for f in errors] == [
        ("content/events/2027/gig.yaml", 1, "id-collision")]
    assert errors[0]["message"].startswith(
        f"id {first} is leased to the server server-1 (ids {first}-{last}), which may "
        "hand it out")
    fixed = cli_here("fix-ids", "content", "--against", "origin/main", cwd=editor)
    assert fixed.returncode == 0, fixed.stderr
    assert f"id {first} -> {last + 1}" in fixed.stdout  # above every leased block
    assert (editor / "content/events/2027/gig.yaml").read_text().startswith(
        f"id: {last + 1}\n")
    again = cli_here("check", "content", "--against", "origin/main", cwd=editor)
    assert again.returncode == 0, again.stdout
    # `new` starts above every leased block too: its file passes the check as it is.
    made = cli_here("new", "event", "Jam", "--start", "2027-06-01 20:00",
                    "--content", "content", cwd=editor)
    assert made.returncode == 0, made.stderr
    assert (editor / "content/events/2027/jam.yaml").read_text().startswith(
        f"id: {last + 2}\n")
    assert cli_here("check", "content", "--against", "origin/main", cwd=editor).returncode == 0
    # Ids the branch did not add are never flagged, leased or not.
    git(editor, "add", "-A")
    git(editor, "commit", "-q", "-m", "fix-ids, and a jam")
    git(editor, "switch", "-q", "main")
    assert cli_here("check", "content", "--against", "origin/main", cwd=editor).returncode == 0


def _allocate_forever(repo: str, out) -> None:
    leases = IdLeases(Path(repo), "origin", block_size=50, step=16)
    while True:  # each id reported as it is handed out, as a 201 would answer it
        out.put(leases.allocate(HIGHEST, free_of(set())))


def test_sigkill_mid_burst_then_restart_never_repeats_an_id(bare: Path,
                                                            tmp_path: Path) -> None:
    repo = clone(bare, tmp_path / "a")
    ctx = multiprocessing.get_context("fork")
    answered: list[int] = []
    for _ in range(2):
        out = ctx.Queue()
        proc = ctx.Process(target=_allocate_forever, args=(str(repo), out))
        proc.start()
        answered += [out.get(timeout=60) for _ in range(21)]  # mid-run, mid-block
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
        while not out.empty():
            answered.append(out.get())
    after = IdLeases(repo, "origin", block_size=50, step=16)
    answered += [after.allocate(HIGHEST, free_of(set())) for _ in range(5)]
    assert len(answered) == len(set(answered))


def test_a_forked_worker_never_reuses_its_parents_run(bare: Path, tmp_path: Path) -> None:
    leases = IdLeases(clone(bare, tmp_path / "a"), "origin", block_size=50, step=16)
    assert leases.allocate(HIGHEST, free_of(set())) == 153  # run 153-168 held in memory
    out = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(
        target=lambda: out.put(leases.allocate(HIGHEST, free_of(set()))))
    child.start()
    assert out.get(timeout=60) == 169  # a run of its own, not the parent's 154
    child.join(timeout=30)
    assert leases.allocate(HIGHEST, free_of(set())) == 154


def _lock_fetched_ref(repo: Path) -> Path:
    """What a git fetch left running by a killed worker holds: the fetched ref's lock."""
    lock = repo / ".git" / "refs" / "calendar" / "id-leases-fetched.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    return lock


def test_a_fetch_waits_out_a_git_process_left_by_a_killed_worker(bare: Path,
                                                                 tmp_path: Path) -> None:
    first = IdLeases(clone(bare, tmp_path / "a"), "origin", instance="a", block_size=10)
    assert first.allocate(HIGHEST, free_of(set())) == 153  # the remote has leases now
    repo = clone(bare, tmp_path / "b")
    lock = _lock_fetched_ref(repo)
    threading.Timer(0.3, lock.unlink).start()
    leases = IdLeases(repo, "origin", instance="b", block_size=10)
    assert leases.allocate(HIGHEST, free_of(set())) == 163  # the block above a's
    assert not lock.exists()


def test_a_fetched_ref_locked_for_good_is_a_clear_error(bare: Path, tmp_path: Path) -> None:
    IdLeases(clone(bare, tmp_path / "a"), "origin", block_size=10).allocate(
        HIGHEST, free_of(set()))
    repo = clone(bare, tmp_path / "b")
    _lock_fetched_ref(repo)
    with pytest.raises(LeaseUnavailable, match="cannot lock ref"):
        IdLeases(repo, "origin", block_size=10).allocate(HIGHEST, free_of(set()))
    assert git(repo, "for-each-ref", LEASES_REF) == ""  # nothing taken on the way
