"""Throughput of writes spread over several instances sharing one remote, and the cost of
leasing id blocks.

    python bench/multi_instance_bench.py [--instances 1 3] [--writes 90] [--clients 6]
                                         [--workers 2] [--threads 1] [--push wait]
                                         [--root DIR] [--count-git] [--tuned-remote]
    python bench/multi_instance_bench.py --push-phases ROUNDS
    python bench/multi_instance_bench.py --leases-only [--leasers 3] [--ids 300]

Per instance count: a bare repository of the bundled sample served by `git daemon` on
the loopback (pushes on), that many production servers (gunicorn, `--workers` workers
each, sync workers or with `--threads` threads each) started over empty folders (each clones the remote), then `--writes`
POST /events from `--clients` client threads spread round-robin over the instances,
all at once. Prints writes per second (wall clock from the first request to the last
answer), p50 / p95 / max latency, how many answers were not 201 and how many were
answered as queued (committed, push pending: `X-Calendar-Sync`), when every answered id
was on the remote (queued pushes are retried by the servers), ids answered but not on
the remote after a minute (lost), ids twice on the remote, how many pushes the remote
took to its branch (its reflog counts them: writers waiting share
pushes), the CPU time the servers, their git processes and the daemon spent per write
while the writes ran (and in brackets the daemon's share: the remote's side of the
pushes and fetches) (user + system: it holds up under load, where wall-clock figures
do not) and the load average (the machine is shared: read it beside the figures);
then, by instance, the writes it answered, their p50 and the CPU it spent.
`--count-git` adds the git processes per write, by command; `--tuned-remote` configures
the shared repository as README recommends; `--push-phases N` times one clone's
commit and push alone, in-process and with `git push`, each N times.

`--leases-only` measures id leases alone (calendar_app/idlease.py) over the daemon:
the latency of one lease, and `--leasers` processes taking `--ids` ids each in blocks
of 10 at the same time (compare-and-swap rounds per lease). Run by hand, never by CI.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import itertools
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gitserver import GitDaemon, free_port, start_calendar_server, stop_process
from test_reliability_concurrency import Http, basic, wait_for_port

from calendar_app.store.users import UserStore
from calendar_app.sync.idlease import IdLeases, read_leases
from calendar_app.sync.settings import REMOTE_CONFIG

BASE = "/wp-json/tribe/events/v1"
SAMPLE = REPO / "content"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def shared_repo(root: Path) -> tuple[Path, Path]:
    """(folder the daemon serves, the bare repository in it) holding the sample."""
    seed = root / "seed"
    shutil.copytree(SAMPLE, seed)
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial calendar")
    served = root / "served"
    served.mkdir()
    git(root, "clone", "-q", "--bare", str(seed), str(served / "calendar.git"))
    return served, served / "calendar.git"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run_writes(root: Path, instances: int, writes: int, clients: int, workers: int,
               push: str, threads: int = 1, tuned: bool = False) -> dict:
    served, bare = shared_repo(root)
    for key, value in REMOTE_CONFIG.items() if tuned else ():
        git(bare, "config", key, value)
    pushes = count_pushes(bare)
    users_file = root / "users.yaml"
    password = UserStore(users_file).add("administrator", "administrator")
    procs: list[subprocess.Popen] = []
    with GitDaemon(served, log=root / "daemon.log") as daemon:
        ports = []
        try:
            for n in range(instances):
                port = free_port()
                procs.append(start_calendar_server(
                    root / f"clone-{n}", users_file, root / f"cache-{n}", port,
                    daemon.url("calendar.git"), root / f"server-{n}.log", workers=workers,
                    threads=threads, push=push))
                wait_for_port(port, procs[-1], timeout=120, log=root / f"server-{n}.log")
                ports.append(port)
            latencies: list[float] = []
            answers: list[tuple[int, object]] = []
            by_instance: dict[int, list[float]] = {n: [] for n in range(instances)}
            lock = threading.Lock()
            todo = list(range(writes))

            def client(k: int) -> None:
                http = Http(ports[k % instances], basic("administrator", password))
                while True:
                    with lock:
                        if not todo:
                            return
                        n = todo.pop()
                    started = time.perf_counter()
                    status, headers, body = http.request("POST", f"{BASE}/events", {
                        "title": f"Bench {n}", "start_date": "2027-03-01 20:00:00",
                        "end_date": "2027-03-01 22:00:00"}, timeout=300)
                    with lock:
                        latencies.append(time.perf_counter() - started)
                        by_instance[k % instances].append(latencies[-1])
                        answers.append((status, body.get("id") if isinstance(body, dict)
                                        else None, headers.get("x-calendar-sync")))

            sessions = [daemon.proc.pid, *(proc.pid for proc in procs)]
            pushes_before = len(pushes.read_text().splitlines()) if pushes.exists() else 0
            traced_before = git_processes()
            trace_files = set(os.listdir(os.environ[TRACE_ENV])) if TRACE_ENV in os.environ \
                else set()
            cpu_before = cpu_by_session(sessions)
            load_before = loadavg()
            threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - started
            # The daemon's first, then each instance's.
            remote_cpu, *each_cpu = (after - before for after, before
                                     in zip(cpu_by_session(sessions), cpu_before))
            traced = git_processes() - traced_before
            commands = git_commands(trace_files)
            load_after = loadavg()
            ids = [i for status, i, _ in answers if status == 201]
            # Queued writes (their pushes lost every race meanwhile) are pushed by the
            # servers' threads: wait for them, as long as it takes, up to a minute.
            deadline = time.monotonic() + 60
            while True:
                on_remote = remote_ids(bare)
                missing = set(ids) - set(on_remote)
                if not missing or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            settled = time.perf_counter() - started
        finally:
            for proc in procs:
                stop_process(proc)
    cpu = remote_cpu + sum(each_cpu)
    return {"cpu_per_write": cpu / max(1, len(ids)),
            "remote_cpu_per_write": remote_cpu / max(1, len(ids)),
            "git_per_write": traced / max(1, len(ids)) if TRACE_ENV in os.environ else None,
            "instances": instances, "writes": writes, "wall": wall,
            "per_second": len(ids) / wall, "p50": statistics.median(latencies),
            "p95": percentile(latencies, 0.95), "max": max(latencies),
            "failed": writes - len(ids), "lost": len(missing),
            "queued": sum(1 for status, _, sync in answers if sync == "queued"),
            "settled": settled, "duplicates": len(on_remote) - len(set(on_remote)),
            "pushes": (len(pushes.read_text().splitlines()) if pushes.exists() else 0)
            - pushes_before,
            "load": f"{load_before} -> {load_after}", "commands": commands,
            # Writes each instance answered, their p50 and the CPU it spent: one
            # instance winning every race while the others' leads lose five in a row
            # shows here, and the losers' CPU on refused pushes, fetches and
            # integrating the winner's writes.
            "by_instance": [(len(times), statistics.median(times) if times else 0.0, spent)
                            for times, spent in zip(by_instance.values(), each_cpu)]}


TRACE_ENV = "GIT_TRACE2_EVENT"


def git_processes() -> int:
    """git processes started so far (`--count-git`: git's trace2 writes one file per
    process in that folder, servers' and daemon's alike)."""
    folder = os.environ.get(TRACE_ENV)
    return len(os.listdir(folder)) if folder else 0


def git_commands(since: set[str]) -> dict[str, int]:
    """git processes started since the trace files `since`, by command name ("receive-pack",
    "rev-list", ...): where the git processes per write go."""
    folder = os.environ.get(TRACE_ENV)
    counts: dict[str, int] = {}
    for name in set(os.listdir(folder)) - since if folder else ():
        with contextlib.suppress(OSError):
            text = Path(folder, name).read_text(errors="replace")
            found = re.search(r'"event":"cmd_name".*?"name":"([^"]+)"', text)
            command = found.group(1) if found else "?"
            counts[command] = counts.get(command, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def sessions_cpu(sessions: list[int]) -> float:
    """CPU seconds (user + system) of every process in these sessions, with the children
    they waited for (git processes a worker ran, the daemon's receive-packs)."""
    return sum(cpu_by_session(sessions))


def cpu_by_session(sessions: list[int]) -> list[float]:
    """`sessions_cpu` of each session, in their order, from one pass over /proc."""
    ticks = dict.fromkeys(sessions, 0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        sid = int(fields[3])  # fields after the name: state, ppid, pgrp, sid
        if sid in ticks:
            ticks[sid] += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return [ticks[sid] / os.sysconf("SC_CLK_TCK") for sid in sessions]


def count_pushes(bare: Path) -> Path:
    """Have `bare` keep a reflog of its branches, whose file the returned path is: one
    line per push that moved a branch (pushes of id leases, refs/calendar/..., are not
    counted). A reflog rather than a hook: a post-receive hook would cost the remote a
    shell and a grep per push, work no real remote does."""
    git(bare, "config", "core.logAllRefUpdates", "always")
    return bare / "logs" / "refs" / "heads" / "main"


def remote_ids(bare: Path) -> list[int]:
    return [int(line.rsplit(":", 1)[1]) for line in git(
        bare, "grep", "-h", "-e", "^id:", "main", "--", "events").splitlines()]


def _lease_ids(repo: str, ids: int, out: multiprocessing.Queue) -> None:
    leases = IdLeases(Path(repo), "origin", block_size=10)
    started = time.perf_counter()
    for _ in range(ids):
        leases.allocate(152, lambda _id: False)
    out.put((time.perf_counter() - started, leases.lease_attempts))


def run_leases(root: Path, leasers: int, ids: int) -> dict:
    served, bare = shared_repo(root)
    with GitDaemon(served) as daemon:
        one = root / "one"
        git(root, "clone", "-q", daemon.url("calendar.git"), str(one))
        single = IdLeases(one, "origin", block_size=1)
        times = []
        for _ in range(20):
            started = time.perf_counter()
            single.allocate(152, lambda _id: False)
            times.append(time.perf_counter() - started)
        repos = []
        for n in range(leasers):
            repos.append(root / f"leaser-{n}")
            git(root, "clone", "-q", daemon.url("calendar.git"), str(repos[-1]))
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        procs = [ctx.Process(target=_lease_ids, args=(str(r), ids, out)) for r in repos]
        started = time.perf_counter()
        for proc in procs:
            proc.start()
        results = [out.get(timeout=600) for _ in procs]
        wall = time.perf_counter() - started
        for proc in procs:
            proc.join()
    blocks = sorted((x.first, x.last) for x in read_leases(bare))
    overlaps = sum(1 for a, b in itertools.pairwise(blocks) if a[1] >= b[0])
    leases_taken = leasers * -(-ids // 10)
    return {"lease_p50_ms": 1000 * statistics.median(times),
            "lease_max_ms": 1000 * max(times), "wall": wall,
            "attempts_per_lease": sum(a for _, a in results) / leases_taken,
            "ids_per_second": leasers * ids / wall, "overlaps": overlaps}


def run_push_phases(root: Path, rounds: int) -> dict:
    """One clone's write, then its push alone, `rounds` times for each way of pushing
    (libgit2 in-process, `git push`) against the shared repository as it comes and as
    README recommends, the four interleaved round by round (the load moves alike).
    Per way: median ms of the commit and of the push (wall), and the CPU ms per push of
    this process, its git children and the daemon's session (receive-pack and so on)."""
    from calendar_app.store.content import ContentTree
    from calendar_app.sync import netfast
    from calendar_app.sync.settings import SyncSettings
    from calendar_app.sync.sync import RemoteSync

    served, bare = shared_repo(root)
    ways = {(tuned, fast): {"commit": [], "push": [], "cpu": 0.0}
            for tuned in (False, True) for fast in (True, False)}
    real_push = netfast.push
    with GitDaemon(served) as daemon:
        clone = root / "clone"
        git(root, "clone", "-q", daemon.url("calendar.git"), str(clone))
        tree = ContentTree(clone, root / "state" / "write.lock")
        sync = RemoteSync(tree, SyncSettings(remote="origin"), "origin", root / "state")
        for n in range(rounds):
            for (tuned, fast), figures in ways.items():
                for key, value in REMOTE_CONFIG.items():
                    git(bare, "config", key, value if tuned else "true")
                netfast.push = real_push if fast else (lambda *args: None)
                started = time.perf_counter()
                with tree.locked():
                    tree.apply({f"bench/p{n}-{tuned}-{fast}.yaml": f"n: {n}\n"},
                               f"bench write {n}", "Bench <bench@localhost>")
                pushed = time.perf_counter()
                cpu = time.process_time() + sum(os.times()[2:4]) + sessions_cpu(
                    [daemon.proc.pid])
                assert sync._push(time.monotonic() + 60)
                figures["cpu"] += time.process_time() + sum(os.times()[2:4]) + sessions_cpu(
                    [daemon.proc.pid]) - cpu
                figures["push"].append(time.perf_counter() - pushed)
                figures["commit"].append(pushed - started)
    netfast.push = real_push
    return {way: {"commit_ms": 1000 * statistics.median(f["commit"]),
                  "push_ms": 1000 * statistics.median(f["push"]),
                  "cpu_ms": 1000 * f["cpu"] / rounds} for way, f in ways.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--writes", type=int, default=90)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per gunicorn worker (1: sync workers)")
    parser.add_argument("--push", choices=("wait", "queue"), default="wait")
    parser.add_argument("--leases-only", action="store_true")
    parser.add_argument("--leasers", type=int, default=3)
    parser.add_argument("--ids", type=int, default=300)
    parser.add_argument("--root", type=Path)
    parser.add_argument("--push-phases", type=int, metavar="ROUNDS",
                        help="time one write's commit and push alone, each way")
    parser.add_argument("--tuned-remote", action="store_true",
                        help="the shared repository configured as README recommends")
    parser.add_argument("--count-git", action="store_true",
                        help="count the git processes per write (git's trace2 files)")
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="multi-instance-bench-"))
    if args.root is None:  # a scratch folder (clones, a remote, traces) per run: not kept
        atexit.register(shutil.rmtree, root, True)
    if args.count_git:  # inherited by the daemon, the servers and their git processes
        os.environ[TRACE_ENV] = str(root / "git-trace2")
        os.makedirs(os.environ[TRACE_ENV], exist_ok=True)
    if args.push_phases:
        load = loadavg()
        print("| remote | push | commit p50 | push p50 | CPU per push (all processes) |")
        print("|---|---|---|---|---|")
        for (tuned, fast), f in run_push_phases(root / "phases", args.push_phases).items():
            print(f"| {'recommended' if tuned else 'as it comes'} | "
                  f"{'libgit2 in-process' if fast else 'git push'} | {f['commit_ms']:.1f} ms "
                  f"| {f['push_ms']:.1f} ms | {f['cpu_ms']:.1f} ms |")
        print(f"load {load} -> {loadavg()}")
        return 0
    if args.leases_only:
        figures = run_leases(root / "leases", args.leasers, args.ids)
        print(f"one lease over git://: p50 {figures['lease_p50_ms']:.0f} ms, max "
              f"{figures['lease_max_ms']:.0f} ms")
        print(f"{args.leasers} processes x {args.ids} ids in blocks of 10: "
              f"{figures['ids_per_second']:.0f} ids/s, {figures['attempts_per_lease']:.2f} "
              f"compare-and-swap rounds per lease, {figures['overlaps']} overlapping blocks")
        return 0
    print("| instances | workers x threads | writes | clients | wall | writes/s | p50 | p95 "
          "| max | not 201 | queued | pushes | CPU per write (of it the remote's) "
          "| git processes per write "
          "| all on remote after | lost "
          "| duplicate ids | load before -> after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for count in args.instances:
        f = run_writes(root / f"x{count}", count, args.writes, args.clients, args.workers,
                       args.push, args.threads, args.tuned_remote)
        print(f"| {count} | {args.workers} x {args.threads} | {f['writes']} | {args.clients} "
              f"| {f['wall']:.1f} s | "
              f"{f['per_second']:.1f} | {1000 * f['p50']:.0f} ms | {1000 * f['p95']:.0f} ms"
              f" | {1000 * f['max']:.0f} ms | {f['failed']} | {f['queued']} | "
              f"{f['pushes']} | {1000 * f['cpu_per_write']:.0f} ms "
              f"({1000 * f['remote_cpu_per_write']:.0f} ms) | "
              f"{'-' if f['git_per_write'] is None else format(f['git_per_write'], '.1f')} | "
              f"{f['settled']:.1f} s | {f['lost']} | "
              f"{f['duplicates']} | {f['load']} |", flush=True)
        if count > 1:
            print(f"  writes answered, p50, CPU, by instance ({count}): " + ", ".join(
                f"{n} in {1000 * p50:.0f} ms ({spent:.2f} s)"
                for n, p50, spent in f["by_instance"]), flush=True)
        if f["commands"]:
            per_write = ", ".join(f"{name} {n / max(1, args.writes - f['failed']):.2f}"
                                  for name, n in f["commands"].items())
            print(f"  git processes per write by command ({count}): {per_write}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
