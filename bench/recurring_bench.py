"""Lists of recurring events against lists of as many single events, in-process.

    python bench/recurring_bench.py [--root /tmp/bench-recurring] [--series 1000]
                                    [--count 100] [--per-kind 100] [--seed 7]

Generates (bench/gen_calendar.py) a calendar of `series * count` single events and one
of `series` events, each made weekly with `COUNT=count` (so both list the same number
of events, spread over the same years), opens each in the real app (Flask test client,
"now" fixed at 2030-01-01 so the two-year horizon holds every occurrence), and sends
the same stream of distinct list questions as bench/uncached_bench.py (search, date
window, category + window, all three), none twice, so no list answer is a cache hit.
Prints p50/p95 per kind, the time to build the event columns, and the ratio. Run by
hand, never by CI.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
from uncached_bench import KINDS, Stream, percentile

from calendar_app.http.app import create_app

NOW = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


def prepare(root: Path, series: int, count: int) -> tuple[Path, Path]:
    singles, weekly = root / f"singles-{series * count}", root / f"weekly-{series}x{count}"
    for dest, n in ((singles, series * count), (weekly, series)):
        if not dest.exists():
            subprocess.run([sys.executable, str(REPO / "bench" / "gen_calendar.py"), str(n),
                            str(dest)], check=True)
    marker = weekly / ".made-weekly"
    if not marker.exists():
        for path in (weekly / "events").rglob("*.yaml"):
            with path.open("a") as fh:
                fh.write(f"recurrence:\n  rrule: FREQ=WEEKLY;COUNT={count}\n")
        marker.write_text("")
    return singles, weekly


def run(content: Path, cache: Path, per_kind: int, seed: int, size: int) -> dict:
    # The text index built beforehand, as in uncached_bench: searches then use it.
    subprocess.run([sys.executable, "-m", "calendar_app", "reindex", "--content", str(content),
                    "--cache-dir", str(cache)], cwd=REPO, check=True, capture_output=True)
    app = create_app({"CONTENT_DIR": str(content), "CACHE_DIR": str(cache), "NOW": NOW,
                      "USERS_FILE": str(cache / "users.yaml")})
    client = app.test_client()
    t = time.perf_counter()
    first = client.get("/wp-json/tribe/events/v1/events")
    first_ms = (time.perf_counter() - t) * 1000
    assert first.status_code == 200, first.get_data(as_text=True)[:300]
    stream = Stream(size, seed)
    for kind in KINDS:  # warm: the text index snapshot, Markdown of first items
        for _ in range(5):
            client.get(stream.query(kind))
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    for _ in range(per_kind):
        for kind in KINDS:
            url = stream.query(kind)
            t = time.perf_counter()
            response = client.get(url)
            times[kind].append((time.perf_counter() - t) * 1000)
            assert response.status_code in (200, 404), (url, response.status_code)
    total = client.get("/wp-json/tribe/events/v1/events?start_date=2000-01-01&"
                       "end_date=2040-01-01").headers["X-WP-Total"]
    return {"first_ms": first_ms, "times": times, "listed": int(total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/bench-recurring"))
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--per-kind", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    singles, weekly = prepare(args.root, args.series, args.count)
    size = args.series * args.count
    results = {}
    for name, content in (("single events", singles), ("weekly series", weekly)):
        cache = args.root / f"cache-{content.name}"
        cache.mkdir(parents=True, exist_ok=True)
        results[name] = run(content, cache, args.per_kind, args.seed, size)
    print("| calendar | listed | first GET /events (ms) | "
          + " | ".join(f"{k} p50 / p95 (ms)" for k in KINDS) + " |")
    print("|---|---|---|" + "---|" * len(KINDS))
    for name, r in results.items():
        cells = [f"{statistics.median(r['times'][k]):.1f} / {percentile(r['times'][k], 95):.1f}"
                 for k in KINDS]
        print(f"| {name} | {r['listed']:,} | {r['first_ms']:.0f} | " + " | ".join(cells) + " |")
    a, b = results["single events"]["times"], results["weekly series"]["times"]
    print("\nratio of p50s (weekly / single): " + ", ".join(
        f"{k} {statistics.median(b[k]) / statistics.median(a[k]):.2f}" for k in KINDS))


if __name__ == "__main__":
    main()
