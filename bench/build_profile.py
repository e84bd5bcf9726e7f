"""Where a full build's time goes, by kind of page and by part (issue 26).

    python bench/build_profile.py CONTENT [--warm] [--top 40] [--kinds-only]

Builds CONTENT into a new temporary folder with `workers = 1` (a forked worker's
time would be missing from the profile) and fresh caches unless --warm (then the
caches of the previous run of this script are kept). Prints:

- CPU time and count of outputs by kind of page (event pages, day/month/week/list
  views, venue/organizer/term pages, JSON snapshots, feeds, embeds, ...), rendering
  and writing included, and the planning before them;
- with cProfile (not with --kinds-only, whose times are free of the profiler's
  overhead): the shares of template rendering, Babel formatting, Markdown, JSON-LD,
  JSON, iCalendar, hashing and writing (cumulative time of their entry points, which
  may nest), then the functions with the most cumulative time.

Content: `bench/build_bench.py`'s generator, e.g.
`python -c "import bench.build_bench as b, pathlib; b.generate(pathlib.Path('g'), 10000)"`.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import pstats
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Entry points of each part: (file name fragment, function name); cumulative time.
PARTS = {
    "templates (Jinja render)": [("jinja2/environment.py", "render")],
    "template loading/compiling": [("jinja2/environment.py", "get_template"),
                                   ("jinja2/environment.py", "_load_template")],
    "Babel formatting": [("babel/dates.py", "format_datetime"), ("babel/dates.py", "format_date"),
                         ("babel/dates.py", "format_time"), ("babel/dates.py", "format_skeleton"),
                         ("babel/dates.py", "format_interval"), ("babel/numbers.py", "format_decimal"),
                         ("babel/numbers.py", "format_currency")],
    "Babel locale loading": [("babel/core.py", "parse"), ("babel/localedata.py", "load")],
    "Markdown (cached per text)": [("model/markup.py", "render_html")],
    "representation (single reads, pages and JSON)": [("catalog/represent.py", "represent")],
    "HTML to text (calendar links, .ics)": [("site/htmltext.py", "html_to_text")],
    "reading the records (catalog load)": [("catalog/catalog.py", "load")],
    "planning (the full plan)": [("site/builder.py", "_full_plan")],
    "JSON-LD": [("catalog/represent.py", "event_json_ld")],
    "JSON dumps": [("json/__init__.py", "dumps")],
    "iCalendar": [("site/ical.py", "vevent"), ("site/ical.py", "feed")],
    "output hashing (sha256)": [("~", "<built-in method _hashlib.openssl_sha256>")],
    "writing (os.open/write/link)": [("site/writer.py", "write"), ("site/writer.py", "link"),
                                     ("site/outstore.py", "keep")],
    "signatures": [("site/plan.py", "signature")],
}


def label(kind: str, path: str) -> str:
    """A page's kind, from the output's kind and where it goes."""
    if kind != "page":
        part = path.split("/")[0]
        return f"{kind} ({part})" if kind in ("json", "ics", "ics-feed", "asset") else kind
    if path.startswith("embed/"):
        return "embed views"
    if re.match(r"events/\d{4}-\d\d-\d\d/", path):
        return "day views"
    for prefix, name in (("events/week/", "week views"), ("events/photo/", "photo views"),
                         ("events/list/", "list (upcoming) pages"),
                         ("events/past/", "list (past) pages"), ("event/", "event pages"),
                         ("events/month/", "month views"),
                         ("events/category/", "category pages"),
                         ("venue/", "venue pages"), ("organizer/", "organizer pages"),
                         ("category/", "category pages"), ("tag/", "tag pages")):
        if path.startswith(prefix):
            return name
    return "other pages"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--kinds-only", action="store_true",
                        help="no cProfile: CPU time by kind of page only")
    parser.add_argument("--now", default="2026-06-15T12:00:00+00:00",
                        help="the build's clock (the same pages from run to run)")
    args = parser.parse_args()
    from calendar_app.site import Builder, Options

    cache = Path(tempfile.gettempdir()) / f"build-profile-cache-{'k' if args.kinds_only else 'p'}"
    if not args.warm:
        shutil.rmtree(cache, ignore_errors=True)
    out = Path(tempfile.mkdtemp(prefix="build-profile-"))
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    original = Builder._render_one

    def timed_render(self, item):
        begun = time.process_time()
        try:
            return original(self, item)
        finally:
            entry = by_kind[label(item[0].kind, item[0].path)]
            entry[0] += time.process_time() - begun
            entry[1] += 1

    Builder._render_one = timed_render
    profile = cProfile.Profile()
    started = time.process_time()
    if not args.kinds_only:
        profile.enable()
    builder = Builder(Options(content=args.content, out=out / "site", cache_dir=cache,
                              base_url="https://example.org/", progress=False,
                              now=dt.datetime.fromisoformat(args.now)))
    builder.workers = 1
    report = builder.build()
    builder.close()
    profile.disable()
    total = time.process_time() - started
    print(f"process time {total:.1f} s; {report.summary()}")
    rendered = sum(t for t, _ in by_kind.values())
    print("\n| kind of output | count | CPU s | share |\n|---|---|---|---|")
    print(f"| opening, planning, manifest, caches (rest) | | {total - rendered:.1f} | "
          f"{(total - rendered) / total:.0%} |")
    for name, (seconds, count) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
        print(f"| {name} | {count:,} | {seconds:.1f} | {seconds / total:.0%} |")
    if not args.kinds_only:
        print_parts(pstats.Stats(profile), total)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    shutil.rmtree(out, ignore_errors=True)


def print_parts(stats: pstats.Stats, total: float) -> None:
    """Cumulative time of each part's entry points (profiled time, so shares are of
    the profiled total, where the profiler's overhead swells the many small calls)."""
    profiled = stats.total_tt  # type: ignore[attr-defined]
    print(f"\n| part (cProfile, cumulative) | s | share of {profiled:.0f} s profiled |\n|---|---|---|")
    for part, points in PARTS.items():
        cumulative = 0.0
        for (filename, _line, function), (_cc, _nc, _tt, ct, _callers) in \
                stats.stats.items():  # type: ignore[attr-defined]
            if any(fragment in filename and function == name
                   for fragment, name in points):
                cumulative += ct
        print(f"| {part} | {cumulative:.1f} | {cumulative / profiled:.0%} |")


if __name__ == "__main__":
    main()
