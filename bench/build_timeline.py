"""Is every core busy during a build? CPU of the builder and of its workers over time.

    python bench/build_timeline.py CONTENT OUT [--every 0.5] [--cold] [BUILD ARGS, e.g. --base-url URL]

Runs `build.py --content CONTENT --out OUT` (with `--cold`, its cache folder is
removed first) and reads `/proc` every `--every` seconds: the CPU seconds (user +
system) of the builder and of each process it forked (the record parsers, the render
worker, the feeds' worker). Prints one line per second of the build, then the
summary: wall time, CPU of each process, and the seconds of the build during which
only the builder was at work (its serial parts: loading, planning, the tail), with
the CPU it used then. On a busy machine CPU seconds per wall second fall for all;
the serial seconds and their CPU are the figures to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def sample(root: int) -> dict[int, float]:
    """CPU seconds of the builder and its descendants, now."""
    seen: dict[int, float] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        found = cpu_seconds(pid)
        if found is not None:
            seen[pid] = found
            todo += children(pid)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--cold", action="store_true", help="no caches of an earlier build")
    args, extra = parser.parse_known_args()  # the rest is for build.py
    if args.cold:
        from calendar_app.store.locations import default_cache_dir

        shutil.rmtree(default_cache_dir(args.content), ignore_errors=True)
        shutil.rmtree(args.out, ignore_errors=True)
    command = [sys.executable, str(REPO / "build.py"), "--content", str(args.content),
               "--out", str(args.out), *extra]
    started = time.perf_counter()
    build = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL)
    rows: list[tuple[float, dict[int, float]]] = []
    while build.poll() is None:
        rows.append((time.perf_counter() - started, sample(build.pid)))
        time.sleep(args.every)
    wall = time.perf_counter() - started
    report(rows, build.pid, wall, args.every)
    sys.exit(build.returncode)


def report(rows: list[tuple[float, dict[int, float]]], root: int, wall: float,
           every: float) -> None:
    last: dict[int, float] = {}
    alone_s = alone_cpu = 0.0
    step = max(1, round(1 / every))
    print("| s | builder CPU s | workers (pid: CPU s) |\n|---|---|---|")
    previous: dict[int, float] = {}
    for n, (at, seen) in enumerate(rows):
        last.update(seen)
        workers = {pid: cpu for pid, cpu in seen.items() if pid != root}
        # Alone: no worker alive through the interval, the builder busy in it.
        if n and not workers and not any(p != root for p in previous):
            spent = seen.get(root, 0.0) - previous.get(root, 0.0)
            if spent > 0:
                alone_s += at - rows[n - 1][0]
                alone_cpu += spent
        previous = seen
        if n % step == 0:
            shown = " ".join(f"{pid}: {cpu:.1f}" for pid, cpu in workers.items())
            print(f"| {at:.1f} | {seen.get(root, 0.0):.1f} | {shown} |")
    total = sum(last.values())
    print(f"\nwall {wall:.1f} s; CPU {total:.1f} s (builder {last.get(root, 0.0):.1f} s, "
          f"workers {total - last.get(root, 0.0):.1f} s); builder alone "
          f"{alone_s:.1f} s of the wall, using {alone_cpu:.1f} s of CPU; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
