"""Text search alone, in one process: distinct search strings against the index.

    python bench/search_bench.py CONTENT CACHE [--count 300] [--seed 7]

CONTENT and CACHE as `uncached_bench.py` prepares them (a generated calendar and its
built index). Opens the calendar without a background indexer, then times
`CalendarIndex.search_events` for `--count` distinct search strings (the kinds of
`uncached_bench.Stream`, plus word middles and ends such as "azz" or "ues", and one-
and two-letter words), each asked once, so the posting cache only helps across
strings as it does in a server. Prints p50/p95/max overall and per kind, and the time
of the first search (the lexicons are read then), wall clock and CPU time (the
process's, which a loaded machine barely changes), and how long opening the calendar
took. Run by hand, never by CI.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from gen_calendar import WORDS
from uncached_bench import Stream, percentile

from calendar_app.wiring import open_calendar


def strings(size: int, count: int, seed: int) -> list[tuple[str, str]]:
    stream = Stream(size, seed)
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < count:
        pick = rng.random()
        if pick < 0.6:
            kind, text = "stream", stream._search()
        elif pick < 0.85:
            word = rng.choice(WORDS)
            start = rng.randint(1, max(1, len(word) - 2))
            kind, text = "middle", word[start:start + rng.randint(2, 4)]
        else:
            kind = "short"
            text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                           for _ in range(rng.randint(1, 2)))
        if text and text not in seen:
            seen.add(text)
            out.append((kind, text))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        users = Path(tmp) / "users.yaml"
        users.write_text("users: []\n")
        opened = time.perf_counter(), time.process_time()
        cal = open_calendar(args.content, users, args.cache, index_in_background=False)
        opened = time.perf_counter() - opened[0], time.process_time() - opened[1]
    view = cal.catalog.view()
    todo = strings(len(view.records), args.count, args.seed)
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for kind, text in todo:
        t, c = time.perf_counter(), time.process_time()
        cal.index.search_events(view, text)
        cpu.setdefault(kind, []).append((time.process_time() - c) * 1000)
        times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    first = next(iter(times.values()))[0]
    every = [v for vs in times.values() for v in vs]
    print(f"{len(view.records)} records, {len(every)} distinct searches, first {first:.1f} ms;"
          f" calendar opened in {opened[0]:.1f} s ({opened[1]:.1f} s CPU)")
    for kind, vs in [("all", every), *times.items()]:
        cs = [v for vs in cpu.values() for v in vs] if kind == "all" else cpu[kind]
        print(f"  {kind:7} n={len(vs):4} p50 {statistics.median(vs):7.2f} ms  "
              f"p95 {percentile(vs, 95):7.2f} ms  max {max(vs):7.1f} ms   CPU p50 "
              f"{statistics.median(cs):.2f} / p95 {percentile(cs, 95):.2f} / max "
              f"{max(cs):.1f} ms")
    cal.index.stop()


if __name__ == "__main__":
    main()
