"""A new builder with and without compiled templates kept (Options.compiled_templates).

    python bench/compiled_templates_bench.py [--rounds 4] [--content content]

Each round builds the calendar twice in this process, into new output and cache
folders (a cold build but for the templates), in one process (`workers = 1`): once
with an empty folder of compiled templates, once with the folder a first build
filled; the two take turns. Prints the process time of each (a figure that survives
a loaded machine better than wall-clock time) and their medians; first, the time to
load every template into a new environment, compiled or from the folder.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calendar_app.site import Builder, Options
from calendar_app.site.render import make_environment

NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)


def one_build(content: Path, root: Path, compiled: Path) -> tuple[float, int]:
    started = time.process_time()
    builder = Builder(Options(content=content, out=root / "out", cache_dir=root / "cache",
                              now=NOW, progress=False, compiled_templates=compiled))
    builder.workers = 1
    try:
        report = builder.build()
    finally:
        builder.close()
    return time.process_time() - started, len(report.written)


def load_all(compiled: Path) -> float:
    """Process time to load every template (not the static files) into a new environment."""
    started = time.process_time()
    env = make_environment(None, compiled)
    for name in env.list_templates():
        if not name.startswith("static/"):
            env.get_template(name)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--content", type=Path,
                        default=Path(__file__).resolve().parent.parent / "content")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="compiled-bench-"))
    try:
        warm = scratch / "warm-templates"
        for n in range(args.rounds):
            print(f"load every template: compiled {load_all(scratch / f'load-{n}'):.3f} s CPU,"
                  f" from the folder {load_all(scratch / 'load-0'):.3f} s CPU")
        one_build(args.content, scratch / "first", warm)  # fills `warm`; imports
        times: dict[str, list[float]] = {"compiled each build": [], "compiled kept": []}
        for n in range(args.rounds):
            for label, folder in (("compiled each build", scratch / f"empty-{n}"),
                                  ("compiled kept", warm)):
                seconds, written = one_build(args.content, scratch / f"{label}-{n}", folder)
                times[label].append(seconds)
                print(f"round {n} {label}: {seconds:.3f} s CPU, {written} outputs")
        for label, found in times.items():
            print(f"median {label}: {statistics.median(found):.3f} s CPU")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
