"""The catalog: every valid record of the content tree, in memory, with lookups by id,
slug and link. Files that fail to parse or validate are kept aside as problems (path,
line, reason) and left out; the rest keeps being served.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import yamlfile
from .content import ContentTree
from .parsing import Outcome, parse, parse_many
from .records import Record, line_of
from .resources import EVENTS, RESOURCES

log = logging.getLogger(__name__)

# Bump when Record/Problem or the parsing rules change: old start-up caches are ignored.
CACHE_FORMAT = 2
# The start-up cache is a base file plus a small delta of the paths changed since the
# base was written: rewriting 100k records (~200 MB) per write or catch-up costs
# seconds, the delta milliseconds. The base is rewritten once the delta grows past this.
DELTA_LIMIT = 2000
DELTA_FRACTION = 20  # ... or past 1/20 of the tree
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
    def __init__(self, tree: ContentTree) -> None:
        self.tree = tree
        self.lock = threading.RLock()
        tree.recovery_hooks.append(self.refresh)
        self.records: dict[int, Record] = {}
        self.slugs: dict[str, dict[str, int]] = {name: {} for name in RESOURCES}
        self.paths: dict[str, int] = {}
        self.problems: dict[str, Problem] = {}
        # (collection, slug) -> ids of records linking to it (events, child categories)
        self.backlinks: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.version = 0  # bumped on every change; part of every ETag
        self.settings: dict = tree.settings()
        # relpath -> (mtime_ns, size) of every record file as last read (valid or not):
        # the start-up cache, resync and the index manifest compare against it.
        self.stats: dict[str, tuple[int, int]] = {}
        self.listeners: list[Listener] = []
        self._touched: set[str] | None = None  # collecting during a batch re-read
        self.cache_dirty = False
        # The start-up cache base this catalog descends from, and the paths changed
        # since it was written (what the delta file must hold).
        self._cache_token: str | None = None
        self._cache_delta: set[str] = set()
        self._bulk_links: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
        self._counts: dict[tuple[str, str], int] = {}
        self._counts_version = -1

    # -- loading -------------------------------------------------------------
    def load(self, cache_file: Path | None = None) -> None:
        """Read the tree; with a cache file, only files whose stat changed are parsed."""
        if self.stats or self.records:  # already loaded: this is a catch-up
            self.resync()
            if cache_file and self.cache_dirty:
                self.save_cache(cache_file)
            return
        with paused_gc():
            token, cached = _read_cache(cache_file) if cache_file else (None, {})
            current = scan_stats(self.tree.root)
            with self.lock:
                self._cache_token = token
                self._install(current, cached)
                self.version += 1
            if len(self.records) > FREEZE_ABOVE:
                gc.freeze()
        if cache_file and self.cache_dirty:
            self.save_cache(cache_file)

    def _install(self, current: dict[str, tuple[int, int]],
                 cached: dict[str, tuple[tuple[int, int], object]]) -> None:
        """First load: take every file whose stat matches the cache as it was cached,
        parse the others. Sorted order, as `refresh`, so the same file wins a clash."""
        self._touched = set()
        self._bulk_links = defaultdict(list)
        misses = [(p, c) for p in sorted(current) if (cached.get(p) or (None,))[0] != current[p]
                  and (c := self.tree.collection_of(p)) is not None]
        parsed = parse_many(self.tree, misses)
        try:
            for relpath in sorted(current):
                stat = current[relpath]
                hit = cached.get(relpath)
                if hit is None or hit[0] != stat:
                    self._cache_delta.add(relpath)
                    self._load_file(relpath, stat, parsed.get(relpath))
                    continue
                self.stats[relpath] = stat
                item = hit[1]
                if isinstance(item, Problem):
                    self.problems[relpath] = item
                    log.warning("skipping %s", item)
                    continue
                collection, data = item  # type: ignore[misc]
                record = Record(collection, data, relpath)
                if (data["id"] not in self.records and data["slug"] not in self.slugs[
                        collection]) or self._clash(record, relpath, None) is None:
                    self._put(record)
            touched = self._touched
        finally:
            self._touched = None
            for key, ids in self._bulk_links.items():
                self.backlinks[key].update(ids)
            self._bulk_links = defaultdict(list)
        if cached.keys() - current.keys():
            self.cache_dirty = True  # files gone since: drop them from the cache
            self._cache_delta |= cached.keys() - current.keys()
        if touched and self.listeners:
            self._notify(touched, "files")

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
        """Re-read these files (changed, added or removed); True if anything changed."""
        changed = False
        with self.lock:
            self._touched = set()
            try:
                paths = []
                for relpath in relpaths:
                    if relpath == "calendar.yaml":
                        self.settings = self.tree.settings()
                        changed = True
                    elif self.tree.collection_of(relpath) is not None:
                        paths.append(relpath)
                # Forget everything first, then load: a rename or a branch checkout moves
                # ids and slugs between files, and must not look like a clash.
                for relpath in paths:
                    self._forget_path(relpath)
                    self.stats.pop(relpath, None)
                for relpath in sorted(paths):
                    if self.tree.exists(relpath):
                        self._load_file(relpath)
                # Files that clashed with something that may now be gone get another go.
                retry = [p for p, pr in self.problems.items()
                         if "already used" in pr.message and p not in paths]
                for relpath in retry:
                    self._forget_path(relpath)
                    self._load_file(relpath)
                changed = changed or bool(paths)
                self._cache_delta.update(paths)
                self._cache_delta.update(retry)
                touched = self._touched
            finally:
                self._touched = None
            if changed:
                self.version += 1
                self.cache_dirty = True
        if touched:
            self._notify(touched, "files")
        return changed

    def _load_file(self, relpath: str, stat: tuple[int, int] | None = None,
                   outcome: Outcome | None = None) -> None:
        """Parse one file (unless `outcome` is its parse, made in advance). `stat`: taken
        just before by a scan (stat before read, so a file changing meanwhile only looks
        changed once more)."""
        collection = self.tree.collection_of(relpath)
        if collection is None:
            return
        self.problems.pop(relpath, None)
        if stat is None:
            try:
                st = os.stat(self.tree.root / relpath)
            except OSError as exc:
                self._problem(relpath, 0, f"cannot read: {exc.strerror}")
                return
            stat = (st.st_mtime_ns, st.st_size)
        self.stats[relpath] = stat
        self.cache_dirty = True
        outcome = outcome or parse(self.tree, relpath, collection)
        if outcome[0] == "problem":
            self._problem(relpath, outcome[1], outcome[2])
            return
        record = Record(collection, outcome[1], relpath)
        if self._clash(record, relpath, None) is None:
            self.add(record)

    def _clash(self, record: Record, relpath: str, data: bytes | None) -> Problem | None:
        """Another file already holds this id or slug: keep the first, report this one."""
        clash = self.records.get(record.id)
        key, message = "", ""
        if clash is not None and clash.path != relpath:
            key, message = "id", f"id {record.id} is already used by {clash.path}"
        else:
            other = self.slugs[record.collection].get(record.slug)
            if other is not None and other != record.id:
                key = "slug"
                message = f"slug {record.slug!r} is already used by {self.records[other].path}"
        if not key:
            return None
        if data is None:
            try:
                data = self.tree.read_bytes(relpath)
            except OSError:
                data = b""
        self._problem(relpath, line_of(data.decode("utf-8", "replace"), key), message)
        return self.problems[relpath]

    def _problem(self, relpath: str, line: int, message: str) -> None:
        problem = Problem(relpath, line, message)
        self.problems[relpath] = problem
        log.warning("skipping %s", problem)

    def _forget_path(self, relpath: str) -> None:
        self.problems.pop(relpath, None)
        record_id = self.paths.get(relpath)
        if record_id is not None:
            self.remove(self.records[record_id])

    # -- start-up cache ----------------------------------------------------------
    def _cache_entry(self, relpath: str) -> tuple[tuple[int, int], object] | None:
        """What the cache keeps for a path: (stat, (collection, data)) or (stat,
        Problem). Clashes are left out: they depend on other files, so re-check them."""
        stat = self.stats.get(relpath)
        if stat is None:
            return None
        rid = self.paths.get(relpath)
        if rid is not None:
            record = self.records[rid]
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
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        delta_file = _delta_file(cache_file)
        if full:
            # A stale delta must never be applied to the new base: remove it first.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(delta_file)
            _dump(cache_file, (CACHE_FORMAT, str(self.tree.root), token,
                               list(entries), list(entries.values())))
        else:
            _dump(delta_file, (CACHE_FORMAT, token, entries))

    # -- changing --------------------------------------------------------------
    def _notify(self, relpaths: set[str], origin: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(relpaths, origin)
            except Exception:  # a broken listener must not break a write
                log.exception("catalog listener failed")

    def _changed(self, relpath: str) -> None:
        if self._touched is not None:
            self._touched.add(relpath)
        else:
            self.cache_dirty = True
            self._cache_delta.add(relpath)
            self._notify({relpath}, "write")

    def _put(self, record: Record) -> None:
        """`add` for a first load: nothing to replace, nobody to tell yet."""
        data = record.data
        rid = data["id"]
        self.records[rid] = record
        self.slugs[record.collection][data["slug"]] = rid
        self.paths[record.path] = rid
        # Lists now, sets at the end of the load: appends cost half of set adds.
        links = self._bulk_links
        if record.collection == "events":  # `_link_keys`, inlined for 100k events
            for name, collection in EVENT_LINKS.items():
                value = data.get(name)
                if isinstance(value, list):
                    for slug in value:
                        links[collection, slug].append(rid)
                elif value:
                    links[collection, value].append(rid)
        else:
            for key in self._link_keys(record):
                links[key].append(rid)
        if self._touched is not None:
            self._touched.add(record.path)

    def add(self, record: Record) -> None:
        with self.lock:
            old = self.records.get(record.id)
            if old is not None:
                self.remove(old)
            self.records[record.id] = record
            self.slugs[record.collection][record.slug] = record.id
            self.paths[record.path] = record.id
            for key in self._link_keys(record):
                self.backlinks[key].add(record.id)
            if self._touched is None:
                # A write through the service: remember the stat of the file it wrote.
                try:
                    st = os.stat(self.tree.root / record.path)
                    self.stats[record.path] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
            self.version += 1
            self._changed(record.path)

    def remove(self, record: Record) -> None:
        with self.lock:
            self.records.pop(record.id, None)
            if self.slugs[record.collection].get(record.slug) == record.id:
                del self.slugs[record.collection][record.slug]
            if self.paths.get(record.path) == record.id:
                del self.paths[record.path]
            for key in self._link_keys(record):
                ids = self.backlinks.get(key)
                if ids is not None:
                    ids.discard(record.id)
                    if not ids:
                        del self.backlinks[key]
            if self._touched is None and not (self.tree.root / record.path).exists():
                self.stats.pop(record.path, None)
            self.version += 1
            self._changed(record.path)

    @staticmethod
    def _link_keys(record: Record) -> Iterator[tuple[str, str]]:
        if record.collection == "events":
            for name, collection in EVENT_LINKS.items():
                value = record.data.get(name)
                for slug in value if isinstance(value, list) else [value] if value else []:
                    yield collection, slug
        elif record.collection == "categories" and record.data.get("parent"):
            yield "categories", record.data["parent"]

    # -- lookups ---------------------------------------------------------------
    def get(self, record_id: int, collection: str | None = None) -> Record | None:
        record = self.records.get(record_id)
        if record is None or (collection and record.collection != collection):
            return None
        return record

    def by_slug(self, collection: str, slug: str) -> Record | None:
        record_id = self.slugs[collection].get(slug)
        return None if record_id is None else self.records.get(record_id)

    def all(self, collection: str) -> list[Record]:
        return [self.records[i] for i in self.slugs[collection].values()]

    def linked(self, collection: str, slug: str) -> list[Record]:
        """Records (events, or child categories) that link to this record."""
        return [self.records[i] for i in sorted(self.backlinks.get((collection, slug), ()))
                if i in self.records]

    def resolve(self, collection: str, slugs: object) -> list[Record]:
        """The existing records named by a slug or list of slugs, in the given order."""
        items = slugs if isinstance(slugs, list) else [slugs] if slugs else []
        found = (self.by_slug(collection, s) for s in items)
        return [r for r in found if r is not None]

    def term_count(self, record: Record) -> int:
        """Published events carrying a term (the plugin's `count`). Memoized per
        version: every embedded term of every listed event asks for it."""
        if self._counts_version != self.version:
            self._counts = {}
            self._counts_version = self.version
        key = (record.collection, record.slug)
        count = self._counts.get(key)
        if count is None:
            records = self.records
            count = sum(1 for i in self.backlinks.get(key, ())
                        if (r := records.get(i)) is not None and r.collection == "events"
                        and r.status == "publish")
            self._counts[key] = count
        return count

    def next_id(self) -> int:
        used = max(self.records, default=0)
        retired = max(self.tree.retired_ids(), default=0)
        # Problem files may still hold ids: never hand those out either.
        return max(used, retired, self._problem_ids()) + 1

    def _problem_ids(self) -> int:
        best = 0
        for relpath in self.problems:
            try:
                raw = yamlfile.load(self.tree.read_bytes(relpath))
            except (OSError, yamlfile.YamlError):
                continue
            if isinstance(raw.get("id"), int):
                best = max(best, raw["id"])
        return best


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


def scan_stats(root: Path) -> dict[str, tuple[int, int]]:
    """relpath -> (mtime_ns, size) of every record file (the rules of
    `ContentTree.scan`: `.yaml` files in the collection folders and their subfolders,
    hidden names and symlinks skipped). Plain strings, no Path objects: at 100k files
    the per-file `resolve()` of `ContentTree.scan` alone took seconds."""
    found: dict[str, tuple[int, int]] = {}

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, f"{prefix}{name}/")
                elif name.endswith(".yaml") and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[prefix + name] = (st.st_mtime_ns, st.st_size)

    for collection in RESOURCES:
        base = os.path.join(root, collection)
        if os.path.isdir(base):
            walk(base, f"{collection}/")
    return found


def _delta_file(cache_file: Path) -> Path:
    return cache_file.with_name(f"{cache_file.name}.delta")


def _dump(path: Path, value: object) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _load(path: Path) -> object:
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError, AttributeError,
            TypeError, ImportError, IndexError):
        return None


def _read_cache(cache_file: Path) -> tuple[str | None, dict[str, tuple[tuple[int, int],
                                                                          object]]]:
    """(token of the base, relpath -> (stat, item)) from the base and its delta. Any
    entry is only a hint: it is used when the file's stat still matches."""
    base = _load(cache_file)
    try:
        fmt, _root, token, paths, items = base  # type: ignore[misc]
    except (TypeError, ValueError):
        return None, {}
    if fmt != CACHE_FORMAT or len(paths) != len(items):
        return None, {}
    entries = dict(zip(paths, items, strict=True))
    delta = _load(_delta_file(cache_file))
    try:
        dfmt, dtoken, changes = delta  # type: ignore[misc]
    except (TypeError, ValueError):
        return token, entries
    if dfmt == CACHE_FORMAT and dtoken == token:
        for relpath, entry in changes.items():
            if entry is None:
                entries.pop(relpath, None)
            else:
                entries[relpath] = entry
    return token, entries
