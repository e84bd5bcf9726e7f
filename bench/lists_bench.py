"""List/search benchmark under the production server (gunicorn, 2 workers) with wrk.

    python bench/lists_bench.py [--sizes 1000 10000 100000] [--root /tmp/bench]
                                [--keep-catalog-cache]

Per size: generate the calendar (bench/gen_calendar.py) unless present; time a full
`reindex`; time start-up with an up-to-date index and catch-up after 100 files changed
(new processes); then start gunicorn with 2 workers and measure with wrk on loopback:
single-client latency of GET /events (default), a search + date range + category
query and GET /events/<id>; 8-client throughput of GET /events, of a 304 revalidation
and of a bare Flask endpoint returning the same bytes; then the largest worker's RSS.
Also times uncached (first time) list queries in-process. Prints a Markdown table; run by hand, never by CI.

GET /events against the bare endpoint: `--rounds N` takes the two 8-client figures N
times, alternated, and reports each round's ratio of requests per second and the
workers' CPU time per request (from /proc); then the thread CPU time per request of
the two through the WSGI app in one process (`--inprocess-only`: that figure alone,
the one a busy machine moves least). The server runs without the website
(CALENDAR_SITE=0): its first build in the background would take CPU from the measured
workers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BASE = "/wp-json/tribe/events/v1"
SEARCH = "/events?search=jazz&start_date=2027-01-01&end_date=2027-06-30&categories=category-3"


def run_py(code: str, env: dict | None = None) -> str:
    out = subprocess.run([PY, "-c", code], cwd=REPO, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, check=True)
    return out.stdout.strip()


def timed_reindex(content: Path, cache: Path) -> float:
    code = (f"import time;from calendar_app import cli;t=time.perf_counter();"
            f"cli.main(['reindex','--content','{content}','--cache-dir','{cache}']);"
            f"print(time.perf_counter()-t)")
    return float(run_py(code).splitlines()[-1])


def timed_start(content: Path, cache: Path, flush: bool) -> tuple[float, float]:
    """(seconds from interpreter start to ready to serve, of which writing the pending
    index changes). Imports included: they are part of a real start."""
    code = ("import time;t=time.perf_counter();from calendar_app.wiring import open_calendar;"
            "from pathlib import Path;"
            f"c=open_calendar(Path('{content}'),Path('/tmp/bench-users.yaml'),Path('{cache}'),"
            f"index_in_background=False);f=time.perf_counter();"
            f"n=c.index.flush() if {flush} else 0;f=time.perf_counter()-f;"
            "from calendar_app.catalog.eventtable import event_table;"
            "event_table(c.catalog.current);print(time.perf_counter()-t, f, n, len(c.index.pending()))")
    total, flushed = run_py(code).split()[:2]
    return float(total), float(flushed)


def touch_files(content: Path, count: int) -> None:
    files = sorted((content / "events").rglob("*.yaml"))[:count]
    for f in files:
        f.write_text(f.read_text().replace("title: ", "title: Edited ", 1))


def wrk(url: str, clients: int, seconds: int = 5, header: str | None = None) -> dict:
    cmd = ["wrk", f"-t{min(clients, 2)}", f"-c{clients}", f"-d{seconds}s", "--latency", url]
    if header:
        cmd[1:1] = ["-H", header]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", out)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    count = int(re.search(r"(\d+) requests in", out).group(1))
    return {"p50": ms("50%"), "p99": ms("99%"), "rps": rps, "requests": count}


def workers_cpu(server_pid: int) -> float:
    """CPU seconds (user + system) used so far by the gunicorn workers."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server_pid)],
                         capture_output=True, text=True, check=True).stdout.split()
    ticks = 0
    for pid in out:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def wrk_cpu(url: str, server_pid: int, seconds: int, clients: int = 8) -> dict:
    """`wrk` with the workers' CPU time per request (us) and the load average."""
    load, before = os.getloadavg()[0], workers_cpu(server_pid)
    r = wrk(url, clients, seconds)
    r["cpu_us"] = (workers_cpu(server_pid) - before) / max(1, r["requests"]) * 1e6
    r["load"] = load
    return r


def uncached(content: Path, cache: Path) -> tuple[float, float]:
    """Median in-process time of first-time (uncached) default and search queries."""
    code = f"""
import time, statistics, datetime as dt
from calendar_app.http.app import create_app
app = create_app({{"CONTENT_DIR": "{content}", "CACHE_DIR": "{cache}",
                  "USERS_FILE": "/tmp/bench-users.yaml", "TESTING": True}})
c = app.test_client(); c.get("{BASE}/events")
a, b = [], []
for i in range(30):
    day = (dt.date(2026, 1, 1) + dt.timedelta(days=i)).isoformat()
    t = time.perf_counter(); c.get("{BASE}/events?start_date=" + day); a.append(time.perf_counter() - t)
    t = time.perf_counter(); c.get("{BASE}{SEARCH}&end_date=2027-07-" + f"{{i % 28 + 1:02d}}"); b.append(time.perf_counter() - t)
print(statistics.median(a) * 1000, statistics.median(b) * 1000)
"""
    x, y = run_py(code).split()
    return float(x), float(y)


