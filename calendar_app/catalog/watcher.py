"""Following the content tree: file-system events (editors, git pull, git checkout) and
writes made by other worker processes.

- `Watcher`: a watchdog observer on a folder. Changed files are collected as a set of
  relative paths and handed over as one batch once the folder has been quiet for
  `quiet` seconds (at most `max_delay` after the first event), so a checkout touching
  thousands of files is one re-read, one catalog version and one index commit.
  Directory moves and deletions cannot be mapped to files cheaply: they ask for a
  rescan. The server and the builder's `--watch` use it alike.
- `Journal`: interface writes in one worker must be visible in every other worker on
  the very next request, faster than inotify plus debounce can promise. Each write
  appends its paths to `cache_dir/journal`; every request stats the file (one syscall)
  and re-reads the paths other processes appended since it last looked.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from ..model.resources import RESOURCES
from .catalog import Catalog

log = logging.getLogger(__name__)

# What a calendar's server follows: the record folders (and, watched without its
# subfolders, the root: `calendar.yaml`, record folders made or removed). Never
# `.git/` (every commit would fire events) nor a cache folder kept in the tree.
CONTENT_FOLDERS = tuple(RESOURCES)
# The events asked for: every change, not the reads (opened, closed without writing),
# asked of the OS itself where it can (inotify's mask): each file the catalog, the
# builder or git read in the tree cost two events in each worker's watchdog threads.
_CHANGES = [FileCreatedEvent, DirCreatedEvent, FileModifiedEvent, DirModifiedEvent,
            FileAttribEvent, DirAttribEvent, FileDeletedEvent, DirDeletedEvent,
            FileMovedEvent, DirMovedEvent, FileClosedEvent]

# on_batch(relpaths, rescan): rescan when a directory moved or vanished.
BatchHandler = Callable[[set[str], bool], None]


class Journal:
    """Append-only list of paths written through the interface, shared by processes."""

    def __init__(self, path: Path, catalog: Catalog) -> None:
        self.path = path
        self.catalog = catalog
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        # Where reading goes on, and how far what was read is in the catalog: a
        # request that finds the journal no longer than `_applied` has nothing to
        # wait for; one that finds more waits for the thread already applying it.
        self._offset = self._applied = path.stat().st_size  # the catalog just loaded
        self._lock = threading.Lock()
        # Who wrote a line: per catalog, not per pid (two apps may share a process).
        self._me = f"{os.getpid()}-{secrets.token_hex(4)}"

    def after_fork(self) -> None:
        """In a worker forked from the process that loaded the catalog (gunicorn's
        preload): a name of its own, or every worker would take the others' lines for
        its own and skip them. The offsets stay: the catalog is the one loaded at
        them, and a worker forked later reads everything appended since."""
        self._me = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._lock = threading.Lock()

    def on_catalog_change(self, relpaths: set[str], origin: str) -> None:
        if origin != "write":
            return  # changes read from disk are seen by every process's own watcher
        self.announce(relpaths)

    def announce(self, relpaths: set[str]) -> None:
        """Tell the other processes to re-read these paths at their next request (a
        write, or files a `git pull` of ours changed: faster than their watchers)."""
        lines = "".join(f"{self._me} {p}\n" for p in sorted(relpaths) if "\n" not in p)
        # O_APPEND: small appends from several processes do not interleave.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, lines.encode())
        finally:
            os.close(fd)

    def catch_up(self) -> bool:
        """Re-read what other processes wrote since the last call; True if anything.
        Returns only once those changes are in the catalog's current version."""
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return False
        if size == self._applied:
            return False
        with self._lock:
            if size < self._offset:  # truncated or replaced: start over
                self._offset = 0
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read(max(0, size - self._offset))
            complete = data.rfind(b"\n") + 1  # a half-written last line waits
            paths = set()
            for line in data[:complete].decode("utf-8", "replace").splitlines():
                writer, _, relpath = line.partition(" ")
                if writer != self._me and relpath:
                    paths.add(relpath)
            changed = bool(paths) and self.catalog.refresh(paths)
            self._offset += complete
            self._applied = self._offset
        return changed


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        self.watcher.notice([os.fsdecode(p) for p in paths if p],
                            bool(event.is_directory) and event.event_type != "modified")


class Watcher:
    """Follows `root` (only `folders` under it, when given) and hands changed files'
    relative paths to `on_batch` in debounced batches, from its own thread."""

    def __init__(self, root: Path, on_batch: BatchHandler,
                 folders: Iterable[str] | None = None, quiet: float = 0.05,
                 max_delay: float = 0.4) -> None:
        self.root = str(root)
        self.on_batch = on_batch
        self.folders = tuple(folders) if folders is not None else None
        self.quiet = quiet
        self.max_delay = max_delay
        self._paths: set[str] = set()
        self._rescan = False
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._stop = False
        self._observer: Observer | None = None
        self._watches: dict[str, object] = {}
        self._thread: threading.Thread | None = None
        self.batches = 0  # how many batches were handed over (tests, bench)

    def notice(self, abspaths: list[str], directory: bool) -> None:
        rels = []
        for p in abspaths:
            rel = os.path.relpath(p, self.root)
            if rel.startswith("..") or "/." in f"/{rel}":
                continue  # outside the tree, or hidden (temp files of atomic writes)
            rels.append(rel.replace(os.sep, "/"))
        if not rels:
            return
        if directory and self.folders is not None:
            for rel in rels:
                if rel in self.folders:  # a followed folder made (again): follow it
                    self._follow(rel)
        with self._cond:
            now = time.monotonic()
            if not self._paths and not self._rescan:
                self._first = now
            self._last = now
            if directory:
                self._rescan = True
            self._paths.update(rels)
            self._cond.notify()

    def _follow(self, folder: str) -> None:
        observer = self._observer
        path = os.path.join(self.root, folder)
        if observer is None or not os.path.isdir(path):
            return
        old = self._watches.pop(folder, None)
        if old is not None:
            observer.unschedule(old)
        self._watches[folder] = observer.schedule(_Handler(self), path, recursive=True,
                                                  event_filter=_CHANGES)

    def start(self) -> None:
        if self._observer is not None:
            return
        self._stop = False
        self._observer = Observer()
        self._observer.schedule(_Handler(self), self.root, recursive=self.folders is None,
                                event_filter=_CHANGES)
        self._observer.daemon = True
        self._observer.start()
        for folder in self.folders or ():
            self._follow(folder)
        self._thread = threading.Thread(target=self._run, name="calendar-watcher",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stop and not self._paths and not self._rescan:
                    self._cond.wait()
                if self._stop:
                    return
                # Debounce: wait for quiet, but never longer than max_delay in all.
                while not self._stop:
                    now = time.monotonic()
                    due = min(self._last + self.quiet, self._first + self.max_delay)
                    if now >= due:
                        break
                    self._cond.wait(due - now)
                paths, rescan = self._paths, self._rescan
                self._paths, self._rescan = set(), False
            try:
                self.on_batch(paths, rescan)
                self.batches += 1
            except Exception:
                log.exception("handling changed files failed")

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
            self._watches = {}
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


def follow_catalog(catalog: Catalog) -> Watcher:
    """A watcher that keeps `catalog` in step with its tree."""

    def apply(paths: set[str], rescan: bool) -> None:
        if rescan:
            catalog.resync()
        # Also the named files: an edit that keeps size and mtime_ns identical (same
        # tick on a coarse clock) is still re-read; unchanged bytes are skipped there.
        catalog.refresh(paths)

    return Watcher(catalog.tree.root, apply, CONTENT_FOLDERS)
