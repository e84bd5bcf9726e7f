"""Import speed (issue 23, item 9).

    python bench/import_bench.py [--events 10000] [--feed 5000] [--keep DIR]

1. A calendar of `--events` events (bench/gen_calendar.py) served by our own server over
   HTTP on loopback (werkzeug, threaded; in a process of its own as a real site is, or
   with `--server thread` in the importing process, sharing its interpreter lock),
   imported into an empty tree with `import tec`'s code: reading every page, then one
   commit. Goal: under 60 s. CPU seconds of the importing process are shown beside the
   wall-clock ones: they hold up on a loaded machine.
2. A source of `--feed` events (a CSV file, kind csv) run once, then run again unchanged
   on its schedule: goal under 5 s and no commit. The file gives no ETag, so the whole
   feed is read, parsed and compared; an HTTP source answering 304 is cheaper still.
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
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


def _server(source: Path, root: Path, ports: multiprocessing.Queue | None = None):
    from werkzeug.serving import make_server

    app = create_app({"CONTENT_DIR": str(source), "USERS_FILE": str(root / "users.yaml"),
                      "CACHE_DIR": str(root / "c-source"), "NOW": NOW, "TESTING": True,
                      "SOURCES_TICK": 0})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    if ports is None:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
    ports.put(server.server_port)
    server.serve_forever()
    return None


def bench_tec(root: Path, events: int, mode: str) -> None:
    source = root / "source"
    generate(events, source)
    git_tree(source)
    if mode == "thread":
        server = _server(source, root)
        port, stop = server.server_port, server.shutdown
    else:
        context = multiprocessing.get_context("fork")
        ports = context.Queue()
        child = context.Process(target=_server, args=(source, root, ports), daemon=True)
        child.start()
        port, stop = ports.get(timeout=600), child.terminate
    dest = empty(root / "dest")
    calendar = open_calendar(dest, root / "users.yaml", root / "c-dest", now=NOW,
                             index_in_background=True)
    started, cpu = time.perf_counter(), time.process_time()
    batch = read_tec(f"http://127.0.0.1:{port}/")
    read, read_cpu = time.perf_counter() - started, time.process_time() - cpu
    outcome = apply_batch(calendar.service, batch, Options(batch.origin), None)
    total, total_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"import tec (server in a {mode}): {len(batch.records)} records ({events} events) "
          f"read in {read:.1f} s ({read_cpu:.1f} s CPU), applied as one commit in "
          f"{total - read:.1f} s ({total_cpu - read_cpu:.1f} s CPU): {total:.1f} s in all "
          f"({outcome.summary()})")
    again_started, cpu = time.perf_counter(), time.process_time()
    again = apply_batch(calendar.service, read_tec(f"http://127.0.0.1:{port}/"),
                        Options(batch.origin, fingerprints=outcome.fingerprints), None)
    print(f"  again, unchanged: {time.perf_counter() - again_started:.1f} s "
          f"({time.process_time() - cpu:.1f} s CPU), commit: {again.committed}")
    calendar.close()
    stop()


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
    started, cpu = time.perf_counter(), time.process_time()
    second = run_source(calendar, source_def)
    took, took_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"source, unchanged feed of {events} events: {took:.2f} s ({took_cpu:.2f} s CPU), "
          f"commit: {commits(dest) != before} ({second.summary()}, "
          f"{second.unchanged} unchanged)")
    calendar.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--feed", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, help="work here and keep the trees")
    parser.add_argument("--only", choices=("tec", "feed"), help="run one of the two")
    parser.add_argument("--server", choices=("process", "thread"), default="process",
                        help="where the served site runs (default: a process of its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        print(f"load: {os.getloadavg()[0]:.2f}")
        if args.only != "feed":
            bench_tec(root, args.events, args.server)
        if args.only != "tec":
            bench_feed(root, args.feed)
        print(f"load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
