"""Following the content tree: file-system events (editors, git pull, git checkout) and
writes made by other worker processes.

- `Watcher`: a watchdog observer on the content root. Events are collected into a set
  of relative paths and handed to `Catalog.refresh` as one batch once the tree has been
  quiet for `quiet` seconds (at most `max_delay` after the first event), so a checkout
  touching thousands of files is one re-read, one catalog version and one index commit.
  Directory moves/deletions cannot be mapped to files cheaply, so they trigger a
  `Catalog.resync` (a stat scan that only re-reads what changed).
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
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from .catalog import Catalog

log = logging.getLogger(__name__)


class Journal:
    """Append-only list of paths written through the interface, shared by processes."""

    def __init__(self, path: Path, catalog: Catalog) -> None:
        self.path = path
        self.catalog = catalog
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        self._offset = path.stat().st_size  # the catalog just read the tree: up to date
        self._lock = threading.Lock()
        # Who wrote a line: per catalog, not per pid (two apps may share a process).
        self._me = f"{os.getpid()}-{secrets.token_hex(4)}"
        catalog.listeners.append(self._on_change)
        catalog.tree.lock_hooks.append(self.catch_up)

    def _on_change(self, relpaths: set[str], origin: str) -> None:
        if origin != "write":
            return  # changes read from disk are seen by every process's own watcher
        lines = "".join(f"{self._me} {p}\n" for p in sorted(relpaths) if "\n" not in p)
        # O_APPEND: small appends from several processes do not interleave.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, lines.encode())
        finally:
            os.close(fd)

    def catch_up(self) -> bool:
        """Re-read what other processes wrote since the last call; True if anything."""
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return False
        if size == self._offset:
            return False
        with self._lock:
            if size < self._offset:  # truncated or replaced: start over
                self._offset = 0
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read(size - self._offset)
            complete = data.rfind(b"\n") + 1  # a half-written last line waits
            self._offset += complete
        paths = set()
        for line in data[:complete].decode("utf-8", "replace").splitlines():
            writer, _, relpath = line.partition(" ")
            if writer != self._me and relpath:
                paths.add(relpath)
        return bool(paths) and self.catalog.refresh(paths)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        self.watcher.notice([os.fsdecode(p) for p in paths if p],
                            bool(event.is_directory) and event.event_type != "modified")


class Watcher:
    def __init__(self, catalog: Catalog, quiet: float = 0.05, max_delay: float = 0.4) -> None:
        self.catalog = catalog
        self.root = str(catalog.tree.root)
        self.quiet = quiet
        self.max_delay = max_delay
        self._paths: set[str] = set()
        self._resync = False
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._stop = False
        self._observer: Observer | None = None
        self._thread: threading.Thread | None = None
        self.batches = 0  # how many batches were applied (tests, bench)

    def notice(self, abspaths: list[str], directory: bool) -> None:
        rels = []
        for p in abspaths:
            rel = os.path.relpath(p, self.root)
            if rel.startswith("..") or "/." in f"/{rel}":
                continue  # outside the tree, or hidden (temp files of atomic writes)
            rels.append(rel.replace(os.sep, "/"))
        if not rels:
            return
        with self._cond:
            now = time.monotonic()
            if not self._paths and not self._resync:
                self._first = now
            self._last = now
            if directory:
                self._resync = True
            self._paths.update(rels)
            self._cond.notify()

    def start(self) -> None:
        if self._observer is not None:
            return
        self._stop = False
        self._observer = Observer()
        self._observer.schedule(_Handler(self), self.root, recursive=True)
        self._observer.daemon = True
        self._observer.start()
        self._thread = threading.Thread(target=self._run, name="calendar-watcher",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stop and not self._paths and not self._resync:
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
                paths, resync = self._paths, self._resync
                self._paths, self._resync = set(), False
            try:
                if resync:
                    self.catalog.resync()
                # Also the named files: an edit that keeps size and mtime_ns identical
                # (same second on a coarse file system) is still re-read.
                self.catalog.refresh(paths)
                self.batches += 1
            except Exception:
                log.exception("re-reading changed files failed")

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
