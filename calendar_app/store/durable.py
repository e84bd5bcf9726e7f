"""Group commit of durability: interface writes made durable together, after the
write lock, instead of each flushing its files one by one under it.

Under the write lock a write only writes: its intent, its files renamed into place,
its commit (libgit2 writes git's objects, index and refs and never flushes them). It
notes when it was done (the monotonic clock, shared by every process of the machine).
Once it let go of the lock, it waits for a sync of the file systems it wrote to
(`syncfs`) that *started after* that moment: one such sync covers every write finished
before it began, in every thread and worker process of the clone, git's objects and
refs included. One sync at a time (a file lock); whoever comes next finds the mark the
last one left (when it started, with the boot it belongs to: the clock starts again at
a reboot) and returns at once when it is covered, or syncs for everyone who came
meanwhile. A push syncs the same way before it sends anything (`sync_now`), so the
writers of a push group need no sync of their own.

A write is answered only once covered: a 201 still means durable, now with git's
objects too, which were never flushed before. Measured (bench/RESULTS.md, pushfast5):
one flush of a small file and its folder costs ~8 ms on this disk, a syncfs ~7 ms
whatever the group's size, against 4-6 flushes per write before. What a power cut
before the sync can leave is a write not yet answered: rolled forward from its intent
when that reached the disk, else possibly left out or its new file empty (git's
objects could always be); nothing answered.

Where the C library has no `syncfs` (not Linux) nothing is deferred: each write
flushes its files under the lock as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from . import bulkwrite
from .atomic import replace_text

MARK_FILE = "synced.json"
LOCK_FILE = "sync.lock"


@functools.cache
def available() -> bool:
    """Whether writes can be synced in groups here (the C library has syncfs)."""
    try:
        return hasattr(ctypes.CDLL(None), "syncfs")
    except OSError:
        return False


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


def _boot() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class GroupSync:
    """The sync lock and mark of one content tree (in its lock's folder); `folders()`
    gives the folders whose file systems hold what a write writes."""

    def __init__(self, state_dir: Path, folders: Callable[[], Iterable[Path]]) -> None:
        self.mark_path = Path(state_dir) / MARK_FILE
        self.lock_path = Path(state_dir) / LOCK_FILE
        self.folders = folders
        self._boot = _boot()
        self._lock = threading.Lock()
        self._synced = 0  # this process's latest known mark (a start time, ns)
        self.syncs = 0  # syncs this process made (tests, benchmarks)

    def covered(self, written: int) -> bool:
        """Whether a sync that started after `written` (monotonic ns) has finished."""
        if self._synced >= written:
            return True
        self._synced = max(self._synced, self._read_mark())
        return self._synced >= written

    def wait(self, written: int) -> None:
        """Return once what was written by `written` is durable: covered by a finished
        sync, else by one made now for everyone written so far."""
        if written <= 0 or not available() or self.covered(written):
            return
        with self._locked():
            if not self.covered(written):
                self._sync()

    def sync_now(self) -> None:
        """Make durable everything written so far (before a push)."""
        self.wait(time.monotonic_ns())

    def _sync(self) -> None:
        started = time.monotonic_ns()
        devices = {}
        for folder in self.folders():
            with contextlib.suppress(OSError):
                devices.setdefault(os.stat(folder).st_dev, folder)
        if not all(bulkwrite.syncfs(folder) for folder in devices.values()):
            os.sync()  # syncfs refused (a file system without it): everything then
        self.syncs += 1
        self._synced = max(self._synced, started)
        if self._read_mark() < started:
            replace_text(self.mark_path, json.dumps({"boot": self._boot, "started": started}))

    def _read_mark(self) -> int:
        try:
            mark = json.loads(self.mark_path.read_text())
            return int(mark["started"]) if mark.get("boot") == self._boot else 0
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return 0

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One sync at a time: the threads of this process, then flock among processes
        (the next one usually finds itself covered and does not sync again)."""
        with self._lock:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.lock_path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)
