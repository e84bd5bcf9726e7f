"""Cold start under gunicorn: a fresh deployment (no cache at all) of a large calendar.

    python bench/cold_start_bench.py [--size 100000] [--root /tmp/bench] [--workers 2]

Generates the calendar (bench/gen_calendar.py) unless present, removes its cache folder,
starts gunicorn with the shipped configuration (`-c python:calendar_app.http.gunicorn_conf`,
gunicorn's default 30 s worker timeout) and polls `GET /events` every second. Then a
few hundred mixed reads (lists with filters and pages, single events, search, terms,
venues) while the search index is still being built in the background, and it waits
for the index to finish. Prints: seconds until the master had loaded the calendar and
until the first 200, failed polls, "WORKER TIMEOUT" lines in gunicorn's log, latencies
of the mixed reads, and per worker RSS / PSS (MiB) after the reads and at their peak
(sampled every second) until the index is built.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BASE = "/wp-json/tribe/events/v1"


def get(url: str, timeout: float = 120) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in MiB: PSS shares copy-on-write pages among the processes."""
    rss = pss = 0
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) // 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) // 1024
    return rss, pss


def workers_of(master: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], check=False,
                         capture_output=True,
                         text=True).stdout.split()
    return [int(p) for p in out]


class Sampler(threading.Thread):
    """Peak RSS / PSS per process, every second."""

    def __init__(self, master: int) -> None:
        super().__init__(daemon=True)
        self.master = master
        self.peak: dict[int, tuple[int, int]] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            for pid in [self.master, *workers_of(self.master)]:
                try:
                    rss, pss = memory(pid)
                except OSError:
                    continue
                old = self.peak.get(pid, (0, 0))
                self.peak[pid] = (max(old[0], rss), max(old[1], pss))


def mixed_paths(ids: list[int], rng: random.Random, count: int) -> list[tuple[str, str]]:
    kinds = [
        ("list", lambda: f"/events?page={rng.randint(1, 20)}"),
        ("list+dates", lambda: f"/events?start_date=20{rng.randint(25, 30)}-0{rng.randint(1, 9)}"
                               f"-01&end_date=2031-01-01&per_page=50"),
        ("list+category", lambda: f"/events?categories=category-{rng.randint(0, 29)}"),
        ("single", lambda: f"/events/{rng.choice(ids)}"),
        ("search", lambda: f"/events?search={rng.choice(['jazz', 'river+market', 'tango'])}"),
        ("terms", lambda: rng.choice(["/categories", "/tags?per_page=50", "/venues",
                                      "/organizers?page=2"])),
    ]
    return [(name, f()) for name, f in (rng.choice(kinds) for _ in range(count))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--root", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--index-timeout", type=float, default=900,
                        help="seconds to wait for the background index build")
    parser.add_argument("--max-wait", type=float, default=900,
                        help="give up when no 200 came within this many seconds")
    parser.add_argument("--timeout", type=int, default=30,
                        help="gunicorn's worker timeout (its default: 30 s); lower it to "
                             "stand for a slower disk or a larger calendar")
    parser.add_argument("--no-config", action="store_true",
                        help="gunicorn without the shipped configuration (the old command)")
    args = parser.parse_args()
    content, cache = args.root / f"cal-{args.size}", args.root / f"cold-cache-{args.size}"
    if not content.exists():
        subprocess.run([PY, str(REPO / "bench" / "gen_calendar.py"), str(args.size),
                        str(content)], check=True)
    shutil.rmtree(cache, ignore_errors=True)
    subprocess.run(["sync"], check=False)
    log_file = args.root / f"cold-start-{args.size}.log"
    env = {**os.environ, "CALENDAR_CONTENT": str(content), "CALENDAR_CACHE": str(cache),
           "CALENDAR_USERS": str(args.root / "cold-users.yaml"), "PYTHONPATH": str(REPO)}
    url = f"http://127.0.0.1:{args.port}{BASE}"
    r: dict = {"size": args.size, "workers": args.workers, "config": not args.no_config,
               "timeout": args.timeout}
    t0 = time.monotonic()
    with open(log_file, "wb") as log:
        server = subprocess.Popen(
            [str(Path(PY).parent / "gunicorn"),
             *(() if args.no_config else ("-c", "python:calendar_app.http.gunicorn_conf")),
             "-w", str(args.workers), "--timeout", str(args.timeout),
             "-b", f"127.0.0.1:{args.port}", "calendar_app.http.wsgi:app"],
            cwd=REPO, env=env, stdout=log, stderr=log)
    sampler = Sampler(server.pid)
    sampler.start()
    try:
        failed = 0
        while True:
            if server.poll() is not None:
                raise SystemExit(f"gunicorn exited: see {log_file}")
            if time.monotonic() - t0 > args.max_wait:
                text = log_file.read_text(errors="replace")
                print(json.dumps({**r, "first_200": None, "gave_up_after": args.max_wait,
                                  "worker_timeouts": text.count("WORKER TIMEOUT")}))
                return
            if "loaded" not in r and "calendar loaded before forking" in log_file.read_text(
                    errors="replace"):
                r["loaded"] = round(time.monotonic() - t0, 1)
            try:
                status, body = get(url + "/events", timeout=60)
            except OSError:
                status, body = 0, b""
            if status == 200:
                r["first_200"] = round(time.monotonic() - t0, 1)
                break
            failed += status != 0  # connection refused: not listening yet
            time.sleep(1.0)
        r["failed_polls"] = failed
        r.setdefault("loaded", r["first_200"])
        ids = [e["id"] for e in json.loads(body)["events"]]
        for page in (2, 3, 4):
            ids += [e["id"] for e in json.loads(get(f"{url}/events?page={page}")[1])["events"]]
        times: dict[str, list[float]] = {}
        statuses: dict[int, int] = {}
        index_pending = not (cache / "whoosh-manifest.pickle").exists()
        for name, path in mixed_paths(ids, random.Random(5), args.requests):
            t = time.perf_counter()
            status, _ = get(url + path)
            times.setdefault(name, []).append((time.perf_counter() - t) * 1000)
            statuses[status] = statuses.get(status, 0) + 1
        r["mixed_while_index_pending"] = index_pending
        r["statuses"] = statuses
        r["ms"] = {k: (round(sorted(v)[len(v) // 2], 1), round(max(v), 1))
                   for k, v in times.items()}
        r["after_mixed"] = {pid: memory(pid) for pid in workers_of(server.pid)}
        deadline = time.monotonic() + args.index_timeout
        while not (cache / "whoosh-manifest.pickle").exists() and time.monotonic() < deadline:
            time.sleep(2.0)
        r["index_built"] = round(time.monotonic() - t0, 1)
        time.sleep(3.0)
        status, _ = get(url + "/events?search=jazz")
        r["search_after_index"] = status
        r["after_index"] = {pid: memory(pid) for pid in workers_of(server.pid)}
    finally:
        sampler.stopped.set()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    text = log_file.read_text(errors="replace")
    r["worker_timeouts"] = text.count("WORKER TIMEOUT")
    r["tracebacks"] = text.count("Traceback")
    r["peak"] = {pid: v for pid, v in sampler.peak.items() if pid != server.pid}
    r["master_peak"] = sampler.peak.get(server.pid)
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
