"""The catalog: every valid record of the content tree, in memory, with lookups by id,
slug and link. Files that fail to parse or validate are kept aside as problems (path,
line, reason) and left out; the rest keeps being served.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
import re
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..model.ids import MAX_ID, valid_id
from ..model.records import Record, line_of
from ..model.resources import EVENTS
from ..store.content import SETTINGS_FILE, ContentTree
from ..store.parsing import Outcome, parse, parse_data, parse_many
from ..sync.idlease import IdLeases, LeaseUnavailable
from .startcache import DELTA_FRACTION, DELTA_LIMIT, read_cache, scan_stats, write_cache
from .version import CatalogVersion

log = logging.getLogger(__name__)

# Above this many records, what a load created is moved out of the collector's sight
# (gc.freeze): later collections would otherwise walk millions of long-lived objects.
FREEZE_ABOVE = 10_000

# listener(relpaths, origin): origin is "write" (service, in this process) or "files"
# (re-read from disk: start-up, watcher, another worker's journal).
Listener = Callable[[set[str], str], None]

# Event fields that point at other records: field name -> collection.
EVENT_LINKS = {f.name: f.link for f in EVENTS.fields if f.link}


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else (
            f"{self.path}: {self.message}")


class Catalog:
    """The catalog's writer: reads the tree, applies changes, publishes versions.

    Readers use `view()` (or the lookups below, which go through it): the version the
    current thread pinned, else the latest published one. Changes happen under `lock`
    inside `changing()`, on a working version only the changing thread sees.
    """

    def __init__(self, tree: ContentTree) -> None:
        self.tree = tree
        self.lock = threading.RLock()
        self.current = CatalogVersion.empty(tree.settings())
        self._work: CatalogVersion | None = None  # the version being built
        self._writer = 0  # thread building `_work`
        self._owned: set[tuple[str, str]] = set()  # link sets `_work` has copied
        self._batch: set[str] = set()  # paths changed in the version being built
        self._clashes: list[Record] = []  # records refused for an id already held
        self._local = threading.local()  # .pinned: the version a request reads
        self.problems: dict[str, Problem] = {}
        # relpath -> (mtime_ns, size) of every record file as last read (valid or not):
        # the start-up cache, resync and the index manifest compare against it.
        self.stats: dict[str, tuple[int, int]] = {}
        # relpath -> digest of the bytes last written or re-read here: a watcher event
        # for a file whose content is what we already hold (our own write, or one read
        # from another worker's journal) is not a change.
        self.digests: dict[str, bytes] = {}
        self.listeners: list[Listener] = []
        self.cache_dirty = False
        # The start-up cache base this catalog descends from, and the paths changed
        # since it was written (what the delta file must hold).
        self._cache_token: str | None = None
        self._cache_delta: set[str] = set()
        # Set when several instances share a remote: ids come from leased blocks.
        self.leases: IdLeases | None = None

    # -- versions --------------------------------------------------------------
    def view(self) -> CatalogVersion:
        work = self._work
        if work is not None and self._writer == threading.get_ident():
            return work
        return getattr(self._local, "pinned", None) or self.current

    def pin(self) -> CatalogVersion:
        """From now on this thread reads the latest version, and only that one, until
        `unpin` (one request); its own changes move it on (read-your-writes)."""
        self._local.pinned = self.current
        return self.current

    def pin_latest(self) -> None:
        """A writer, holding `lock`, checks its rules against the latest version."""
        if getattr(self._local, "pinned", None) is not None:
            self._local.pinned = self.current

    def unpin(self) -> None:
        self._local.pinned = None

    @contextlib.contextmanager
    def changing(self, origin: str = "write") -> Iterator[CatalogVersion]:
        """Build the next version; publish it at the end, if anything changed. Nested
        calls join the outer change. `origin`: what listeners are told."""
        with self.lock:
            if self._work is not None:
                yield self._work
                return
            self._work = self.current.successor()
            self._writer = threading.get_ident()
            self._owned, self._batch = set(), set()
            self._clashes = []
            try:
                yield self._work
            finally:
                work, batch = self._work, self._batch
                self._work, self._writer, self._batch = None, 0, set()
                if batch:
                    self.cache_dirty = True
                    self._cache_delta |= batch - {SETTINGS_FILE}
                    # Listeners first: the index marks the paths pending before any
                    # reader can see the version that holds them.
                    self._notify(batch, origin)
                    self.current = work
                    self.pin_latest()

    # The latest version, for readers; each call may see a newer one than the last:
    # a request reads through `view()` after `pin()`.
    @property
    def records(self) -> dict[int, Record]:
        return self.view().records

    @property
    def slugs(self) -> dict[str, dict[str, int]]:
        return self.view().slugs

    @property
    def paths(self) -> dict[str, int]:
        return self.view().paths

    @property
    def backlinks(self) -> dict[tuple[str, str], set[int]]:
        return self.view().backlinks

    @property
    def settings(self) -> dict:
        return self.view().settings

    @property
    def version(self) -> int:
        return self.view().version

    def get(self, record_id: int, collection: str | None = None) -> Record | None:
        return self.view().get(record_id, collection)

    def by_slug(self, collection: str, slug: str) -> Record | None:
        return self.view().by_slug(collection, slug)

    def all(self, collection: str) -> list[Record]:
        return self.view().all(collection)

    def linked(self, collection: str, slug: str) -> list[Record]:
        return self.view().linked(collection, slug)

    def resolve(self, collection: str, slugs: object) -> list[Record]:
        return self.view().resolve(collection, slugs)

    def term_count(self, record: Record) -> int:
        return self.view().term_count(record)

    # -- loading -------------------------------------------------------------
    def load(self, cache_file: Path | None = None) -> None:
        """Read the tree; with a cache file, only files whose stat changed are parsed."""
        if self.stats or self.current.records:  # already loaded: this is a catch-up
            self.resync()
            if cache_file and self.cache_dirty:
                self.save_cache(cache_file)
            return
        with paused_gc():
            token, cached = read_cache(cache_file) if cache_file else (None, {})
            current = scan_stats(self.tree.root)
            self._cache_token = token
            self._install(current, cached)
            if len(self.current.records) > FREEZE_ABOVE:
                gc.freeze()
        if cache_file and self.cache_dirty:
            self.save_cache(cache_file)

    def _install(self, current: dict[str, tuple[int, int]],
                 cached: dict[str, tuple[tuple[int, int], object]]) -> None:
        """First load: take every file whose stat matches the cache as it was cached,
        parse the others."""
        misses = [(p, c) for p in sorted(current) if (cached.get(p) or (None,))[0] != current[p]
                  and (c := self.tree.collection_of(p)) is not None]
        parsed = parse_many(self.tree, misses)
        bulk: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
        with self.changing("files") as work:
            for relpath in sorted(current):
                stat = current[relpath]
                hit = cached.get(relpath)
                if hit is None or hit[0] != stat:
                    self._load_file(relpath, stat, parsed.get(relpath), bulk)
                    continue
                self.stats[relpath] = stat
                item = hit[1]
                if isinstance(item, Problem):
                    self.problems[relpath] = item
                    log.warning("skipping %s", item)
                    continue
                collection, data = item  # type: ignore[misc]
                record = Record(collection, data, relpath)
                if (data["id"] not in work.records and data["slug"] not in work.slugs[
                        collection]) or self._clash(record, relpath, None) is None:
                    self._put(record, bulk)
            self._batch.update(current)
            # Lists while loading, sets at the end: appends cost half of set adds.
            for key, ids in bulk.items():
                work.backlinks[key] = set(ids)
            self._owned.update(bulk)
            self._settle_clashes(self._clashes)
        # What the start-up cache lacks: the files parsed, and those gone since.
        self._cache_delta = {p for p, _c in misses} | (cached.keys() - current.keys())
        self.cache_dirty = bool(self._cache_delta)

    def resync(self) -> set[str]:
        """Compare the tree with what was last read; re-read what differs. Returns the
        paths re-read (start-up catch-up, and after directory moves the watcher cannot
        map to single files)."""
        current = scan_stats(self.tree.root)
        changed = {p for p, st in current.items() if self.stats.get(p) != st}
        changed |= self.stats.keys() - current.keys()
        if changed:
            self.refresh(changed)
        return changed

    def refresh(self, relpaths: Iterable[str]) -> bool:
        """Re-read these files (changed, added or removed), as one new version; True if
        anything changed. A file whose bytes are those last read or written here is
        left as it is."""
        with self.lock:
            settings = False
            fresh: dict[str, tuple[tuple[int, int], bytes] | None] = {}
            for relpath in relpaths:
                if relpath == SETTINGS_FILE:
                    settings = True
                elif self.tree.collection_of(relpath) is not None:
                    found = self._read(relpath)
                    if found is None and relpath not in self.stats:
                        continue  # gone, and never read: nothing to forget
                    if found is not None and relpath in self.stats and (
                            self.digests.get(relpath) == _digest(found[1])):
                        self.stats[relpath] = found[0]
                        continue
                    fresh[relpath] = found
            if not fresh and not settings:
                return False  # our own writes, seen again: no new version to build
            return self._apply_fresh(fresh, settings)

    def _apply_fresh(self, fresh: dict[str, tuple[tuple[int, int], bytes] | None],
                     settings: bool) -> bool:
        """The next version, with these files (stat and bytes; None: gone) read anew."""
        with self.changing("files") as work:
            if settings:
                work.settings = self.tree.settings()
                self._batch.add(SETTINGS_FILE)
            # Forget everything first, then load, served files first: a rename or a
            # branch checkout moves ids and slugs between files and must not look like
            # a clash, and a file already served keeps its id against a newcomer.
            served = {p for p in fresh if p in work.paths}
            for relpath in fresh:
                self._forget_path(relpath)
                self.stats.pop(relpath, None)
                self.digests.pop(relpath, None)
            for relpath in sorted(fresh, key=lambda p: (p not in served, p)):
                found = fresh[relpath]
                if found is not None:
                    self._load_file(relpath, found[0], data=found[1])
                self._batch.add(relpath)
            # Files that clashed with something that may now be gone get another go.
            if fresh:
                for relpath in [p for p, pr in self.problems.items()
                                if "already used" in pr.message and p not in fresh]:
                    self._forget_path(relpath)
                    self._load_file(relpath)
                    self._batch.add(relpath)
            return bool(self._batch)

    def _read(self, relpath: str) -> tuple[tuple[int, int], bytes] | None:
        """(stat, bytes) of a file, None when it is gone. Stat before read: a file
        changing meanwhile only looks changed once more."""
        try:
            st = os.stat(self.tree.root / relpath)
            return (st.st_mtime_ns, st.st_size), self.tree.read_bytes(relpath)
        except OSError:
            return None

    def _load_file(self, relpath: str, stat: tuple[int, int] | None = None,
                   outcome: Outcome | None = None,
                   bulk: defaultdict[tuple[str, str], list[int]] | None = None,
                   data: bytes | None = None) -> None:
        """Parse one file (unless `outcome` is its parse, made in advance) into the
        version being built."""
        collection = self.tree.collection_of(relpath)
        if collection is None:
            return
        self.problems.pop(relpath, None)
        if stat is None:
            found = self._read(relpath)
            if found is None:
                self._problem(relpath, 0, "cannot read the file")
                return
            stat, data = found
        self.stats[relpath] = stat
        if data is not None:
            self.digests[relpath] = _digest(data)
            outcome = parse_data(data, relpath, collection)
        outcome = outcome or parse(self.tree, relpath, collection)
        if outcome[0] == "problem":
            self._problem(relpath, outcome[1], outcome[2])
            return
        record = Record(collection, outcome[1], relpath)
        if self._clash(record, relpath, data) is None:
            if bulk is not None:
                self._put(record, bulk)
            else:
                self._insert(record)

    def _clash(self, record: Record, relpath: str, data: bytes | None) -> Problem | None:
        """Another file already holds this id or slug: keep the first, report this one."""
        work = self._work
        assert work is not None
        clash = work.records.get(record.id)
        key, message = "", ""
        if clash is not None and clash.path != relpath:
            key, message = "id", f"id {record.id} is already used by {clash.path}"
            self._clashes.append(record)
        else:
            other = work.slugs[record.collection].get(record.slug)
            if other is not None and other != record.id:
                key = "slug"
                message = f"slug {record.slug!r} is already used by {work.records[other].path}"
        if not key:
            return None
        if data is None:
            try:
                data = self.tree.read_bytes(relpath)
            except OSError:
                data = b""
        self._problem(relpath, line_of(data.decode("utf-8", "replace"), key), message)
        return self.problems[relpath]

    def _settle_clashes(self, newcomers: list[Record]) -> None:
        """At start, of two files with one id the one whose id was committed first
        keeps it, not the one that sorts first: a restart serves the same record as
        before, whatever name the newcomer was given."""
        work = self._work
        assert work is not None
        holders = {r.path: work.records[r.id] for r in newcomers if r.id in work.records}
        if not holders:
            return
        first = self.tree.first_commits(sorted({*holders, *(h.path for h in holders.values())}))
        for newcomer in newcomers:
            holder = holders.get(newcomer.path)
            mine = first.get(newcomer.path)
            if holder is None or mine is None or first.get(holder.path, mine + 1) <= mine:
                continue
            if work.slugs[newcomer.collection].get(newcomer.slug, holder.id) != holder.id:
                continue  # its slug is taken too: it stays out
            self._delete(holder)
            self.problems.pop(newcomer.path, None)
            self._insert(newcomer)
            self._clash(holder, holder.path, None)

    def _problem(self, relpath: str, line: int, message: str) -> None:
        problem = Problem(relpath, line, message)
        self.problems[relpath] = problem
        log.warning("skipping %s", problem)

    def _forget_path(self, relpath: str) -> None:
        self.problems.pop(relpath, None)
        work = self._work
        assert work is not None
        record_id = work.paths.get(relpath)
        if record_id is not None:
            self._delete(work.records[record_id])

    # -- start-up cache ----------------------------------------------------------
    def _cache_entry(self, relpath: str) -> tuple[tuple[int, int], object] | None:
        """What the cache keeps for a path: (stat, (collection, data)) or (stat,
        Problem). Clashes are left out: they depend on other files, so re-check them."""
        stat = self.stats.get(relpath)
        if stat is None:
            return None
        rid = self.current.paths.get(relpath)
        if rid is not None:
            record = self.current.records[rid]
            return stat, (record.collection, record.data)
        problem = self.problems.get(relpath)
        if problem is not None and "already used" not in problem.message:
            return stat, problem
        return None

    def save_cache(self, cache_file: Path) -> None:
        """Remember what was parsed, keyed by each file's stat, for a fast next start:
        the paths changed since the base file was written go to a small delta file;
        the base itself is rewritten only when that delta has grown large."""
        with self.lock:
            delta = self._cache_delta
            limit = max(DELTA_LIMIT, len(self.stats) // DELTA_FRACTION)
            if self._cache_token is not None and len(delta) <= limit:
                entries = {p: self._cache_entry(p) for p in delta}
                token, full = self._cache_token, False
            else:
                entries = {p: e for p in sorted(self.stats)
                           if (e := self._cache_entry(p)) is not None}
                token, full = secrets.token_hex(8), True
                self._cache_token = token
                self._cache_delta = set()
            self.cache_dirty = False
        write_cache(cache_file, self.tree.root, token, entries, full)

    # -- changing --------------------------------------------------------------
    def _notify(self, relpaths: set[str], origin: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(relpaths, origin)
            except Exception:  # a broken listener must not break a write
                log.exception("catalog listener failed")

    def _put(self, record: Record, bulk: defaultdict[tuple[str, str], list[int]]) -> None:
        """`_insert` for a first load: nothing to replace; links gathered in `bulk`."""
        work = self._work
        assert work is not None
        data = record.data
        rid = data["id"]
        work.records[rid] = record
        work.slugs[record.collection][data["slug"]] = rid
        work.paths[record.path] = rid
        if record.collection == "events":  # `_link_keys`, inlined for 100k events
            for name, collection in EVENT_LINKS.items():
                value = data.get(name)
                if isinstance(value, list):
                    for slug in value:
                        bulk[collection, slug].append(rid)
                elif value:
                    bulk[collection, value].append(rid)
        else:
            for key in self._link_keys(record):
                bulk[key].append(rid)

    def _links(self, key: tuple[str, str]) -> set[int]:
        """The working version's own copy of a link set (copied on first change)."""
        work = self._work
        assert work is not None
        if key not in self._owned:
            work.backlinks[key] = set(work.backlinks.get(key, ()))
            self._owned.add(key)
        return work.backlinks[key]

    def _insert(self, record: Record) -> None:
        work = self._work
        assert work is not None
        old = work.records.get(record.id)
        if old is not None:
            self._delete(old)
        work.records[record.id] = record
        work.slugs[record.collection][record.slug] = record.id
        work.paths[record.path] = record.id
        for key in self._link_keys(record):
            self._links(key).add(record.id)
        self._batch.add(record.path)

    def _delete(self, record: Record) -> None:
        work = self._work
        assert work is not None
        work.records.pop(record.id, None)
        if work.slugs[record.collection].get(record.slug) == record.id:
            del work.slugs[record.collection][record.slug]
        if work.paths.get(record.path) == record.id:
            del work.paths[record.path]
        for key in self._link_keys(record):
            ids = self._links(key)
            ids.discard(record.id)
            if not ids:
                del work.backlinks[key]
                self._owned.discard(key)
        self._batch.add(record.path)

    def add(self, record: Record) -> None:
        """Put a record the service has just written (its file is on disk)."""
        with self.changing("write"):
            self._insert(record)
            found = self._read(record.path)
            if found is not None:
                self.stats[record.path], self.digests[record.path] = (
                    found[0], _digest(found[1]))

    def remove(self, record: Record) -> None:
        """Take out a record the service has just deleted or moved."""
        with self.changing("write"):
            self._delete(record)
            if not (self.tree.root / record.path).exists():
                self.stats.pop(record.path, None)
                self.digests.pop(record.path, None)

    @staticmethod
    def _link_keys(record: Record) -> Iterator[tuple[str, str]]:
        if record.collection == "events":
            for name, collection in EVENT_LINKS.items():
                value = record.data.get(name)
                for slug in value if isinstance(value, list) else [value] if value else []:
                    yield collection, slug
        elif record.collection == "categories" and record.data.get("parent"):
            yield "categories", record.data["parent"]

    def highest_id(self, also_taken: Collection[int] = ()) -> int:
        """The highest id taken: by a record, a retired id, an id still written in a
        file that does not load, or in `also_taken`."""
        latest = self._work or self.current
        retired = (i for i in self.tree.retired_ids() if valid_id(i))  # none out of range
        return max(max(latest.records, default=0), max(retired, default=0),
                   max(self._problem_ids(), default=0), max(also_taken, default=0))

    def next_id(self, also_taken: Collection[int] = ()) -> int:
        """The next free id (with `lock` held): above every id taken (`highest_id`;
        `also_taken`: ids this write already gave out). With `leases`, the next id of
        this instance's leased block that none of those takes."""
        highest = self.highest_id(also_taken)
        if self.leases is None:
            if highest >= MAX_ID:
                raise LeaseUnavailable(f"every id up to {MAX_ID} is used")
            return highest + 1
        latest = self._work or self.current
        retired = self.tree.retired_ids()
        broken = self._problem_ids()

        def taken(record_id: int) -> bool:
            return (record_id in latest.records or record_id in retired
                    or record_id in broken or record_id in also_taken)
        return self.leases.allocate(highest, taken)

    def _problem_ids(self) -> set[int]:
        """The ids written in files that do not load. Read from their top-level `id:`
        line, not by parsing: a file whose YAML is broken still holds its id, and its
        author will fix the rest. Ids out of range are never handed out anyway."""
        found: set[int] = set()
        for relpath in self.problems:
            try:
                text = self.tree.read_bytes(relpath).decode("utf-8", "replace")
            except OSError:
                continue
            for match in re.finditer(r"^id[ \t]*:[ \t]*([0-9]{1,20})[ \t]*(?:#.*)?$", text,
                                     re.MULTILINE):
                if valid_id(int(match[1])):
                    found.add(int(match[1]))
        return found


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection while building large structures: a load creates millions
    of objects and each collection would walk them all again (10x slower unpickling)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
