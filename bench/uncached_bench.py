"""Uncached list queries under the production server: a stream of distinct questions.

    python bench/uncached_bench.py [--sizes 10000 100000] [--root /tmp/bench]
                                   [--per-kind 150] [--warmup 10] [--seed 7]
                                   [--fresh | --cache DIR]

The figures of `lists_bench.py` are body-cache hits (wrk repeats one URL). Here one
client sends a stream of distinct URLs (none is ever sent twice, so the per-process
list body cache never answers) to gunicorn with 2 sync workers (the shipped
configuration, `calendar_app.http.gunicorn_conf`: preloaded), interleaving four
kinds of question:

  search  search word(s) + a date bound
  window  a plain date window
  cat     one category + a date window
  all     search word(s) + a date window + a category

Search strings are drawn from the generated calendars' vocabulary (bench/
gen_calendar.py): whole words, prefixes of two to four letters, two words, a word
with an exclusion (`jazz -blues`), title numbers (every event title ends with its
number, so "4711" is a prefix of a few titles) and words that match nothing.

Per size: generate the calendar unless present (bench/gen_calendar.py), build the
index unless present (`reindex`, same cache folder as lists_bench so a later run
reuses it; with `--fresh` neither: an empty cache folder, as a fresh deployment),
start gunicorn, time the first answer, wait until both workers answer, send `--warmup` requests
of each kind (distinct too, not counted), then `--per-kind` of each kind, timing each
request on the client (connect to last byte). Prints p50/p95/max per kind and the
workers' RSS (now and peak). Also the workers' CPU time per request (all their
threads, from /proc/<pid>/task/*/schedstat, read between requests): on a machine
shared with other jobs, wall-clock latency includes waiting for a core, the CPU time
mostly does not. Run by hand, never by CI.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from gen_calendar import WORDS

PY = sys.executable
BASE = "/wp-json/tribe/events/v1"
KINDS = ("search", "window", "cat", "all")
FIRST_DAY = dt.date(2024, 1, 1)
DAYS = (dt.date(2031, 12, 31) - FIRST_DAY).days


class Stream:
    """Distinct query strings of each kind, deterministic for a seed."""

    def __init__(self, size: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.size = size
        self.seen: set[str] = set()

    def _day(self) -> dt.date:
        return FIRST_DAY + dt.timedelta(days=self.rng.randrange(DAYS))

    def _window(self) -> dict:
        start = self._day()
        span = self.rng.choice((1, 7, 30, 90, 365, 730))
        return {"start_date": start.isoformat(),
                "end_date": (start + dt.timedelta(days=span)).isoformat()}

    def _bound(self) -> dict:
        # One explicit bound; the other is the plugin's default (start: yesterday,
        # end: now + 24 months).
        if self.rng.random() < 0.5:
            return {"start_date": self._day().isoformat()}
        return {"end_date": self._day().isoformat()}

    def _search(self) -> str:
        rng = self.rng
        word = rng.choice(WORDS)
        kind = rng.random()
        if kind < 0.35:
            return word
        if kind < 0.55:
            return word[:rng.randint(2, min(4, len(word)))]
        if kind < 0.70:
            return f"{word} {rng.choice(WORDS)}"
        if kind < 0.80:
            other = rng.choice([w for w in WORDS if w != word])
            return f"{word} -{other}"
        if kind < 0.90:
            return str(rng.randrange(1, self.size))  # a title number, also a prefix
        return rng.choice(("zebra", "quux", "nothinghere", "xylophone")) + str(
            rng.randrange(10_000))

    def _category(self) -> str:
        return f"category-{self.rng.randrange(30)}"

    def query(self, kind: str) -> str:
        while True:
            if kind == "search":
                params = {"search": self._search(), **self._bound()}
            elif kind == "window":
                params = self._window()
            elif kind == "cat":
                params = {"categories": self._category(), **self._window()}
            else:
                params = {"search": self._search(), "categories": self._category(),
                          **self._window()}
            if self.rng.random() < 0.15:
                params["page"] = 2
            url = f"{BASE}/events?{urlencode(params)}"
            if url not in self.seen:
                self.seen.add(url)
                return url


def get(port: int, url: str) -> tuple[int, float]:
    t = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", url)
        response = conn.getresponse()
        response.read()
    finally:
        conn.close()
    return response.status, (time.perf_counter() - t) * 1000


def children(server_pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server_pid)],
                         capture_output=True, text=True, check=True).stdout.split()
    return [int(p) for p in out]


def is_site_builder(pid: int) -> bool:
    """The master's website builder (site/child.py): a child, but not a worker."""
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        return b"calendar_app.site.child" in fh.read()


def workers(server_pid: int) -> list[int]:
    return [p for p in children(server_pid) if not is_site_builder(p)]


def cpu_ns(pids: list[int]) -> int:
    """On-CPU nanoseconds so far of every thread of these processes."""
    total = 0
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
    return total


def memory(pids: list[int]) -> list[tuple[int, int]]:
    """(VmRSS, VmHWM) in MiB of each of these processes."""
    sizes = []
    for pid in pids:
        fields = {}
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) // 1024
        sizes.append((fields["VmRSS"], fields["VmHWM"]))
    return sizes


