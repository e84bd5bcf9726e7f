"""cProfile of a full build in one process, by part (issue 26).

    python bench/build_profile.py CONTENT [--warm] [--top 40]

Builds CONTENT into a new temporary folder with `workers = 1` (a forked worker's
time would be missing from the profile) and fresh caches unless --warm (then the
caches of the previous run of this script are kept), and prints the functions with
the most cumulative time. Content: `bench/build_bench.py`'s generator, e.g.
`python -c "import bench.build_bench as b, pathlib; b.generate(pathlib.Path('g'), 10000)"`.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    from calendar_app.site import Builder, Options

    cache = Path(tempfile.gettempdir()) / "build-profile-cache"
    if not args.warm:
        shutil.rmtree(cache, ignore_errors=True)
    out = Path(tempfile.mkdtemp(prefix="build-profile-"))
    profile = cProfile.Profile()
    started = time.process_time()
    profile.enable()
    builder = Builder(Options(content=args.content, out=out / "site", cache_dir=cache,
                              base_url="https://example.org/", progress=False))
    builder.workers = 1
    report = builder.build()
    builder.close()
    profile.disable()
    print(f"process time {time.process_time() - started:.1f} s; {report.summary()}")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
