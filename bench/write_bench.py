"""Write latency under the production server: sequential POST /events, one client.

    python bench/write_bench.py [--sizes 10000 100000] [--root /tmp/bench-writes]
                                [--writes 100] [--warmup 5] [--port 8766] [--no-git]
                                [--repo CHECKOUT]

Per size: generate the calendar (bench/gen_calendar.py) unless present, make it a git
repository with one commit (unless --no-git; a calendar lives in git, and every write
is a commit), build the search index (`reindex`), add a user (`users add`), then start
gunicorn with 2 sync workers and send `--warmup` + `--writes` POST /events one after
the other from one client (HTTP Basic with the application password, a new event each
time). Prints wall-clock p50 / p95 / max of the counted writes and the load average
before and after (the machine is shared: read the load beside the figures). Each run
adds its events to the calendar; run by hand, never by CI. `--repo` measures another
checkout (e.g. a worktree of an older commit) with that checkout's own interpreter:
`OLD/.venv/bin/python bench/write_bench.py --repo OLD`, OLD being that checkout.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BASE = "/wp-json/tribe/events/v1"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def prepare(size: int, root: Path, git: bool) -> tuple[Path, Path, Path]:
    content, cache = root / f"cal-{size}", root / f"cache-{size}"
    if not content.exists():
        subprocess.run([PY, str(REPO / "bench" / "gen_calendar.py"), str(size), str(content)],
                       check=True)
    if git and not (content / ".git").exists():
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                      "commit", "-q", "-m", "bench calendar"]):
            subprocess.run(["git", *args], cwd=content, check=True)
    if not cache.exists():
        subprocess.run([PY, "-m", "calendar_app", "reindex", "--content", str(content),
                        "--cache-dir", str(cache)], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
    users = root / "users.yaml"
    return content, cache, users


def add_user(users: Path) -> str:
    out = subprocess.run([PY, "-m", "calendar_app", "users", "add", "bench",
                          "--users", str(users)], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    return out.strip().splitlines()[-1].split(":", 1)[1].strip()


def post(url: str, auth: str, body: dict) -> float:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Authorization": auth, "Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as resp:
        resp.read()
        status = resp.status
    elapsed = time.perf_counter() - t
    if status != 201:
        raise RuntimeError(f"POST answered {status}")
    return elapsed


def bench(size: int, root: Path, port: int, writes: int, warmup: int, git: bool) -> dict:
    content, cache, users = prepare(size, root, git)
    password = add_user(users)
    auth = "Basic " + base64.b64encode(f"bench:{password}".encode()).decode()
    env = {**os.environ, "CALENDAR_CONTENT": str(content), "CALENDAR_CACHE": str(cache),
           "CALENDAR_USERS": str(users), "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "-w", "2", "-b", f"127.0.0.1:{port}",
         "--log-level", "warning", "calendar_app.http.wsgi:app"], cwd=REPO, env=env)
    url = f"http://127.0.0.1:{port}{BASE}/events"
    try:
        for _ in range(1200):
            try:
                urllib.request.urlopen(url, timeout=5).read()
                urllib.request.urlopen(url, timeout=5).read()
                break
            except OSError:
                time.sleep(0.2)
        stamp = time.strftime("%H%M%S")
        times = []
        load_before = loadavg()
        for i in range(warmup + writes):
            day = 1 + i % 28
            body = {"title": f"Write bench {stamp} {i}", "description": "Written by the bench.",
                    "start_date": f"2028-03-{day:02d} 19:00:00",
                    "end_date": f"2028-03-{day:02d} 21:00:00", "status": "publish"}
            elapsed = post(url, auth, body)
            if i >= warmup:
                times.append(elapsed * 1000)
        load_after = loadavg()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    times.sort()
    return {"size": size, "n": len(times), "p50": statistics.median(times),
            "p95": times[int(0.95 * (len(times) - 1))], "max": times[-1],
            "load": f"{load_before} -> {load_after}", "git": git}


def main() -> None:
    global REPO
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--root", type=Path, default=Path("/tmp/bench-writes"))
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-git", dest="git", action="store_false",
                        help="a content tree without git (no commit per write)")
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="the checkout whose code is measured (default: this one)")
    args = parser.parse_args()
    REPO = args.repo.resolve()
    args.root.mkdir(parents=True, exist_ok=True)
    print("| events | git | writes | p50 (ms) | p95 (ms) | max (ms) | load before -> after |")
    print("|---|---|---|---|---|---|---|")
    for size in args.sizes:
        r = bench(size, args.root, args.port, args.writes, args.warmup, args.git)
        print(f"| {r['size']:,} | {'yes' if r['git'] else 'no'} | {r['n']} | {r['p50']:.1f} | "
              f"{r['p95']:.1f} | {r['max']:.1f} | {r['load']} |", flush=True)


if __name__ == "__main__":
    main()
