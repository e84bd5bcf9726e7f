"""The calendar, wired: content tree, catalog, index, users, rules and followers, for
one content folder. Plain Python: the Flask app (`app.create_app`), the builder and
the command line all open one with `open_calendar`."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import clock as clocks
from . import firstseen
from .catalog import Catalog
from .content import ContentTree, GitError
from .idlease import DEFAULT_BLOCK, LEASE_TIMEOUT, IdLeases
from .index import CalendarIndex
from .service import Service
from .starter import (
    BUNDLED_CONTENT,  # noqa: F401  (the sample: importers find it here)
    StarterError,
    serving_content,
)
from .sync import RemoteSync, SyncSettings, prepare_clone
from .users import UserStore
from .watcher import Journal, Watcher, follow_catalog

log = logging.getLogger(__name__)
DEFAULT_BASE_PATH = "/wp-json/tribe/events/v1"


def default_users_file() -> Path:
    if os.environ.get("CALENDAR_USERS"):
        return Path(os.environ["CALENDAR_USERS"])
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "calendar-app" / "users.yaml"


def default_cache_dir(content: Path) -> Path:
    """Outside the content tree (so the watcher never sees it), one per tree."""
    content = content.resolve()
    digest = hashlib.sha1(str(content).encode()).hexdigest()[:10]
    return content.parent / ".calendar-cache" / f"{content.name}-{digest}"


@dataclass
class Calendar:
    tree: ContentTree
    catalog: Catalog
    users: UserStore
    service: Service
    clock: clocks.Clock
    cache_dir: Path
    index: CalendarIndex
    journal: Journal
    watch: bool = False  # follow the tree with watchdog once serving
    watcher: Watcher | None = None
    remote_sync: RemoteSync | None = None  # when serving a clone of a shared remote
    _pid: int = 0
    _start_lock: threading.Lock = field(default_factory=threading.Lock)
    loaded_in: int = field(default_factory=os.getpid)  # the process that loaded it

    def ensure_started(self) -> None:
        """Background threads run in the serving process: after a gunicorn fork the
        parent's threads are gone, so (re)start them on the first request."""
        if self._pid == os.getpid():
            return
        with self._start_lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self.index.start()
            if self.watch:
                self.watcher = follow_catalog(self.catalog)
                self.watcher.start()
                # Anything that changed between loading and watching.
                self.catalog.resync()
            if self.remote_sync is not None:
                self.remote_sync.start()

    def after_fork(self) -> None:
        """In a worker forked from the process that loaded the calendar (gunicorn's
        `preload_app`, called from its `post_fork` hook): make what is tied to one
        process this worker's own, then start the background threads now instead of
        on the first request. The loading process never starts them, so no thread of
        ours can hold a lock at the fork; the locks are renewed anyway, cheaply."""
        self._start_lock = threading.Lock()
        self.journal.after_fork()
        self.index.after_fork()
        self.watcher = None  # the loader's, if it had one, does not run here
        self.ensure_started()

    def sync(self) -> None:
        """Per request: pick up writes other worker processes made (one stat)."""
        self.journal.catch_up()

    def close(self) -> None:
        if self.remote_sync is not None:
            self.remote_sync.stop()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.index.stop()
        self._pid = 0


def open_calendar(content: Path, users_file: Path, cache_dir: Path | None = None,
                  now: dt.datetime | None = None, watch: bool = False,
                  index_in_background: bool = True,
                  sync: SyncSettings | None = None,
                  id_block: int = DEFAULT_BLOCK,
                  id_lease_timeout: float = LEASE_TIMEOUT) -> Calendar:
    """`sync`: keep the tree in step with a remote branch (cloned into `content` when
    that folder is empty or missing); new ids then come from blocks leased on that
    remote (`idlease`, `id_block` ids at a time), as other instances may share it; a
    remote silent for `id_lease_timeout` seconds delays the start no longer."""
    remote = prepare_clone(content, sync) if sync else ""
    cache_dir = cache_dir or default_cache_dir(content)
    tree = ContentTree(content, cache_dir / "write.lock")
    try:
        recovered = tree.recover()
    except GitError as exc:
        # Nothing here can prove that no other git process holds the repository's lock,
        # so the operator decides. gunicorn prints a RuntimeError at start as one line.
        raise RuntimeError(f"a write interrupted by a crash cannot be finished in "
                           f"{tree.git_root}: {exc.advice}, then start again ({exc})") from exc
    if recovered:
        log.warning("finished a write interrupted by a crash: %s", recovered.splitlines()[0])
    clock = clocks.fixed(now) if now else clocks.system_now
    catalog = Catalog(tree)
    if sync and tree.git_root is not None:
        catalog.leases = IdLeases(tree.git_root, remote, block_size=id_block, clock=clock,
                                  timeout=id_lease_timeout)
    catalog.load(cache_dir / "catalog.pickle")
    if catalog.leases is not None:
        catalog.leases.ensure_block(catalog.highest_id())
    firstseen.load(tree.root, cache_dir)  # `date` of records whose file gives none
    index = CalendarIndex(catalog, cache_dir, background=index_in_background)
    index.cache_file = cache_dir / "catalog.pickle"
    journal = Journal(cache_dir / "journal", catalog)
    users = UserStore(users_file)
    service = Service(catalog, users, clock)
    remote_sync = None
    if sync:
        remote_sync = RemoteSync(tree, sync, remote, cache_dir, clock)
        # What an integration changed is in the catalog (and announced to the other
        # workers) before the exchange lets go of the write lock.
        remote_sync.integrated_hooks += [catalog.refresh, journal.announce]
        service.committed.append(remote_sync.on_commit)
    return Calendar(tree, catalog, users, service, clock, cache_dir, index, journal, watch,
                    remote_sync=remote_sync)


def command_tree(content: Path | None, cache_dir: str | None) -> tuple[Path, Path]:
    """(content, cache folder) a maintenance command works on: the calendar `serve`
    would serve; exits with the reason when that is the sample inside the code."""
    try:
        content, _made = serving_content(content)
    except StarterError as exc:
        raise SystemExit(f"error: {exc}") from None
    return content, Path(cache_dir) if cache_dir else default_cache_dir(content)
