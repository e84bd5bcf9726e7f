"""The query side of the catalog: in-memory event columns plus a persistent Whoosh index.

Who answers what, and why (design.md's Whoosh figures):
- Date windows, ordering, counts and every id/flag filter come from the event
  columns (`eventtable.EventTable`, no Whoosh). Whoosh would need ~0.7 s for a
  start-sorted window at 100k.
- Text search (`search=`): every word as a substring of the indexed words of the
  text fields, as WordPress's `LIKE '%word%'` ("weinabend" finds "Glühweinabend"),
  unscored, giving the exact set of matching ids that is then intersected with the
  columns. Events are answered by in-memory postings built from the catalog at load
  (`postings.LivePostings`, saved in `cache_dir` for the next start), so search is
  fast before Whoosh's index exists; Whoosh answers other collections' searches.
- The index lives in `cache_dir/whoosh` (outside the content tree, rebuildable). Its
  manifest records the stat of every file it holds, so start-up and other workers
  only index what differs. Writes are batched by a background thread per process and
  serialized across processes by a file lock; the one long-lived searcher is
  refreshed after commits.
- Until a change is committed to the index, its path is "pending": Whoosh hits for
  pending paths are ignored and the current in-memory records at those paths are
  matched in Python with the same tokenizer, so a list is exact on the next request
  even while the index lags behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import pickle
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
from whoosh import columns as wcolumns
from whoosh import formats as wformats
from whoosh import index as windex
from whoosh import query as wq
from whoosh.analysis import LowercaseFilter, RegexTokenizer
from whoosh.codec.whoosh3 import W3Codec, W3PerDocReader
from whoosh.fields import COLUMN, ID, FieldType, Schema

from ..model.records import Record
from ..model.resources import EVENTS, RESOURCES
from ..store import atomic
from . import textsearch
from .catalog import Catalog, paused_gc
from .forked import run_in_child
from .postings import LivePostings
from .version import CatalogVersion
from .words import _plain, tokens, word_set

log = logging.getLogger(__name__)

INDEX_FORMAT = 2
# Posting pool of a full rebuild: above it, sorted runs spill to temporary files and
# are merged at commit.
REBUILD_MB = 256
# A catch-up of more documents than this is a rebuild in a child process (as is the
# first build): written in a serving process's thread, it would compete with requests.
DETACH_ABOVE = 2000
# The background writer waits this long after a change for more to gather, and lets
# at least FLUSH_INTERVAL pass between two of its commits (seconds).
GATHER_SECONDS = 0.05
FLUSH_INTERVAL = 0.25
# No stop words and no stemming: WordPress search matches any substring, so "the" or
# "azz" must still find something; the terms holding a search word are found in each
# segment's term dictionary (textsearch.Substring).
ANALYZER = RegexTokenizer(r"\w+") | LowercaseFilter()


def text_fields() -> dict[str, tuple[str, ...]]:
    """Searchable fields per collection: those whose type carries words (resources.py).
    Same names across resources share one index field."""
    return {name: tuple(f.name for f in res.fields if f.type.searchable)
            for name, res in RESOURCES.items()}


TEXT_FIELDS = text_fields()
# What `/events?search=` looks in.
EVENT_SEARCH_FIELDS = EVENTS.search_fields


class Words(FieldType):
    """A text field fed with the distinct lowercased words of a value (`document`):
    nothing to analyze at index time, and only which documents hold a word is kept
    (no frequencies, positions, lengths or stored text): searches are unscored word
    substrings, and every per-posting extra cost a full reindex seconds."""

    def __init__(self) -> None:
        super().__init__(wformats.Existence(), ANALYZER, scorable=False, stored=False)

    def index(self, value: object, **kwargs: object) -> Iterator[tuple[bytes, int, float,
                                                                       bytes]]:
        words = value.split() if isinstance(value, str) else value
        return ((w.encode("utf-8"), 1, 1.0, b"") for w in words)  # type: ignore[union-attr]


class _LeanPerDocReader(W3PerDocReader):
    """Remembers that a column is absent. Whoosh looks up a field's length column once
    per posting (per document and field when merging segments) and, when there is none
    (nothing here is scorable), stats the file every time: half of a reindex."""

    def _cached_reader(self, fieldname: str, column: object) -> object:
        if fieldname not in self._readers:
            self._readers[fieldname] = super()._cached_reader(fieldname, column)
        return self._readers[fieldname]


class LeanCodec(W3Codec):
    """Whoosh's codec without field-length statistics (nothing is scored). Segments
    remember their codec, so reading them uses `_LeanPerDocReader` too."""

    length_stats = False

    def per_document_reader(self, storage: object, segment: object) -> W3PerDocReader:
        return _LeanPerDocReader(storage, segment)


def schema() -> Schema:
    """Lean on purpose (reindex speed): only the id is kept, as a column (it is never
    queried, so not indexed); words as bare existence postings."""
    fields: dict = {"key": ID(unique=True), "rid": COLUMN(wcolumns.NumericColumn("q")),
                    "collection": ID}
    for names in TEXT_FIELDS.values():
        for name in names:
            fields.setdefault(name, Words())
    return Schema(**fields)


def document(record: Record) -> dict:
    doc = {"key": record.path, "rid": record.id, "collection": record.collection}
    data = record.data
    for name in TEXT_FIELDS[record.collection]:
        text = _plain(data.get(name))
        if text:
            # Unscored, no phrases: only which words occur matters, so each distinct
            # word is indexed once (halves or better the postings Whoosh must write).
            words = list(dict.fromkeys(tokens(text)))
            if words:
                doc[name] = words
    return doc


class SearchTerms:
    """A WordPress-style search string: every word required, `-word` excluded; a word
    matches a value holding it anywhere, in any case. A word with punctuation
    (`c1-1`, `o'clock`) must occur as written: its tokens narrow the search through
    the index, then the text itself is asked (`phrases`), as WordPress's LIKE does."""

    def __init__(self, text: str) -> None:
        self.include: list[str] = []
        self.exclude: list[str] = []
        self.phrases: list[str] = []  # punctuated words that must occur as written
        self.excluded_phrases: list[str] = []
        for word in text.split():
            excluded = word.startswith("-") and len(word) > 1
            word = word[1:] if excluded else word
            parts = tokens(word)
            punctuated = parts != [word.lower()]
            if excluded:
                if punctuated:
                    self.excluded_phrases.append(word.lower())
                else:
                    self.exclude.extend(parts)
            else:
                self.include.extend(parts)
                if punctuated and parts:
                    self.phrases.append(word.lower())

    def query(self, collection: str, fields: tuple[str, ...]) -> wq.Query:
        def any_field(tok: str) -> wq.Query:
            return wq.Or([textsearch.Substring(f, tok) for f in fields])

        parts: list[wq.Query] = [wq.Term("collection", collection)]
        parts += [any_field(t) for t in self.include]
        q: wq.Query = wq.And(parts)
        if self.exclude:
            q = wq.AndNot(q, wq.Or([any_field(t) for t in self.exclude]))
        return q

    def matches(self, record: Record, fields: tuple[str, ...]) -> bool:
        """The same test in Python, for records the index has not caught up with."""
        # One word per line: a token (no line break in it) is inside this text exactly
        # when it is inside one of the words.
        words = "\n".join(w for f in fields for w in tokens(_plain(record.data.get(f))))
        return (all(t in words for t in self.include)
                and not any(t in words for t in self.exclude)
                and self.phrases_match(record, fields))

    def phrases_match(self, record: Record, fields: tuple[str, ...]) -> bool:
        if not (self.phrases or self.excluded_phrases):
            return True
        text = "\n".join(_plain(record.data.get(f)) for f in fields).lower()
        return (all(p in text for p in self.phrases)
                and not any(p in text for p in self.excluded_phrases))


