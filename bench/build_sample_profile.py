"""What one output of each kind costs to render, and where, in one process (issue 26).

    python bench/build_sample_profile.py CONTENT [--every 10] [--top 40] [--no-profile]

Plans the whole site as a cold build does (`now` fixed, so runs render the same
pages), then renders every Nth output in the builder's order (an event's page, `.ics`
and JSON together, as the render processes take them), without writing. Prints the
planning's CPU, the CPU per output by kind (`time.process_time`, without the profiler
unless --profile-kinds) and, under cProfile, the functions by self time and by
cumulative time. A sample keeps the run short: the caches an output shares with
its neighbours (an event's representation) are warm as in a build, the per-build
memos of list items are colder (fewer of each event's pages are rendered).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.build_profile import label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--no-profile", action="store_true", help="CPU by kind only")
    parser.add_argument("--now", default="2026-06-15T12:00:00+00:00")
    args = parser.parse_args()
    from calendar_app.site import Builder, Options
    from calendar_app.site.builder import Report

    scratch = Path(tempfile.mkdtemp(prefix="build-sample-"))
    builder = Builder(Options(content=args.content, out=scratch / "site",
                              cache_dir=scratch / "cache", base_url="https://example.org/",
                              progress=False, now=dt.datetime.fromisoformat(args.now)))
    catalog = builder.reader.catalog
    begun = time.process_time()
    base_url, now = builder.base_url(), builder.reader.clock()
    fingerprints = builder._fingerprints(catalog)
    common = builder._common_digest(catalog, base_url, now)
    builder._sig_inputs = (fingerprints, common)
    outputs = builder._full_plan(catalog, base_url, now, fingerprints, common)
    planned = time.process_time() - begun
    _, todo = builder._outputs_to_render(outputs, True, fingerprints, common, Report())
    signed = time.process_time() - begun - planned
    todo.sort(key=lambda item: item[0].deps[0] if item[0].deps else -1)
    sample = [o for o, _ in todo if o.kind != "ics-feed"][::args.every]
    print(f"{len(outputs):,} outputs planned in {planned:.2f} s CPU, signed in {signed:.2f} s; "
          f"rendering {len(sample):,}")
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    profile = cProfile.Profile()
    if not args.no_profile:
        profile.enable()
    for output in sample:
        start = time.process_time()
        output.render()
        entry = by_kind[label(output.kind, output.path)]
        entry[0] += time.process_time() - start
        entry[1] += 1
    profile.disable()
    total = sum(t for t, _ in by_kind.values())
    print("\n| kind of output | sampled | CPU s | ms each | share |\n|---|---|---|---|---|")
    for name, (seconds, count) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
        print(f"| {name} | {count:,} | {seconds:.2f} | {1000 * seconds / count:.2f} | "
              f"{seconds / total:.0%} |")
    if not args.no_profile:
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    builder.close()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
