"""The live site's builder in a process of its own, for gunicorn (`gunicorn_conf.py`).

Built in a thread of a serving worker (`live.py`), the site cost that worker a second
catalog (+700 MiB at 100,000 events, over 1 GiB in all) and the GIL against its
requests. Here the gunicorn master starts one builder process before it forks the
workers; the builder holds `site.lock`, so every worker's `LiveSite` only waits for
the lock and serves the folder. If the builder dies the lock is freed and a worker
takes over, as when a building worker dies (the master does not restart it: gunicorn
has no hook for children that are not workers, and the takeover already exists).

A spawned interpreter, not a fork of the master: the master holds the served catalog
(which the builder does not use: it reads its own) and may run threads, and a fork of
a threaded process can inherit a held lock. The builder follows the tree with the
same file watcher as `build --watch`: the workers' writes and edits by hand both land
in the tree. It dies with the master (PR_SET_PDEATHSIG, and `stop` on the master's
exit); gunicorn's master reaps it with its workers (`waitpid(-1)`).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import fcntl
import logging
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

READY = b"locked\n"  # the builder's first line: it holds site.lock
START_TIMEOUT = 60.0  # seconds the master waits for that line (imports, under load)
STOP_TIMEOUT = 5.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def start(content: Path, cache_dir: Path, base_url: str | None,
          now: dt.datetime | None) -> subprocess.Popen | None:
    """Start the builder and wait until it holds `site.lock` (so no worker forked after
    this builds). None if it could not take the lock in time: the workers build then."""
    cmd = [sys.executable, "-m", __name__, str(content), str(cache_dir), base_url or "",
           now.isoformat() if now else "", str(os.getpid())]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else b""
    proc.stdout.close()
    if line != READY:
        log.warning("site builder %d did not take the site lock; the workers build", proc.pid)
        stop(proc)
        return None
    return proc


def stop(proc: subprocess.Popen) -> None:
    """End the builder: SIGTERM (its default action: the writer's files are replaced
    whole, so a build cut short leaves the last good site), SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main(argv: list[str]) -> int:
    content, cache_dir, base_url, now, parent = argv
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(parent):  # the master was gone before the line above
        return 0
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    from .live import LOCK_FILE

    lock = open(cache / LOCK_FILE, "a+")  # noqa: SIM115  (held for the process's life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another builder (an older server on this cache) has it
    os.write(1, READY)
    os.dup2(2, 1)  # the master stops reading: what watch() prints goes to the log
    logging.basicConfig(level=logging.INFO, format="site builder %(process)d: %(message)s")
    _follow(Path(content), cache, base_url or None,
            dt.datetime.fromisoformat(now) if now else None)
    return 0


def _follow(content: Path, cache: Path, base_url: str | None, now: dt.datetime | None) -> None:
    from .builder import Builder, Options, Report
    from .live import OUT_FOLDER
    from .watch import watch

    def report(result: Report) -> None:
        if result.problems or result.declined:
            log.warning("%s", result.summary())

    builder = Builder(Options(content=content, out=cache / OUT_FOLDER, base_url=base_url,
                              now=now, cache_dir=cache, progress=False, keep_going=True,
                              force=True))
    started = time.monotonic()
    report(builder.build())
    log.info("site built in %.1f s; following %s", time.monotonic() - started, content)
    watch(builder, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
