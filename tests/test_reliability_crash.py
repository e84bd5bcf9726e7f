"""Crash safety (issue 6, point 2): SIGKILL the server in the middle of a write burst.

The server is gunicorn with 2 workers over its own content tree and cache dir, started
as a subprocess in its own process group. 8 client threads write (creates, updates,
trash) as fast as they can; after a random delay the whole group (master, workers and
any git they are running) is killed with SIGKILL. The server is started again and:

- every record file parses and is complete (checked on its own, not through the app),
  no id or slug is duplicated, no `.tmp-*` file is left in the tree;
- git is consistent: `git status --porcelain` is clean for the content, `git fsck` ok,
  no intent file (`pending-write.json`) is left after the restart;
- every write the server acknowledged (2xx) is in the files and in the git history;
- a write cut off without an answer is either committed (rolled forward on restart,
  with "Completed after an interrupted write." in its commit and a warning in the log)
  or absent from the files: never half-written, never applied without a commit;
- the search index catches up with the files.

Several kill/restart rounds run on the same tree. Figures are printed with the prefix
"RELIABILITY" (run with -s).
"""

from __future__ import annotations

import os
import random
import re
import signal
import threading
import time
from http.client import HTTPException
from pathlib import Path

import pytest
from conftest import BASE, git, make_repo
from test_reliability_concurrency import (
    Http,
    basic,
    check_index,
    check_tree,
    report,
    start_after_kill,
    start_gunicorn,
    stop,
)

ROUNDS = 4
WRITERS = 8
TOKEN = re.compile(r"k\d+r\d+w\d+n\d+")


def burst(port: int, creds: list[dict], round_no: int, ids: list[int], results: list[dict],
          stop_flag: threading.Event) -> list[threading.Thread]:
    """Writer threads that run until the server dies; every request is recorded with
    the unique token it writes, and whether it was answered."""
    lock = threading.Lock()

    def writer(n: int) -> None:
        http = Http(port, creds[n % len(creds)])
        rng = random.Random(round_no * 100 + n)
        i = 0
        while not stop_flag.is_set():
            i += 1
            token = f"k{round_no}r{round_no}w{n}n{i}"
            with lock:
                target = rng.choice(ids) if ids and rng.random() < 0.6 else None
            if target is None:
                method, path = "POST", f"{BASE}/events"
                body = {"title": f"Crash {token}", "start_date": "2027-05-01 10:00:00",
                        "end_date": "2027-05-01 12:00:00", "description": "x" * 2000}
            elif rng.random() < 0.85:
                method, path = "PATCH", f"{BASE}/events/{target}"
                body = {"title": f"Crash {token}", "cost": str(i)}
            else:
                method, path = "DELETE", f"{BASE}/events/{target}"
                body = {}
            try:
                status, _, payload = http.request(method, path, body, timeout=30)
            except (OSError, HTTPException):  # killed mid-answer: cut off
                status, payload = None, None
            entry = {"method": method, "target": target, "token": token, "status": status,
                     "response": payload}
            with lock:
                results.append(entry)
                if status == 201:
                    ids.append(payload["id"])
            if status is None:
                return  # the server is gone

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.slow  # rounds of gunicorn killed mid-burst, restarted, checked
def test_sigkill_during_write_burst(tmp_path: Path, users: dict[str, str]) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    cache = tmp_path / "cache"
    users_file = tmp_path / "users.yaml"
    log = tmp_path / "gunicorn.log"
    creds = [basic("administrator", users["administrator"]), basic("editor", users["editor"])]
    rng = random.Random(2)
    ids: list[int] = []
    results: list[dict] = []
    kills = 0
    rolled_forward = 0
    stats = {"stale_git_lock_removed": 0}
    for round_no in range(ROUNDS):
        port, proc = _start(content, users_file, cache, log, stats)
        try:
            _restart_checks(repo, content, cache, results)
        except BaseException:
            stop(proc, signal.SIGKILL)
            raise
        stop_flag = threading.Event()
        threads = burst(port, creds, round_no, ids, results, stop_flag)
        time.sleep(rng.uniform(1.0, 2.5))
        # The whole server at once: master, workers and the git they run (a lone worker
        # dying while the others go on is test_worker_killed_mid_write_others_go_on).
        os.killpg(proc.pid, signal.SIGKILL)
        stop(proc, signal.SIGKILL)
        kills += 1
        stop_flag.set()
        for t in threads:
            t.join(timeout=60)
    # The final restart: recovery, then every check.
    port, proc = _start(content, users_file, cache, log, stats)
    try:
        files = _restart_checks(repo, content, cache, results)
        # The app answers each acknowledged record as it is in the files.
        http = Http(port, creds[0])
        for rid, (collection, _rel, data) in files.items():
            if collection == "events" and TOKEN.search(data["title"]) and (
                    data["status"] != "trash"):
                status, _, body = http.request("GET", f"{BASE}/events/{rid}")
                assert status == 200 and body["title"] == data["title"], (rid, status)
    finally:
        stop(proc)
    text = log.read_text(errors="replace")
    rolled_forward = git(repo, "log", "--format=%b").count("Completed after an interrupted")
    if rolled_forward:
        assert "finished a write interrupted by a crash" in text
    # Tracebacks of refused start-ups (stale lock, counted above) are expected, and so
    # is the known self-healing index retry between workers (see the concurrency test).
    tracebacks = text.split("Traceback (most recent call last):")[1:]
    unexplained = [t for t in tracebacks if ".lock': File exists" not in t and not (
        "index.py" in t and "FileNotFoundError" in t and ".toc" in t) and not (
        stats["stale_git_lock_removed"] and "Worker failed to boot" in t)]
    assert not unexplained, unexplained[0][-3000:]
    answered = sum(1 for r in results if r["status"] is not None)
    report("crash", {"rounds": ROUNDS, "sigkills": kills, "requests": len(results),
                     "answered": answered, "cut_off": len(results) - answered,
                     "rolled_forward_on_restart": rolled_forward, **stats,
                     "commits": int(git(repo, "rev-list", "--count", "HEAD")) - 1,
                     "files_checked": len(files)})


