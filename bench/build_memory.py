"""Peak memory of a static build: the builder process and each render worker it forks.

    python bench/build_memory.py CONTENT OUT [--cold] [--every 0.5] [--stop-after S]

Runs `build.py --content CONTENT --out OUT` (cold: the calendar's cache folder removed
first, with --cold) and samples /proc/PID/status of the builder and of its children every
`--every` seconds: VmRSS over time, and VmHWM (the kernel's own peak, exact however
seldom sampled) of each process when it was last seen. Prints the wall-clock time,
CPU time of the tree, the builder's peak and the largest worker peak, with the
machine's load before and after. `--stop-after` ends a build that takes longer (the
builder and its workers, by pid) and reports what was reached by then.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def status_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB ({} once it is gone)."""
    found = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":")
                    found[key] = int(value.split()[0])
    except OSError:
        return {}
    return found


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cold", action="store_true",
                        help="remove the calendar's cache folder first (a cold build)")
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--stop-after", type=float, default=None,
                        help="end the build after this many seconds")
    args = parser.parse_args()
    command = [sys.executable, str(REPO / "build.py"), "--content", str(args.content),
               "--out", str(args.out), "--base-url", "https://example.org/"]
    if args.cold:
        sys.path.insert(0, str(REPO))
        from calendar_app.store.locations import default_cache_dir
        shutil.rmtree(default_cache_dir(args.content), ignore_errors=True)
    load_before = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL)
    parent_peak, worker_peaks = 0, {}
    timeline: list[tuple[float, int, int]] = []
    while proc.poll() is None:
        if args.stop_after is not None and time.perf_counter() - started > args.stop_after:
            for pid in (*children(proc.pid), proc.pid):
                os.kill(pid, 9)
            proc.wait()
            print(f"stopped after {args.stop_after:.0f} s, unfinished")
            break
        parent = status_kib(proc.pid)
        parent_peak = max(parent_peak, parent.get("VmHWM", 0))
        rss_workers = 0
        for child in children(proc.pid):
            seen = status_kib(child)
            worker_peaks[child] = max(worker_peaks.get(child, 0), seen.get("VmHWM", 0))
            rss_workers = max(rss_workers, seen.get("VmRSS", 0))
        timeline.append((time.perf_counter() - started, parent.get("VmRSS", 0), rss_workers))
        time.sleep(args.every)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss of the children: the largest of any process of the tree, in KiB.
    print(f"exit {proc.returncode}; {seconds:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s "
          f"CPU (builder and workers); load {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"builder peak RSS {parent_peak / 1024:.0f} MiB; largest worker peak "
          f"{max(worker_peaks.values(), default=0) / 1024:.0f} MiB over {len(worker_peaks)} "
          f"worker(s); largest process of the tree {usage.ru_maxrss / 1024:.0f} MiB")
    step = max(1, len(timeline) // 12)
    for at, rss, workers in timeline[::step]:
        print(f"  {at:7.1f} s  builder {rss / 1024:6.0f} MiB  largest worker {workers / 1024:6.0f} MiB")


if __name__ == "__main__":
    main()
