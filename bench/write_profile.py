"""Where a write's CPU goes: the same POST /events as bench/multi_instance_bench.py, made
in-process (Flask's test client) against a clone of a `git daemon` remote.

    python bench/write_profile.py [--writes 40] [--threads 8] [--tuned-remote]
    python bench/write_profile.py --commit-files 20000 [--writes 15]

Two runs over one server:
- one writer at a time, `--writes` POSTs under cProfile with the thread's CPU clock: the
  request thread's CPU per write by phase (each write pushes alone here, so the push is
  one per write);
- `--threads` writers at once, as many POSTs again (writers share pushes): writes per
  second, this process's CPU per write and, by thread, what the background threads
  (search index, watcher) spent; the remote's side (the daemon and its receive-packs)
  in both runs.
`--commit-files N`: instead, the in-process commit alone (store/gitfast.py) of one new
file in a repository holding N files in one folder, `--writes` times: p50 wall and CPU.
Run by hand, never by CI.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "bench")]

from gitserver import GitDaemon
from multi_instance_bench import BASE, git, loadavg, sessions_cpu, shared_repo
from test_reliability_concurrency import basic

from calendar_app.store.users import UserStore
from calendar_app.sync.settings import REMOTE_CONFIG

# (label, module file's tail, function): cumulative CPU of these, per write.
PHASES = [
    ("request to answer (Flask dispatch, test client)", "flask/app.py", "wsgi_app"),
    ("POST /events view", "http/api.py", "collection_view"),
    ("service.create", "calendar_app/service.py", "create"),
    ("  validation, new record (fields, YAML text)", "calendar_app/service.py", "_new_record"),
    ("  commit: files, git commit, catalog", "calendar_app/service.py", "_commit"),
    ("    files written + git commit (content.apply)", "store/content.py", "apply"),
    ("      git commit (libgit2)", "store/gitfast.py", "commit"),
    ("  flush of the group's files (durable)", "store/durable.py", "flush"),
    ("  push and wait (sync.settle)", "sync/sync.py", "settle"),
    ("    libgit2 push", "sync/netfast.py", "push"),
    ("    sync state saved", "sync/sync.py", "_save_state"),
    ("answer represented", "catalog/represent.py", "represent"),
]


def thread_cpu() -> dict[str, float]:
    """CPU seconds by thread name of this process (threads alive now)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "other")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf(
            "SC_CLK_TCK")
    return out


def time_commits(files: int, commits: int) -> None:
    from calendar_app.store import gitfast

    repo = Path(tempfile.mkdtemp(prefix="commit-profile-"))
    (repo / "events").mkdir()
    for n in range(files):
        (repo / "events" / f"e{n:06d}.yaml").write_text(f"id: {n}\ntitle: Event {n}\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "start")
    env = {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
    walls, cpus = [], []
    for n in range(commits):
        path = f"events/new{n:04d}.yaml"
        (repo / path).write_text(f"id: {n}\n")
        wall, cpu = time.perf_counter(), time.process_time()
        assert gitfast.commit(repo, repo / ".git", [path], f"write {n}", "Bench <b@localhost>",
                              env) is True
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(f"one commit at {files} files: p50 {1000 * sorted(walls)[commits // 2]:.1f} ms wall, "
          f"{1000 * sorted(cpus)[commits // 2]:.1f} ms CPU (load {loadavg()})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--tuned-remote", action="store_true")
    parser.add_argument("--commit-files", type=int, metavar="N")
    args = parser.parse_args()
    if args.commit_files:
        time_commits(args.commit_files, args.writes)
        return 0
    from calendar_app.http.app import create_app

    root = Path(tempfile.mkdtemp(prefix="write-profile-"))
    served, bare = shared_repo(root)
    for key, value in REMOTE_CONFIG.items() if args.tuned_remote else ():
        git(bare, "config", key, value)
    password = UserStore(root / "users.yaml").add("administrator", "administrator")
    headers = basic("administrator", password)
    with GitDaemon(served, log=root / "daemon.log") as daemon:
        app = create_app({"CONTENT_DIR": str(root / "clone"),
                          "USERS_FILE": str(root / "users.yaml"),
                          "CACHE_DIR": str(root / "cache"), "SITE": False,
                          "SYNC_REMOTE": daemon.url("calendar.git"), "SYNC_PUSH": "wait"})
        client = app.test_client()

        def post(n: int) -> None:
            answer = client.post(f"{BASE}/events", headers=headers, json={
                "title": f"Bench {n}", "start_date": "2027-03-01 20:00:00",
                "end_date": "2027-03-01 22:00:00"})
            assert answer.status_code == 201, answer.data

        for n in range(5):  # first writes lease ids, import libgit2, start threads
            post(n)
        print(f"load {loadavg()}")
        profile = cProfile.Profile(time.thread_time)
        remote = sessions_cpu([daemon.proc.pid])
        started = time.perf_counter()
        profile.enable()
        for n in range(args.writes):
            post(100 + n)
        profile.disable()
        wall = time.perf_counter() - started
        remote = sessions_cpu([daemon.proc.pid]) - remote
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        print(f"one writer: {1000 * wall / args.writes:.1f} ms per write (wall), the "
              f"remote {1000 * remote / args.writes:.1f} ms CPU per write (= per push)")
        print("| phase (request thread) | CPU ms per write |\n|---|---|")
        for label, tail, name in PHASES:
            cum = sum(v[3] for (file, _line, func), v in stats.items()
                      if func == name and file.endswith(tail))
            print(f"| {label} | {1000 * cum / args.writes:.2f} |")
        todo = list(range(1000, 1000 + args.writes))

        def writer() -> None:
            while True:
                try:
                    n = todo.pop()
                except IndexError:
                    return
                post(n)

        before, remote = thread_cpu(), sessions_cpu([daemon.proc.pid])
        cpu, started = time.process_time(), time.perf_counter()
        writers = [threading.Thread(target=writer, name="writer") for _ in range(args.threads)]
        for thread in writers:
            thread.start()
        for thread in writers:
            thread.join()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        remote = sessions_cpu([daemon.proc.pid]) - remote
        after = thread_cpu()
        print(f"{args.threads} writers: {args.writes / wall:.1f} writes/s, this process "
              f"{1000 * cpu / args.writes:.1f} ms CPU per write, the remote "
              f"{1000 * remote / args.writes:.1f} ms; background threads (ms per write): "
              + ", ".join(f"{name} {1000 * (after[name] - before.get(name, 0)) / args.writes:.1f}"
                          for name in sorted(after) if name not in ("writer", "MainThread")))
        print(f"load {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
