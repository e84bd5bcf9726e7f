"""Group commit of durability: interface writes flushed together, after the write
lock, instead of each flushing its files one by one under it.

Under the write lock a write only writes: its intent, its files renamed into place,
its commit. It notes what it wrote (the files and their folders). Once it let go of
the lock, and before it waits for its push and is answered, it hands them to
`GroupSync.flush`: the first writer there flushes everything handed in so far, every
writer's of this process, one file after the other; writers arriving meanwhile wait
and go together in the next batch. The files are flushed as they were before (data
and folder entry), fewer times (a folder once per batch), and no other writer waits
behind the lock for a flush. The intent is not flushed: it serves to roll forward a
write cut short, and a write is answered only once its own files are on disk.

Measured (bench/RESULTS.md, pushfast5): flushing a small file and its folder costs
8-12 ms on this disk when busy; `syncfs` of the whole file system ~7-20 ms at the
median but up to a second when other programs have data to write, so it is not used
for single writes. git's objects and refs, written by libgit2, are not flushed (they
never were: neither libgit2 nor git's default `core.fsync` flush loose objects).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from . import bulkwrite


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_files(folders: Iterable[Path], files: list[Path] | None) -> None:
    """Make a write's `files` (None: none to sync one by one) and `folders` durable; many
    files: one syncfs per file system where the platform has it."""
    folders = sorted(set(folders))
    if files is not None:
        devices = {os.stat(folder).st_dev: folder for folder in folders}
        if not all(bulkwrite.syncfs(folder) for folder in devices.values()):
            for path in files:  # no syncfs here: each file after all
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
    for folder in folders:
        fsync_dir(folder)


def fsync_path(path: Path) -> None:
    """Flush one file or folder; one gone meanwhile (a later write removed it) has
    nothing left to flush."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class GroupSync:
    """Writers of one process handing their files in, flushed in batches."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._started = 0  # batches started
        self._done = 0  # batches finished
        self._busy = False
        self.batches = 0  # batches flushed (tests, benchmarks)

    def flush(self, paths: Iterable[Path]) -> None:
        """Return once `paths` are on disk: flushed in the next batch to start, by this
        thread when no batch is running, else by the one that takes them."""
        paths = set(paths)
        if not paths:
            return
        with self._cond:
            self._pending |= paths
            mine = self._started + 1  # the next batch to start takes what is pending
            while self._done < mine:
                if self._busy:
                    self._cond.wait()
                    continue
                self._busy = True
                batch, self._pending = self._pending, set()
                self._started += 1
                number = self._started
                self._cond.release()
                try:
                    for path in sorted(batch, key=lambda p: (len(p.parts), str(p)),
                                       reverse=True):  # files before their folders
                        fsync_path(path)
                finally:
                    self._cond.acquire()
                    self._busy = False
                    self._cond.notify_all()
                self._done = number
                self.batches += 1