def _start(content: Path, users_file: Path, cache: Path, log: Path, stats: dict):
    """Start the server after a kill, removing the stale git locks a refused start names
    (the interrupted write stays in the intent file meanwhile: reported, not dropped)."""
    def intent_kept() -> None:
        assert (cache / "pending-write.json").exists(), "interrupted write dropped"

    port, proc, removed = start_after_kill(
        lambda port: start_gunicorn(content, users_file, cache, port, log=log), log,
        content.parent / ".git", intent_kept)
    stats["stale_git_lock_removed"] += removed
    return port, proc


def _restart_checks(repo: Path, content: Path, cache: Path, results: list[dict]) -> dict:
    """What must hold once the server is up again after a kill."""
    files = check_tree(content)  # every file valid and complete, no .tmp-*, no duplicates
    assert not (cache / "pending-write.json").exists(), "interrupted write not recovered"
    assert not (repo / ".git" / "index.lock").exists(), "stale git index.lock left"
    status = git(repo, "status", "--porcelain", "--", "content").strip()
    assert status == "", f"content differs from git after restart:\n{status}"
    git(repo, "fsck", "--no-progress")
    history = git(repo, "log", "--format=%s")
    committed = set(TOKEN.findall(history))
    on_disk = {m for (_c, _r, d) in files.values() for m in TOKEN.findall(d.get("title", ""))}
    assert on_disk <= committed, f"in the files but never committed: {on_disk - committed}"
    for entry in results:
        token, status_code = entry["token"], entry["status"]
        if status_code in (200, 201) and entry["method"] != "DELETE":
            assert token in committed, f"acknowledged write lost: {entry}"
    check_index(cache, content, files, timeout=30)
    return files


# -- deterministic faults: a kill at each step of one multi-file write -------------------
# Renaming a venue's slug rewrites the venue and the 5 events linking to it: 7 paths
# (the old venue file removed) in one commit. The child process is killed at one step.
FAULTS = ("intent-saved", "half-temp-file", "first-file-written", "files-written",
          "staged-not-committed", "committed-intent-left", "git-index-lock-left")