def match_in_memory(view: CatalogVersion, collection: str, terms: SearchTerms,
                    fields: tuple[str, ...]) -> np.ndarray:
    """Ids of the records matching a search in Python, without the index (sorted int64)."""
    return np.array(sorted(r.id for r in view.all(collection) if terms.matches(r, fields)),
                    np.int64)


# ------------------------------------------------------------------ whoosh index
def _snapshot(catalog: Catalog) -> tuple[CatalogVersion, dict[str, tuple[int, int]]]:
    """The latest version and the file stats it was read from, taken together (a
    write changes both under the lock); the lock is held only for the dict copy."""
    with catalog.lock:
        return catalog.current, dict(catalog.stats)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """One index writer across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class TextIndex:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.dir = folder / "whoosh"
        self.manifest_file = folder / "whoosh-manifest.pickle"
        self.lock_file = folder / "whoosh.lock"
        self._snapshot: textsearch.Snapshot | None = None
        self._search_lock = threading.Lock()
        # Told the pid of each rebuilding child (tests stop one midway).
        self.on_child: Callable[[int], None] | None = None

    # -- manifest: relpath -> ((mtime_ns, size), id) of what the index holds -------
    def manifest(self) -> dict[str, tuple[tuple[int, int], int]] | None:
        """None when missing or of another format (the index must then be rebuilt)."""
        try:
            with paused_gc(), open(self.manifest_file, "rb") as fh:
                if pickle.load(fh) != INDEX_FORMAT:
                    return None
                return pickle.load(fh)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            return None

    def _save_manifest(self, entries: dict) -> None:
        with atomic.replacing(self.manifest_file, binary=True) as fh:
            pickle.dump(INDEX_FORMAT, fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(entries, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def exists(self) -> bool:
        """An index this code can use: an index of another schema is rebuilt."""
        return windex.exists_in(str(self.dir)) and self._manifest_format() == INDEX_FORMAT

    def _manifest_format(self) -> object:
        # The format is pickled on its own before the entries: read just that.
        try:
            with open(self.manifest_file, "rb") as fh:
                return pickle.load(fh)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            return None

    # -- writing ------------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> int:
        """Index every record from scratch, in one batch and one commit, in this
        process (the `reindex` command)."""
        with file_lock(self.lock_file):
            count = self._rebuild(*_snapshot(catalog))
        self._close_searcher()
        return count

    def _rebuild_in_child(self, catalog: Catalog) -> int:
        """With the file lock held (the child shares it: a parent killed meanwhile
        still leaves the swap under the lock)."""
        version, stats = _snapshot(catalog)
        return int(run_in_child(lambda alive: self._rebuild(version, stats, alive),
                                started=self.on_child))  # type: ignore[call-overload]

    def _rebuild(self, version: CatalogVersion, stats: dict[str, tuple[int, int]],
                 alive: Callable[[], bool] = lambda: True) -> int:
        """Build into a new folder, then swap it in. A builder killed at any point
        leaves either the old index with its manifest, or no manifest (so `exists`
        is false and the next start rebuilds); its leftovers are removed here."""
        for stale in self.folder.glob("whoosh.new.*"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in self.folder.glob("whoosh.old.*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = self.folder / f"whoosh.new.{os.getpid()}"
        tmp.mkdir(parents=True)
        ix = windex.create_in(str(tmp), schema())
        writer = ix.writer(limitmb=REBUILD_MB, codec=LeanCodec())
        manifest = {}
        for n, (relpath, rid) in enumerate(version.paths.items()):
            stat = stats.get(relpath)
            if stat is None:
                continue
            if n % 1000 == 0 and not alive():
                writer.cancel()
                raise RuntimeError("the process that wanted this index is gone")
            writer.add_document(**document(version.records[rid]))
            manifest[relpath] = (stat, rid)
        writer.commit()
        ix.close()
        # The manifest goes first: an index folder without one is rebuilt, never
        # trusted with another folder's manifest.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.manifest_file)
        old = self.folder / f"whoosh.old.{os.getpid()}"
        if self.dir.exists():
            os.replace(self.dir, old)
        os.replace(tmp, self.dir)
        self._save_manifest(manifest)
        shutil.rmtree(old, ignore_errors=True)
        return len(manifest)

    def sync(self, catalog: Catalog, relpaths: Iterable[str]) -> int:
        """Bring these paths in the index up to the catalog; returns documents written
        (-1: rebuilt). Another worker may have done it already: the manifest says so,
        and then this is a no-op. No index yet, or more than `DETACH_ABOVE` documents
        to write: a rebuild in a child process."""
        with file_lock(self.lock_file):
            # Under the lock: another worker's commit replaces the files `exists` reads.
            manifest = self.manifest() if self.exists() else None
            version, stats = _snapshot(catalog)
            todo = []
            for relpath in ([] if manifest is None else relpaths):
                rid = version.paths.get(relpath)
                stat = stats.get(relpath)
                want = (stat, rid) if rid is not None and stat is not None else None
                if manifest.get(relpath) != want:  # type: ignore[union-attr]
                    todo.append((relpath, want))
            if manifest is None or len(todo) > DETACH_ABOVE:
                count = self._rebuild_in_child(catalog)
                self._close_searcher()
                return -1 if manifest is None else count
            if not todo:
                return 0
            ix = windex.open_dir(str(self.dir))
            writer = ix.writer(limitmb=128, codec=LeanCodec())
            # One searcher for all deletions: Whoosh opens a new one per call otherwise
            # (~10 ms each at 100k).
            with writer.searcher() as searcher:
                for relpath, _want in todo:
                    writer.delete_by_term("key", relpath, searcher=searcher)
            for relpath, want in todo:
                if want is not None:
                    writer.add_document(**document(version.records[want[1]]))
                    manifest[relpath] = want
                else:
                    manifest.pop(relpath, None)
            writer.commit()
            ix.close()
            self._save_manifest(manifest)
        return len(todo)

    def differences(self, catalog: Catalog) -> set[str]:
        """Paths where the index and the catalog disagree (start-up catch-up)."""
        manifest = self.manifest() or {}
        with catalog.lock:
            stats = catalog.stats
            # `_wanted` inlined: this runs over every path at every start.
            paths = catalog.current.paths
            wrong = {p for p, rid in paths.items() if manifest.get(p) != (stats.get(p), rid)}
            gone = manifest.keys() - paths.keys()
        return wrong | gone

    # -- reading -------------------------------------------------------------------
    # One snapshot of the index per process, read as numpy arrays (textsearch.py):
    # decoded postings are cached per segment and term, so a search costs a
    # few vectorised mask operations instead of Whoosh walking every posting.
    def _close_searcher(self) -> None:
        with self._search_lock:
            if self._snapshot is not None:
                self._snapshot.close()
            self._snapshot = None

    def refresh(self) -> None:
        """Move to the newest generation if another commit happened (here or in
        another worker). The new generation is opened outside the lock (~0.1 s at
        100k events), so searches meanwhile keep answering from the previous one."""
        snap = self._snapshot
        if snap is None or snap.up_to_date():
            return
        try:
            fresh = textsearch.open_snapshot(self.dir)
        except OSError:
            fresh = None  # the folder is being replaced (a rebuild): open at next search
        with self._search_lock:
            old, self._snapshot = self._snapshot, fresh
        if old is not None:
            old.close()

    def search(self, q: wq.Query) -> tuple[set[int], set[str]] | None:
        """(ids, keys) of every matching document; None when there is no index yet.
        `search_ids` without the conversion to a set."""
        ids = self.search_ids(q)
        return None if ids is None else (set(ids.tolist()), set())

    def search_ids(self, q: wq.Query) -> np.ndarray | None:
        """Sorted distinct ids (int64) of every matching document; None when there is
        no index yet. Never fails because another worker merged segments away or
        rebuilt the index meanwhile: the search reopens the newest generation and runs
        again."""
        with self._search_lock:
            for attempt in range(textsearch.OPEN_RETRIES):
                if self._snapshot is None:
                    self._snapshot = textsearch.open_snapshot(self.dir)
                    if self._snapshot is None:
                        return None
                try:
                    return self._snapshot.ids(q)
                except (FileNotFoundError, windex.EmptyIndexError):
                    if attempt == textsearch.OPEN_RETRIES - 1:
                        raise
                    self._snapshot.close()
                    self._snapshot = None
        return None

    def close(self) -> None:
        self._close_searcher()

    def after_fork(self) -> None:
        """In a forked child: a searcher of the parent (its open files are shared
        descriptors) is forgotten, not closed; the child opens its own when it searches."""
        self._snapshot = None
        self._search_lock = threading.Lock()


# ------------------------------------------------------------------ the whole
class CalendarIndex:
    """Columns + text index for one catalog, following its changes."""

    def __init__(self, catalog: Catalog, folder: Path, background: bool = True) -> None:
        self.catalog = catalog
        self.text = TextIndex(folder)
        self._pending: dict[str, int] = {}  # relpath -> change counter
        self._counter = 0
        self._pending_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._flushed = 0.0  # monotonic time of the background thread's last flush
        self.background = background
        self.cache_file: Path | None = None
        # What answers `/events?search=` (postings.py): in memory from the first
        # request, without waiting for Whoosh's index, which follows in the background.
        self.memory = LivePostings(catalog, "events", word_set(EVENT_SEARCH_FIELDS),
                                   folder / "postings-events.bin")
        # Start-up catch-up: whatever differs from the index is pending until written.
        if self.text.exists():
            self._mark(self.text.differences(catalog))
        else:
            self._mark(set(catalog.paths))

    # -- following changes ---------------------------------------------------
    def _mark(self, relpaths: Iterable[str]) -> None:
        with self._pending_lock:
            for p in relpaths:
                self._counter += 1
                self._pending[p] = self._counter
        if self._pending:
            self._wake.set()

    def on_catalog_change(self, relpaths: set[str], origin: str) -> None:
        self.memory.mark(relpaths)
        self._mark(relpaths)

    def pending(self) -> set[str]:
        with self._pending_lock:
            return set(self._pending)

    def flush(self) -> int:
        """Write pending changes to the index now (the background thread calls this)."""
        with self._pending_lock:
            snapshot = dict(self._pending)
        if not snapshot:
            return 0
        written = self.text.sync(self.catalog, snapshot)
        self.text.refresh()
        with self._pending_lock:
            for p, n in snapshot.items():
                if self._pending.get(p) == n:
                    del self._pending[p]
        if self.cache_file is not None and self.catalog.cache_dirty:
            self.catalog.save_cache(self.cache_file)
        return written

    def start(self) -> None:
        """The background writer; started lazily so it lives in the serving process
        (gunicorn may fork after the app is built)."""
        if not self.background:
            return
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="calendar-indexer",
                                        daemon=True)
        self._thread.start()

    def after_fork(self) -> None:
        """In a process forked from the one that built this (gunicorn's preload): the
        parent's writer thread does not exist here, so `start` makes one; locks are
        new in case a thread of the parent held one at the fork."""
        self._thread = None
        self._pending_lock = threading.Lock()
        self.memory.after_fork()
        self.text.after_fork()

    def _run(self) -> None:
        # Whoosh's term dictionaries are not read ahead: event searches no longer ask
        # Whoosh, and the other collections' are small.
        while not self._stop.is_set():
            self._wake.wait(1.0)
            if self._stop.is_set():
                break
            if not self._wake.is_set():
                continue
            # A burst gathers into one commit; a steady stream of writes makes at most
            # one commit per FLUSH_INTERVAL: a Whoosh commit costs about the same for
            # one document or ten (it was a quarter of a serving worker's CPU per write
            # at 50 ms, bench/RESULTS.md pushfast6), and lists stay exact meanwhile
            # (pending paths are matched in memory).
            self._stop.wait(max(GATHER_SECONDS,
                                self._flushed + FLUSH_INTERVAL - time.monotonic()))
            self._wake.clear()
            try:
                self._flushed = time.monotonic()
                self.flush()
                self.memory.rebuild_if_stale()
            except Exception:
                log.exception("index update failed; will retry")
                time.sleep(1.0)
                self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None
        self.text.close()

    # -- queries -------------------------------------------------------------------
    def warm(self, view: CatalogVersion) -> None:
        """What every search of `view` reads besides the postings (`Calendar.warm`)."""
        self._known(view)

    @staticmethod
    def _known(view: CatalogVersion) -> textsearch.KnownIds:
        return view.derive("known-ids",  # type: ignore[return-value]
                           lambda: textsearch.KnownIds(view.records))

    def search_events(self, view: CatalogVersion, text: str) -> np.ndarray:
        """`/events?search=`: ids of the matching events (`reader.Reader.search_events`)."""
        return self.search(view, "events", text, EVENT_SEARCH_FIELDS)

    def search(self, view: CatalogVersion, collection: str, text: str,
               fields: tuple[str, ...]) -> np.ndarray:
        """Ids of the records of a collection matching a search string (exact set, as
        a sorted int64 array)."""
        terms = SearchTerms(text)
        if collection == self.memory.collection and fields == EVENT_SEARCH_FIELDS:
            ids = self.memory.search(view, terms.include, terms.exclude)
            return self._phrases(view, terms, fields, self._known(view).filter(ids))
        pending = self.pending()
        found = self.text.search_ids(terms.query(collection, fields)) if (
            len(pending) < max(1000, len(view.paths) // 2)) else None
        if found is None:
            # No usable index (first build still running): match everything in Python.
            return match_in_memory(view, collection, terms, fields)
        stale_ids = {i for p in pending if (i := view.paths.get(p)) is not None}
        # A pending path's old document may still be in the index: trust memory there.
        ids = self._known(view).filter(found)
        if stale_ids:
            ids = ids[~np.isin(ids, np.fromiter(stale_ids, np.int64))]
            again = [rid for rid in stale_ids
                     if (r := view.records[rid]).collection == collection
                     and terms.matches(r, fields)]
            if again:
                ids = np.union1d(ids, np.array(again, np.int64))
        # Ids whose document sits at another (pending) path are covered above.
        return self._phrases(view, terms, fields, ids)

    @staticmethod
    def _phrases(view: CatalogVersion, terms: SearchTerms, fields: tuple[str, ...],
                 ids: np.ndarray) -> np.ndarray:
        """Words with punctuation must occur as written (the tokens narrowed first)."""
        if (terms.phrases or terms.excluded_phrases) and len(ids):
            return ids[[terms.phrases_match(view.records[int(i)], fields) for i in ids]]
        return ids
