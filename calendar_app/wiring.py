"""The calendar, wired: content tree, catalog, index, users, rules and followers, for
one content folder, and every subscription between them (`subscribe`). Plain Python:
the Flask app (`app.create_app`) and the maintenance commands open one with
`open_calendar`; the builder needs none of it (`reader.open_reader`)."""

from __future__ import annotations

import datetime as dt
import gc
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .catalog.catalog import Catalog
from .catalog.index import CalendarIndex
from .catalog.reader import Reader, clock_at, open_tree
from .catalog.watcher import Journal, Watcher, follow_catalog
from .model import clock as clocks
from .service import Service
from .store import firstseen
from .store.content import ContentTree
from .store.locations import default_cache_dir
from .store.users import DEFAULT_HASH_N, UserStore
from .sync.clone import prepare_clone
from .sync.idlease import DEFAULT_BLOCK, LEASE_TIMEOUT, IdLeases
from .sync.settings import SyncSettings
from .sync.sync import RemoteSync

log = logging.getLogger(__name__)


class Follower(Protocol):
    """Something kept in step with the catalog from a thread of the serving process
    (the served site, `site/live.py`)."""

    def on_catalog_change(self, paths: set[str], origin: str) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...


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
    reader: Reader  # what lists read from (catalog, clock, search, read policy)
    watch: bool = False  # follow the tree with watchdog once serving
    watcher: Watcher | None = None
    remote_sync: RemoteSync | None = None  # when serving a clone of a shared remote
    followers: list[Follower] = field(default_factory=list)  # subscribe_follower
    # More threads of the serving process, each with start() and stop(): layers above
    # this one add theirs (the import sources' scheduler, http/app.py).
    background: list = field(default_factory=list)
    _pid: int = 0
    _closed: bool = False  # a closed calendar answers reads but starts no thread again
    _start_lock: threading.Lock = field(default_factory=threading.Lock)
    loaded_in: int = field(default_factory=os.getpid)  # the process that loaded it

    def ensure_started(self) -> None:
        """Background threads run in the serving process: after a gunicorn fork the
        parent's threads are gone, so (re)start them on the first request."""
        if self._pid == os.getpid() or self._closed:
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
            for follower in self.followers:
                follower.start()
            for part in self.background:
                part.start()

    def warm(self) -> None:
        """Make what the first list requests of each process would make (the event
        columns of today, term counts, the known ids of search), then freeze it out of
        the garbage collector's walks. Called in a preloaded server's master before it
        forks (gunicorn_conf.when_ready): the workers share one copy, copy-on-write,
        instead of each building its own (~0.4 GiB and 1.5 s CPU at 100,000 events,
        the tail of their first date windows)."""
        view = self.catalog.current
        self.reader.table(view)
        view.warm()
        self.index.warm(view)
        gc.freeze()

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
        for follower in self.followers:
            follower.stop()
        for part in self.background:
            part.stop()
        if self.remote_sync is not None:
            self.remote_sync.stop()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.index.stop()
        self._pid = 0
        self._closed = True


def open_calendar(content: Path, users_file: Path, cache_dir: Path | None = None,
                  now: dt.datetime | None = None, watch: bool = False,
                  index_in_background: bool = True,
                  sync: SyncSettings | None = None,
                  id_block: int = DEFAULT_BLOCK,
                  id_lease_timeout: float = LEASE_TIMEOUT,
                  password_hash_n: int = DEFAULT_HASH_N) -> Calendar:
    """`sync`: keep the tree in step with a remote branch (cloned into `content` when
    that folder is empty or missing); new ids then come from blocks leased on that
    remote (`idlease`, `id_block` ids at a time), as other instances may share it; a
    remote silent for `id_lease_timeout` seconds delays the start no longer.
    `password_hash_n`: scrypt's cost for new passwords (users.py; only tests lower it)."""
    remote = prepare_clone(content, sync) if sync else ""
    cache_dir = cache_dir or default_cache_dir(content)
    tree = open_tree(content, cache_dir)
    clock = clock_at(now)
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
    users = UserStore(users_file, password_hash_n)
    service = Service(catalog, users, clock)
    remote_sync = RemoteSync(tree, sync, remote, cache_dir, clock) if sync else None
    subscribe(tree, catalog, index, journal, service, remote_sync)
    reader = Reader(catalog, clock, index.search_events)
    return Calendar(tree, catalog, users, service, clock, cache_dir, index, journal, reader,
                    watch, remote_sync=remote_sync)


def subscribe(tree: ContentTree, catalog: Catalog, index: CalendarIndex, journal: Journal,
              service: Service, remote_sync: RemoteSync | None) -> None:
    """Every subscription between the parts of a served calendar, here and nowhere else
    (who listens to what, and why):

    - `catalog.listeners` (paths of a new catalog version, and whether a write of ours
      or files read from disk made it): the index marks them pending until Whoosh has
      them, then the journal tells the other worker processes about our writes.
    - `tree.lock_hooks` (the write lock just taken): the journal catches up with the
      other workers' writes, so ids and slugs are checked against the latest records.
    - `tree.recovery_hooks` (paths of a crashed writer's change, finished under the
      lock): the catalog re-reads them.
    - `remote_sync.integrated_hooks` (paths a merge from the remote changed, the write
      lock held): the catalog re-reads them and the journal announces them, so they
      are in every worker before the exchange lets go of the lock.
    - `service.committed` (a commit made, the lock held): the sync numbers it;
      `service.settled` (the lock let go): in `wait` mode the write waits there until
      its commit is pushed, in a push shared with the other writers waiting.
    - `catalog.listeners` again, for followers (`subscribe_follower`): the served
      site rebuilds the pages showing those paths.
    The file watcher (`watcher.follow_catalog`, started by `Calendar.ensure_started`
    in the serving process) feeds edits on disk into `catalog.refresh`.
    """
    catalog.listeners += [index.on_catalog_change, journal.on_catalog_change]
    tree.lock_hooks.append(journal.catch_up)
    tree.recovery_hooks.append(catalog.refresh)
    if remote_sync is not None:
        remote_sync.integrated_hooks += [catalog.refresh, journal.announce]
        service.committed.append(remote_sync.on_commit)
        service.settled.append(remote_sync.settle)


def subscribe_follower(calendar: Calendar, follower: Follower) -> None:
    """`follower` hears of every new catalog version (ours, other workers' through the
    journal, edits on disk through the watcher) and runs while the calendar serves."""
    calendar.catalog.listeners.append(follower.on_catalog_change)
    calendar.followers.append(follower)