def inprocess_cpu(content: Path, cache: Path, rounds: int, per_round: int = 400) -> list:
    """Thread CPU time per warm request (us), GET /events then the bare endpoint, each
    round best of 3 x `per_round` requests, straight through the production WSGI app
    (bench_wsgi.py) in one process: no server, no client, so no other process's load
    in the figure, only the app's own work."""
    code = f"""
import io, os, sys, time
os.environ.update(CALENDAR_CONTENT="{content}", CALENDAR_CACHE="{cache}", CALENDAR_SITE="0",
                  CALENDAR_USERS="/tmp/bench-users.yaml")
sys.path.insert(0, "{REPO / 'bench'}")
from bench_wsgi import app
def environ(path):
    return {{"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr, "wsgi.multithread": False,
            "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
            "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1"}}
def call(path):
    b"".join(app(environ(path), lambda status, headers, exc=None: None))
def cpu(path):
    best = []
    for _ in range(3):
        t = time.thread_time()
        for _ in range({per_round}):
            call(path)
        best.append((time.thread_time() - t) / {per_round} * 1e6)
    return min(best)
paths = ["{BASE}/events", "/bench/bare"]
for _ in range(50):
    call(paths[0]); call(paths[1])
for i in range({rounds}):
    print(*(cpu(p) for p in paths))
"""
    return [tuple(map(float, line.split())) for line in run_py(code).splitlines()]