def _inject(fault: str) -> None:
    """In the child: make the write die (SIGKILL, no cleanup) at the given step."""
    import os
    import tempfile

    from calendar_app.store.content import ContentTree

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    if fault == "intent-saved":
        ContentTree._apply = lambda self, intent: die()
    elif fault == "half-temp-file":
        def half(self, relpath: str, text: str) -> None:
            target = self.root / relpath
            fd, _tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=target.parent)
            os.write(fd, text[: len(text) // 2].encode())
            die()
        ContentTree.write_text = half
    elif fault == "first-file-written":
        original = ContentTree.write_text

        def first(self, relpath: str, text: str) -> None:
            original(self, relpath, text)
            die()
        ContentTree.write_text = first
    elif fault == "files-written":
        ContentTree.commit = lambda self, *a, **k: die()
    elif fault in ("staged-not-committed", "git-index-lock-left"):
        original_git = ContentTree._git

        def git_then_die(self, *args, **kwargs):
            if args and args[0] == "commit":
                if fault == "git-index-lock-left":  # git itself killed while committing
                    (self.git_root / ".git" / "index.lock").write_text("")
                die()
            return original_git(self, *args, **kwargs)
        ContentTree._git = git_then_die
        # The usual commit is made in-process (store/gitfast.py): staged in the index,
        # then the commit object and the branch; die between the two.
        import pygit2

        def create_commit_then_die(self, *args, **kwargs):
            if fault == "git-index-lock-left":
                (Path(self.path) / "index.lock").write_text("")
            die()
        pygit2.Repository.create_commit = create_commit_then_die
    elif fault == "committed-intent-left":
        original_commit = ContentTree.commit

        def commit_then_die(self, *args, **kwargs):
            original_commit(self, *args, **kwargs)
            die()
        ContentTree.commit = commit_then_die


def _child_write(config: dict, headers: dict, fault: str) -> None:
    import os

    from calendar_app.http.app import create_app

    try:
        app = create_app(config)
        _inject(fault)
        app.test_client().patch(f"{BASE}/venues/44", json={"slug": "eastside-library"},
                                headers=headers)
    finally:
        os._exit(3)  # reached only if the fault did not fire


@pytest.mark.parametrize("fault", FAULTS)
def test_kill_at_each_step_of_a_write(fault: str, tmp_path: Path, config: dict, content: Path,
                                      auth) -> None:
    repo = content.parent
    before_files = check_tree(content)
    base = git(repo, "rev-parse", "HEAD").strip()
    linked = [rel for (c, rel, d) in before_files.values()
              if c == "events" and d.get("venue") == "eastside-branch-library"]
    assert len(linked) >= 3
    pid = os.fork()
    if pid == 0:
        _child_write(config, auth("administrator"), fault)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    intent = Path(config["CACHE_DIR"]) / "pending-write.json"
    assert intent.exists()
    # Restart.
    from calendar_app.http.app import create_app

    if fault == "git-index-lock-left":
        # git's own lock from the killed commit: the restart must not drop the write;
        # it either finishes it or refuses to start, saying why.
        try:
            app = create_app(config)
        except Exception as exc:  # noqa: BLE001  (reported: start-up stops, saying why)
            assert "index.lock" in str(exc), exc
            # Said so an operator knows what to do, in gunicorn's one line too.
            assert isinstance(exc, RuntimeError) and str(exc).startswith(
                "a write interrupted by a crash cannot be finished"), exc
            assert "if none is running, remove the stale .git/index.lock" in str(exc), exc
            assert intent.exists(), "the interrupted write was dropped"
            (repo / ".git" / "index.lock").unlink()
            app = create_app(config)
    else:
        app = create_app(config)
    calendar = app.extensions["calendar"]
    assert not intent.exists()
    files = check_tree(content)  # complete files, no .tmp-*, no duplicates
    assert not calendar.catalog.problems, calendar.catalog.problems
    assert git(repo, "status", "--porcelain").strip() == "", git(repo, "status", "--porcelain")
    git(repo, "fsck", "--no-progress")
    # Rolled forward in full: the venue renamed, every event relinked, one commit.
    venue = files[44][2]
    assert venue["slug"] == "eastside-library"
    assert not (content / "venues" / "eastside-branch-library.yaml").exists()
    for rid, (c, _rel, d) in before_files.items():
        if _rel in linked:
            assert files[rid][2].get("venue") == "eastside-library", (rid, files[rid])
    commits = git(repo, "log", "--format=%s%n%b%x00", f"{base}..HEAD").split("\x00")
    commits = [c.strip() for c in commits if c.strip()]
    assert len(commits) == 1, commits
    assert commits[0].startswith('venues: update "Eastside Branch Library" (#44)')
    changed = git(repo, "show", "--no-renames", "--name-only", "--format=", "HEAD").split()
    assert len(changed) == len(linked) + 2, changed  # old + new venue file, linked events
    answer = app.test_client().get(f"{BASE}/venues/44")
    status, body = answer.status_code, answer.get_json()
    assert status == 200 and body["slug"] == "eastside-library"
    calendar.close()


def test_worker_killed_mid_write_others_go_on(config: dict, content: Path, auth) -> None:
    """Two workers over one tree and cache dir; one is killed after writing the file of a
    create and before committing it; the other keeps serving and writes next."""
    from calendar_app.http.app import create_app

    repo = content.parent
    survivor = create_app(config)
    client = survivor.test_client()
    admin = auth("administrator")
    client.get(f"{BASE}/events")  # started, journal followed
    pid = os.fork()
    if pid == 0:
        try:
            from calendar_app.http.app import create_app as make
            from calendar_app.store.content import ContentTree

            dying = make(config)
            ContentTree.commit = lambda self, *a, **k: os.kill(os.getpid(), signal.SIGKILL)
            dying.test_client().post(f"{BASE}/events", headers=admin, json={
                "title": "Dying worker", "start_date": "2027-03-01 10:00:00",
                "end_date": "2027-03-01 11:00:00"})
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status)
    response = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Surviving worker", "start_date": "2027-03-02 10:00:00",
        "end_date": "2027-03-02 11:00:00"})
    assert response.status_code in (201, 409, 503), response.get_json()
    files = check_tree(content)  # no duplicate id
    titles = {d.get("title") for (_c, _r, d) in files.values()}
    # The dying worker's write is either finished (committed) or gone, never half there.
    status_lines = git(repo, "status", "--porcelain", "--", "content").strip()
    assert status_lines == "", status_lines
    if "Dying worker" in titles:
        assert "Dying worker" in git(repo, "log", "--format=%s")
    survivor.extensions["calendar"].close()
