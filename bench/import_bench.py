"""Import speed (issue 23, item 9).

    python bench/import_bench.py [--events 10000] [--feed 5000] [--keep DIR]

1. A calendar of `--events` events (bench/gen_calendar.py) served by our own server over
   HTTP on loopback (werkzeug, threaded), imported into an empty tree with
   `import tec`'s code: reading every page, then one commit. Goal: under 60 s.
2. A source of `--feed` events (a CSV file, kind csv) run once, then run again unchanged
   on its schedule: goal under 5 s and no commit. The file gives no ETag, so the whole
   feed is read, parsed and compared; an HTTP source answering 304 is cheaper still.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_calendar import generate

from calendar_app.http.app import create_app
from calendar_app.importing.apply import Options, apply_batch
from calendar_app.importing.csvio import export_csv
from calendar_app.importing.sources import load_source, run_source
from calendar_app.importing.tec import read_tec
from calendar_app.wiring import open_calendar

NOW = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)


def git_tree(path: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.org",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.org"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=path, check=True, env=env)


def commits(path: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=path, check=True,
                              capture_output=True, text=True).stdout)


def empty(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "calendar.yaml").write_text("title: Imported\ntimezone: UTC\n")
    git_tree(path)
    return path


def bench_tec(root: Path, events: int) -> None:
    from werkzeug.serving import make_server

    source = root / "source"
    generate(events, source)
    git_tree(source)
    app = create_app({"CONTENT_DIR": str(source), "USERS_FILE": str(root / "users.yaml"),
                      "CACHE_DIR": str(root / "c-source"), "NOW": NOW, "TESTING": True,
                      "SOURCES_TICK": 0})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dest = empty(root / "dest")
    calendar = open_calendar(dest, root / "users.yaml", root / "c-dest", now=NOW,
                             index_in_background=True)
    started = time.perf_counter()
    batch = read_tec(f"http://127.0.0.1:{server.server_port}/")
    read = time.perf_counter() - started
    outcome = apply_batch(calendar.service, batch, Options(batch.origin), None)
    total = time.perf_counter() - started
    print(f"import tec: {len(batch.records)} records ({events} events) read in {read:.1f} s, "
          f"applied as one commit in {total - read:.1f} s: {total:.1f} s in all "
          f"({outcome.summary()})")
    again_started = time.perf_counter()
    again = apply_batch(calendar.service, read_tec(f"http://127.0.0.1:{server.server_port}/"),
                        Options(batch.origin, fingerprints=outcome.fingerprints), None)
    print(f"  again, unchanged: {time.perf_counter() - again_started:.1f} s, "
          f"commit: {again.committed}")
    calendar.close()
    server.shutdown()


def bench_feed(root: Path, events: int) -> None:
    source = root / f"feed-{events}"
    generate(events, source, seed=2)
    git_tree(source)
    origin = open_calendar(source, root / "users.yaml", root / "c-feed", now=NOW,
                           index_in_background=True)
    names = {c: {r.slug: r.name for r in origin.catalog.all(c)}
             for c in ("venues", "organizers", "categories", "tags")}
    feed = root / "feed.csv"
    feed.write_text(export_csv(origin.catalog.all("events"), "events", names))
    origin.close()
    dest = empty(root / "feed-dest")
    (dest / "sources").mkdir()
    (dest / "sources/bench.yaml").write_text(f"kind: csv\nurl: {feed}\nschedule: 15m\n")
    calendar = open_calendar(dest, root / "users.yaml", root / "c-feed-dest", now=NOW,
                             index_in_background=True)
    source_def = load_source(dest, "bench")
    started = time.perf_counter()
    first = run_source(calendar, source_def)
    print(f"source, first run: {time.perf_counter() - started:.1f} s ({first.summary()})")
    before = commits(dest)
    started = time.perf_counter()
    second = run_source(calendar, source_def)
    took = time.perf_counter() - started
    print(f"source, unchanged feed of {events} events: {took:.2f} s, "
          f"commit: {commits(dest) != before} ({second.summary()}, "
          f"{second.unchanged} unchanged)")
    calendar.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--feed", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, help="work here and keep the trees")
    parser.add_argument("--only", choices=("tec", "feed"), help="run one of the two")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        print(f"load: {os.getloadavg()[0]:.2f}")
        if args.only != "feed":
            bench_tec(root, args.events)
        if args.only != "tec":
            bench_feed(root, args.feed)
        print(f"load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
