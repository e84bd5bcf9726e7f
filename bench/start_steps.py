"""Memory and CPU of one process at each start step and on its first list requests.

    python bench/start_steps.py CONTENT CACHE [--warm] [--trace]

Loads the calendar as a server does (`create_app`, no background threads), then sends
five distinct requests of each kind of `uncached_bench.py` through Flask's test client,
printing VmRSS/VmHWM after each step and each request's CPU time. `--warm` first runs
`Calendar.warm` (what a preloaded gunicorn master does before forking), so the figures
say what a worker still makes on its own; `--trace` prints tracemalloc's top growth per
kind. CACHE should hold a catalog cache (a copy: the run may write to it).
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from uncached_bench import Stream


def rss(label: str) -> None:
    fields = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) // 1024
    print(f"{label:40s} RSS {fields['VmRSS']:6d} MiB  HWM {fields['VmHWM']:6d} MiB  "
          f"cpu {time.process_time():.1f} s", flush=True)


def main() -> None:
    content, cache = Path(sys.argv[1]), Path(sys.argv[2])
    rss("start")
    from calendar_app.http.app import create_app

    rss("imports")
    users = cache / "users.yaml"
    if not users.exists():
        users.write_text("{}\n")
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(users),
                      "CACHE_DIR": str(cache), "INDEX_IN_BACKGROUND": False,
                      "WATCH": False})
    rss("create_app (catalog + postings)")
    if "--warm" in sys.argv:
        t = time.process_time()
        app.extensions["calendar"].warm()
        rss(f"warm ({time.process_time() - t:.2f} s cpu)")
    stream = Stream(100000, 7)
    client = app.test_client()
    trace = "--trace" in sys.argv
    for kind in ("window", "search", "cat", "all"):
        if trace:
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
        for _ in range(5):
            url = stream.query(kind)
            t = time.process_time()
            status = client.get(url).status_code
            print(f"  {kind} {status} {(time.process_time() - t) * 1000:.1f} ms cpu {url[:80]}")
        rss(f"after 5 {kind}")
        if trace:
            for stat in tracemalloc.take_snapshot().compare_to(before, "lineno")[:8]:
                print("    ", stat)
            tracemalloc.stop()


if __name__ == "__main__":
    main()