def worker_rss(server_pid: int) -> list[int]:
    """VmRSS (MiB) of each gunicorn worker (the children of the master)."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server_pid)],
                         capture_output=True, text=True, check=True).stdout.split()
    sizes = []
    for pid in out:
        with open(f"/proc/{pid}/status") as fh:
            kb = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
        sizes.append(kb // 1024)
    return sizes


def clear_cache(cache: Path, keep_catalog: bool) -> None:
    """Remove the index (and, unless kept, the parsed-catalog cache: parsing 100k files
    from scratch takes 1.5-3 minutes and is not one of the figures)."""
    if not keep_catalog:
        shutil.rmtree(cache, ignore_errors=True)
        return
    for item in cache.glob("*") if cache.exists() else []:
        if not item.name.startswith("catalog.pickle"):
            shutil.rmtree(item) if item.is_dir() else item.unlink()


def bench(size: int, root: Path, port: int, keep_catalog: bool = False, rounds: int = 1,
          round_seconds: int = 5, inprocess_only: bool = False) -> dict:
    content, cache = root / f"cal-{size}", root / f"cache-{size}"
    if not content.exists():
        subprocess.run([PY, str(REPO / "bench" / "gen_calendar.py"), str(size), str(content)],
                       check=True)
    if inprocess_only:
        timed_start(content, cache, False)  # the caches, if missing
        return {"size": size, "inprocess": inprocess_cpu(content, cache, rounds)}
    clear_cache(cache, keep_catalog)
    timed_start(content, cache, False)  # fill the parsed-catalog cache
    r: dict = {"size": size, "reindex": timed_reindex(content, cache)}
    r["startup"] = timed_start(content, cache, False)[0]
    touch_files(content, 100)
    r["catchup"], r["catchup_index"] = timed_start(content, cache, True)
    r["uncached_default"], r["uncached_search"] = uncached(content, cache)
    env = {**os.environ, "CALENDAR_CONTENT": str(content), "CALENDAR_CACHE": str(cache),
           "CALENDAR_USERS": "/tmp/bench-users.yaml", "PYTHONPATH": str(REPO), "CALENDAR_SITE": "0"}
    server = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "-w", "2", "-b", f"127.0.0.1:{port}",
         "--log-level", "warning", "--pythonpath", str(REPO / "bench"), "bench_wsgi:app"], cwd=REPO, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                urllib.request.urlopen(url + BASE + "/events", timeout=5).read()
                break
            except OSError:
                time.sleep(0.2)
        first_id = re.search(rb'"id": (\d+)', urllib.request.urlopen(
            url + BASE + "/events").read()).group(1).decode()
        etag = urllib.request.urlopen(url + BASE + "/events").headers["ETag"]
        for _ in range(4):  # warm both workers' caches
            urllib.request.urlopen(url + BASE + SEARCH).read()
        r["list1"] = wrk(url + BASE + "/events", 1)
        r["search1"] = wrk(url + BASE + SEARCH, 1)
        r["single1"] = wrk(url + BASE + f"/events/{first_id}", 1)
        r["cond8"] = wrk(url + BASE + "/events", 8, header=f"If-None-Match: {etag}")
        r["rounds"] = []
        for i in range(rounds):  # alternated, so drifts of the load fall on both
            sides = [("list8", url + BASE + "/events"), ("bare8", url + "/bench/bare")]
            r["rounds"].append({k: wrk_cpu(u, server.pid, round_seconds) for k, u in sides[::1 - 2 * (i % 2)]})
        r["list8"], r["bare8"] = r["rounds"][0]["list8"], r["rounds"][0]["bare8"]
        r["rss"] = max(worker_rss(server.pid))
        r["inprocess"] = inprocess_cpu(content, cache, rounds)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return r


def inprocess_table(r: dict) -> str:
    lines = ["| round | GET /events CPU/req (us) | bare CPU/req (us) | ratio (bare / events) |",
             "|---|---|---|---|"]
    ratio = [b / a for a, b in r["inprocess"]]
    lines += [f"| {i} | {a:.0f} | {b:.0f} | {x:.2f} |"
              for i, ((a, b), x) in enumerate(zip(r["inprocess"], ratio, strict=True), 1)]
    lines.append(f"| median | | | {statistics.median(ratio):.2f} |")
    return "\n".join(lines)


def ratios(r: dict) -> str:
    """Each round of GET /events against the bare endpoint, then the medians."""
    lines = [("| round | load | GET /events req/s | bare req/s | ratio | GET /events CPU/req (us) "
             "| bare CPU/req (us) | CPU ratio (bare / events) |"), "|---|---|---|---|---|---|---|---|"]
    rps, cpu = [], []
    for i, one in enumerate(r["rounds"], 1):
        a, b = one["list8"], one["bare8"]
        rps.append(a["rps"] / b["rps"])
        cpu.append(b["cpu_us"] / a["cpu_us"])
        lines.append(f"| {i} | {a['load']:.1f} / {b['load']:.1f} | {a['rps']:.0f} | {b['rps']:.0f} "
                     f"| {rps[-1]:.2f} | {a['cpu_us']:.0f} | {b['cpu_us']:.0f} | {cpu[-1]:.2f} |")
    lines.append(f"| median | | | | {statistics.median(rps):.2f} | | | {statistics.median(cpu):.2f} |")
    return "\n".join(lines)


def table(results: list[dict]) -> str:
    rows = [
        ("full reindex (s)", lambda r: f"{r['reindex']:.1f}"),
        ("start-up, index up to date (s)", lambda r: f"{r['startup']:.2f}"),
        ("start-up + catch-up after 100 files changed (s)", lambda r: f"{r['catchup']:.2f}"),
        ("  of which: catch-up beyond a plain start (s)",
         lambda r: f"{max(0.0, r['catchup'] - r['startup']):.2f}"),
        ("  of which: writing the 100 changes to the index (s)",
         lambda r: f"{r['catchup_index']:.2f}"),
        ("GET /events 1 client p50 / p99 (ms)",
         lambda r: f"{r['list1']['p50']:.2f} / {r['list1']['p99']:.2f}"),
        ("search+dates+category 1 client p50 (ms)", lambda r: f"{r['search1']['p50']:.2f}"),
        ("GET /events/<id> 1 client p50 (ms)", lambda r: f"{r['single1']['p50']:.2f}"),
        ("GET /events uncached, in-process p50 (ms)", lambda r: f"{r['uncached_default']:.1f}"),
        ("search uncached, in-process p50 (ms)", lambda r: f"{r['uncached_search']:.1f}"),
        ("GET /events 8 clients (req/s)", lambda r: f"{r['list8']['rps']:.0f}"),
        ("304 revalidation 8 clients (req/s)", lambda r: f"{r['cond8']['rps']:.0f}"),
        ("bare Flask, same bytes, 8 clients (req/s)", lambda r: f"{r['bare8']['rps']:.0f}"),
        ("largest worker RSS after the run (MiB)", lambda r: f"{r['rss']}"),
    ]
    head = "| figure | " + " | ".join(f"{r['size']:,} events" for r in results) + " |"
    sep = "|---|" + "---|" * len(results)
    lines = [head, sep] + [f"| {name} | " + " | ".join(f(r) for r in results) + " |"
                           for name, f in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--root", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--rounds", type=int, default=1,
                        help="times to take GET /events and the bare endpoint, alternated")
    parser.add_argument("--inprocess-only", action="store_true",
                        help="only the in-process CPU per request of the two (a busy machine)")
    parser.add_argument("--round-seconds", type=int, default=5,
                        help="seconds of each side of a round")
    parser.add_argument("--keep-catalog-cache", action="store_true",
                        help="reuse the parsed-catalog cache of an earlier run (the index "
                             "is still rebuilt and every figure still measured)")
    args = parser.parse_args()
    results = [bench(n, args.root, args.port, args.keep_catalog_cache, args.rounds,
                     args.round_seconds, args.inprocess_only)
               for n in args.sizes]
    if not args.inprocess_only:
        print(table(results))
    for r in results:
        if not args.inprocess_only:
            print(f"\nGET /events against the bare endpoint, {r['size']:,} events, 8 clients:\n")
            print(ratios(r))
        print(f"\nIn-process CPU per warm request, {r['size']:,} events:\n")
        print(inprocess_table(r))


if __name__ == "__main__":
    main()
