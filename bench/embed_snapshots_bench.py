"""What the `<calendar-events>` snapshots (site/snapshots.py, one list answer per
category and published venue) cost a build, next to the default list snapshots.

    python bench/embed_snapshots_bench.py N

Generates N events (bench/gen_calendar.py: N/50 venues, 30 categories), loads the
calendar as the builder does, then renders the list snapshots: CPU seconds
(time.process_time) and bytes, the default lists' and the component's apart, and
what planning them costs (the selection that signs each embed list: what every build,
incremental ones too, pays; rendering is paid only for the lists a write changed), the
first time and again over the same catalog version.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_calendar import generate

from calendar_app.site import Builder, Options
from calendar_app.site.snapshots import ListSnapshots

NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(args.n, root / "content")
        builder = Builder(Options(content=root / "content", out=root / "public", now=NOW,
                                  cache_dir=root / "cache", progress=False))
        try:
            start = time.process_time()
            outputs = list(ListSnapshots("https://bench.example.org/").outputs(
                builder.reader, "digest", NOW.isoformat()))
            print(f"{args.n} events, planning the list snapshots (the embed ones signed by "
                  f"their selection): {time.process_time() - start:.2f} s CPU")
            start = time.process_time()
            list(ListSnapshots("https://bench.example.org/").outputs(
                builder.reader, "digest", NOW.isoformat()))
            print(f"{args.n} events, planning them again, the catalog unchanged (a no-op "
                  f"build): {time.process_time() - start:.3f} s CPU")
            for label, chosen in (("default lists", [o for o in outputs
                                                     if "/embed/" not in o.path]),
                                  ("embed lists", [o for o in outputs
                                                   if "/embed/" in o.path and not o.same_as])):
                start = time.process_time()
                size = sum(len(o.render()) for o in chosen)
                spent = time.process_time() - start
                print(f"{args.n} events, {label}: {len(chosen)} files, {size / 1e6:.1f} MB, "
                      f"{spent:.2f} s CPU")
        finally:
            builder.close()


if __name__ == "__main__":
    main()
