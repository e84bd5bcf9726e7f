"""The site a server serves (`serve`, gunicorn): the pages `build` makes, built into the
cache folder and kept in step with every change of the served calendar.

The server's catalog tells `on_catalog_change` which files changed (subscribed in
`wiring.subscribe_site`); a thread re-reads them into the builder's own catalog and
rebuilds incrementally, as `build --watch` does. The builder keeps a catalog of its
own so that a build, even a long full one, never holds the served catalog's lock (and
so never delays a write). Of several worker processes one builds at a time: the one
holding `site.lock` in the cache folder; the others wait for it (taking over if it
ends) and serve the same folder, whose files are replaced atomically (writer.py).
Changes made by other workers reach the builder through the journal (`catch_up`, a
stat every POLL seconds); edits of the tree by hand through the served catalog's
file watcher. Under gunicorn the master's own builder process (`child.py`) holds the
lock, so the workers only wait and serve. No Flask here: `http/site_files.py` serves the folder.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import manifest
from .builder import Builder, Options, Report

log = logging.getLogger(__name__)

OUT_FOLDER = "site"  # in the cache folder
LOCK_FILE = "site.lock"
POLL = 0.2  # seconds between checks of the journal (other workers' writes)
QUIET = 0.05  # seconds of quiet before a build: one write is often several files
LOCK_POLL = 0.5  # seconds between a waiting process's tries of the builder's lock


class LiveSite:
    def __init__(self, content: Path, cache_dir: Path, base_url: str | None = None,
                 now: dt.datetime | None = None,
                 catch_up: Callable[[], object] | None = None) -> None:
        self.content = Path(content)
        self.cache_dir = Path(cache_dir)
        self.out = self.cache_dir / OUT_FOLDER
        self.base_url = base_url
        self.now = now
        self.catch_up = catch_up
        self.builds = 0  # builds made by this process (tests, bench)
        self.last_report: Report | None = None
        self._pending: set[str] = set()
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._built = threading.Event()  # this process finished a build
        self._thread: threading.Thread | None = None
        self._pid = 0

    # -- what the server asks ---------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Whether there is a site to serve: one build finished, here or in another
        process (then its manifest is written), in this server's life or before."""
        return self._built.is_set() or (self.out / manifest.NAME).exists()

    def on_catalog_change(self, paths: set[str], _origin: str) -> None:
        """A catalog listener: cheap, called with the writer's lock held."""
        with self._changed:
            self._pending |= paths
            self._changed.notify()

    def wait_built(self, timeout: float) -> bool:
        """Until this process has built once (tests)."""
        return self._built.wait(timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Until no change waits to be built (tests, bench)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._pending or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    # -- the building thread ---------------------------------------------------------
    _busy = False

    def start(self) -> None:
        """Start building in the background (again in a forked worker: threads do not
        survive a fork)."""
        import os

        if self._pid == os.getpid() and self._thread is not None:
            return
        self._pid = os.getpid()
        self._changed = threading.Condition()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="live-site", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _run(self) -> None:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / LOCK_FILE, "a+") as lock:
            while not self._stop.is_set():  # one builder among the processes
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    self._forget_pending()  # the builder has them; a new one loads all
                    self._stop.wait(LOCK_POLL)
            else:
                return
            try:
                self._follow()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _forget_pending(self) -> None:
        with self._changed:
            self._pending.clear()

    def _follow(self) -> None:
        self._forget_pending()  # the builder's catalog is read now: nothing is pending
        builder = Builder(Options(content=self.content, out=self.out, base_url=self.base_url,
                                  now=self.now, cache_dir=self.cache_dir, progress=False,
                                  keep_going=True, force=True))
        try:
            self._build(builder)
            self._built.set()
            while not self._stop.is_set():
                paths = self._next_change()
                if paths:
                    builder.reader.catalog.refresh(paths)
                    self._build(builder)
        finally:
            builder.close()
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def _next_change(self) -> set[str]:
        """The files changed since the last build, once a write's files are all in."""
        if self.catch_up is not None:
            try:
                self.catch_up()  # other workers' writes: into the served catalog, then here
            except Exception:  # the journal is the server's; a failure waits for the next
                log.exception("catching up with other workers failed")
        with self._changed:
            if not self._pending:
                self._changed.wait(POLL)
            if not self._pending:
                return set()
            self._busy = True
        self._stop.wait(QUIET)
        with self._changed:
            paths, self._pending = self._pending, set()
        return paths

    def _build(self, builder: Builder) -> None:
        with self._changed:
            self._busy = True
        try:
            report = builder.build()
        except Exception:  # keep serving the last good site; the next change retries
            log.exception("building the site failed")
            report = None
        with self._changed:
            self._busy = False
            self.builds += 1
            self.last_report = report
            self._changed.notify_all()
        if report is not None and (report.problems or report.declined):
            log.warning("site: %s", report.summary())