def prepare(size: int, root: Path, fresh: bool = False, cache: Path | None = None
            ) -> tuple[Path, Path]:
    content = root / f"cal-{size}"
    if cache is not None:  # a cache folder as it is (e.g. no search index yet)
        return content, cache
    cache = root / f"cache-{size}"
    if not content.exists():
        subprocess.run([PY, str(REPO / "bench" / "gen_calendar.py"), str(size),
                        str(content)], check=True)
    if fresh:  # a fresh deployment: no catalog cache, no search index, nothing
        cache = root / f"cache-{size}-fresh"
        shutil.rmtree(cache, ignore_errors=True)
        return content, cache
    code = ("import sys;from pathlib import Path;from calendar_app.catalog.index import TextIndex;"
            f"sys.exit(0 if TextIndex(Path('{cache}')).exists() else 1)")
    if subprocess.run([PY, "-c", code], cwd=REPO, check=False).returncode:
        print(f"building the index of {size} events (once)...", file=sys.stderr)
        subprocess.run([PY, "-m", "calendar_app", "reindex", "--content", str(content),
                        "--cache-dir", str(cache)], cwd=REPO, check=True)
    return content, cache


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench(size: int, root: Path, port: int, per_kind: int, warmup: int, seed: int,
          fresh: bool = False, cache: Path | None = None) -> dict:
    content, cache = prepare(size, root, fresh, cache)
    env = {**os.environ, "CALENDAR_CONTENT": str(content), "CALENDAR_CACHE": str(cache),
           "CALENDAR_USERS": "/tmp/bench-users.yaml", "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "-c", "python:calendar_app.http.gunicorn_conf",
         "-w", "2", "-b", f"127.0.0.1:{port}",
         "--timeout", "300", "--log-level", "warning", "--pythonpath",
         str(REPO / "bench"), "bench_wsgi:app"], cwd=REPO, env=env)
    stream = Stream(size, seed)
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    cpu: dict[str, list[float]] = {k: [] for k in KINDS}
    try:
        while time.perf_counter() - started < 1800:  # a fresh 100k load on a busy machine
            try:
                if get(port, f"{BASE}/events")[0] == 200:
                    break
            except OSError:
                time.sleep(0.25)
        first = time.perf_counter() - started
        for _ in range(4):  # both workers have loaded their catalog
            get(port, f"{BASE}/events")
        for _ in range(warmup):
            for kind in KINDS:
                get(port, stream.query(kind))
        pids = workers(server.pid)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        for _ in range(per_kind):
            for kind in KINDS:
                url = stream.query(kind)
                before = cpu_ns(pids)
                status, ms = get(port, url)
                cpu[kind].append((cpu_ns(pids) - before) / 1e6)
                assert status == 200 or (status == 404), status
                times[kind].append(ms)
        elapsed = time.perf_counter() - t0
        load = (load, os.getloadavg()[0])
        worker_sizes = memory(workers(server.pid))
        builder_sizes = memory([p for p in children(server.pid) if is_site_builder(p)])
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return {"size": size, "times": times, "cpu": cpu,
            "rss": max(m[0] for m in worker_sizes), "hwm": max(m[1] for m in worker_sizes),
            "builder": builder_sizes[0] if builder_sizes else None, "elapsed": elapsed,
            "load": load, "first": first, "fresh": fresh}


def table(results: list[dict]) -> str:
    head = ("| events | kind | requests | p50 (ms) | p95 (ms) | max (ms) | mean (ms) "
            "| CPU p50 / p95 / max (ms) |\n|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in results:
        for kind in KINDS:
            t, c = r["times"][kind], r["cpu"][kind]
            lines.append(f"| {r['size']:,} | {kind} | {len(t)} | {statistics.median(t):.1f} | "
                         f"{percentile(t, 95):.1f} | {max(t):.1f} | "
                         f"{statistics.fmean(t):.1f} | {statistics.median(c):.1f} / "
                         f"{percentile(c, 95):.1f} / {max(c):.1f} |")
    lines.append("")
    lines += [f"{r['size']:,} events{' (fresh: no cache)' if r['fresh'] else ''}: first "
              f"answer {r['first']:.1f} s after start; largest worker RSS {r['rss']} MiB "
              f"after the run, peak {r['hwm']} MiB; "
              + (f"site builder RSS {r['builder'][0]} MiB, peak {r['builder'][1]} MiB; "
                 if r["builder"] else "no site builder process; ") +
              f"{sum(map(len, r['times'].values()))} requests in "
              f"{r['elapsed']:.1f} s; load average {r['load'][0]:.1f} before, "
              f"{r['load'][1]:.1f} after" for r in results]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--root", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--per-kind", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fresh", action="store_true",
                        help="start without any cache folder (a fresh deployment)")
    parser.add_argument("--cache", type=Path,
                        help="this cache folder as it is (nothing built beforehand)")
    args = parser.parse_args()
    results = [bench(n, args.root, args.port, args.per_kind, args.warmup, args.seed,
                     args.fresh, args.cache) for n in args.sizes]
    print(table(results))


if __name__ == "__main__":
    main()
