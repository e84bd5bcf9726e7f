"""The words of a collection's records as in-memory postings, built from the catalog
(issue 26): what answers `search=` from the first request, whether or not Whoosh's
on-disk index exists yet.

Reading postings from Whoosh needed its index built first (minutes at 100,000 events
on a fresh deployment, every search meanwhile a Python scan of every record), and a
worker decoded a common word's postings the first time a search met it (276 ms for
"e", whose terms are most of the vocabulary). Here every posting is decoded once, at
load, straight from the records' words:

- the vocabulary is one byte string (`\\n` after each term), so the terms holding a
  search word (WordPress's `LIKE '%word%'`) are found by vectorised byte comparisons
  whose cost is the vocabulary's size, however many terms match ("1" is in 50,000
  title numbers);
- each term's documents are record ranks (places in the sorted ids), grouped by term
  (CSR: `offsets`, `ranks`); the most frequent terms are kept as boolean masks instead
  (`MASK_BUDGET`), so a word in most terms is a few mask ORs, not millions of scattered
  writes;
- the result of a search is a boolean mask over the ranks: its ids come out sorted.

Built in forked children at large sizes (`parallel.run`, as the catalog parses), so the
master of a preloaded server pays little wall-clock time and the workers share the
arrays copy-on-write. A `Postings` is immutable; what changed since it was built is the
caller's business (`index.CalendarIndex` re-checks those records in Python).
"""

from __future__ import annotations

import array
import pickle
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from ..model.records import Record
from ..store import atomic, parallel
from .catalog import Catalog
from .version import CatalogVersion

# Above this many records the words are gathered in two processes (a fork and pickling
# each half's arrays back cost ~0.1 s; tokenizing 100,000 events ~3 s).
PARALLEL_MIN = 20_000
# Bytes of boolean masks kept for the most frequent terms (one byte per record each).
MASK_BUDGET = 48 << 20
# A term gets a mask when it is held by at least 1/MASK_SHARE of the records.
MASK_SHARE = 32
_NL = 10  # b"\n"

# A record's distinct, lowercased words, UTF-8 encoded (`index.word_set`).
Words = Callable[[Record], Iterable[bytes]]
_ARRAYS = ("ids", "lexicon", "starts", "df", "slot", "masks", "ranks", "offsets")
SAVE_FORMAT = 1


def _gather(records: Sequence[Record], words: Words, lo: int, hi: int
            ) -> tuple[list[bytes], np.ndarray, np.ndarray]:
    """(local vocabulary, term number of each posting, postings per record) of
    records[lo:hi]."""
    vocab: dict[bytes, int] = {}
    add = vocab.setdefault
    # 4 bytes a posting, not a Python int each: part of this runs in the loading
    # process, whose memory the forked workers inherit.
    terms = array.array("i")
    counts = np.zeros(hi - lo, np.int32)
    for i in range(lo, hi):
        found = [add(w, len(vocab)) for w in words(records[i])]
        counts[i - lo] = len(found)
        terms.extend(found)
    return list(vocab), np.frombuffer(terms, np.int32).copy(), counts


class Postings:
    """Which records hold which words, for substring searches over those words."""

    def __init__(self, records: Sequence[Record], words: Words,
                 workers: int | None = None) -> None:
        """`records` sorted by id (a record's rank is its place); `words(record)` its
        distinct, lowercased words."""
        n = len(records)
        self.count = n
        self.ids = np.fromiter((r.id for r in records), np.int64, n)
        if workers is None:
            workers = 2 if n >= PARALLEL_MIN else 1
        workers = max(1, min(workers, n))
        bounds = [(n * k // workers, n * (k + 1) // workers) for k in range(workers)]
        parts = parallel.run(bounds, lambda b: _gather(records, words, *b),
                             lambda b, w: bounds.index(b), workers=workers)
        vocab: dict[bytes, int] = {}
        add = vocab.setdefault
        term_parts, count_parts = [], []
        for local, terms, counts in parts:
            remap = np.fromiter((add(w, len(vocab)) for w in local), np.int32, len(local))
            term_parts.append(remap[terms] if len(terms) else terms)
            count_parts.append(counts)
        terms = np.concatenate(term_parts) if term_parts else np.empty(0, np.int32)
        counts = np.concatenate(count_parts) if count_parts else np.empty(0, np.int32)
        self._index_terms(list(vocab), terms, counts)

    def _index_terms(self, vocab: list[bytes], terms: np.ndarray, counts: np.ndarray
                     ) -> None:
        n, size = self.count, len(vocab)
        text = b"\n".join(vocab) + b"\n" if vocab else b""
        self.lexicon = np.frombuffer(text, np.uint8)
        ends = np.flatnonzero(self.lexicon == _NL)
        self.starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64) if size \
            else np.empty(0, np.int64)
        self._term_of_bytes()
        df = np.bincount(terms, minlength=size).astype(np.int64)
        self.df = df
        # The most frequent terms as masks, within the budget.
        frequent = np.flatnonzero(df * MASK_SHARE >= max(n, 1))
        frequent = frequent[np.argsort(-df[frequent], kind="stable")]
        frequent = np.sort(frequent[:MASK_BUDGET // max(n, 1)])
        self.slot = np.full(size, -1, np.int32)
        self.slot[frequent] = np.arange(len(frequent), dtype=np.int32)
        ranks = np.repeat(np.arange(n, dtype=np.int32), counts)
        order = np.argsort(terms, kind="stable")  # by term, ranks ascending within
        by_term, ranks = terms[order], ranks[order]
        self.masks = np.zeros((len(frequent), n), np.bool_)
        in_mask = self.slot[by_term]
        keep = in_mask < 0
        self.masks[in_mask[~keep], ranks[~keep]] = True
        self.ranks = ranks[keep]
        kept = np.where(self.slot < 0, df, 0)
        self.offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
        for name in _ARRAYS:
            getattr(self, name).setflags(write=False)

    def _term_of_bytes(self) -> None:
        """`term_of[i]`: the term byte i of the lexicon belongs to (a gather per match
        rather than a binary search: "1" matches 100,000 bytes at 100k events)."""
        lengths = np.diff(np.append(self.starts, len(self.lexicon)))
        self.term_of = np.repeat(np.arange(len(self.starts), dtype=np.int32), lengths)
        self.term_of.setflags(write=False)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in _ARRAYS) + self.term_of.nbytes

    def save(self, path: Path, manifest: dict) -> None:
        """The arrays (`np.save`, no pickling) and, after them, what they were built
        from (`manifest`: path -> (file stat, id)); replaced atomically."""
        with atomic.replacing(path, binary=True) as fh:
            pickle.dump((SAVE_FORMAT, self.count), fh, protocol=pickle.HIGHEST_PROTOCOL)
            for name in _ARRAYS:
                np.save(fh, getattr(self, name), allow_pickle=False)
            pickle.dump(manifest, fh, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, path: Path) -> tuple[Postings, dict] | None:
        """(postings, manifest) saved by `save`; None when missing, of another format
        or damaged (the caller builds them again)."""
        try:
            with open(path, "rb") as fh:
                head = pickle.load(fh)
                if not (isinstance(head, tuple) and head[:1] == (SAVE_FORMAT,)):
                    return None
                self = cls.__new__(cls)
                self.count = int(head[1])
                for name in _ARRAYS:
                    array = np.load(fh, allow_pickle=False)
                    array.setflags(write=False)
                    setattr(self, name, array)
                manifest = pickle.load(fh)
            self._term_of_bytes()
        except (OSError, ValueError, EOFError, IndexError, TypeError, pickle.UnpicklingError):
            return None
        if not isinstance(manifest, dict) or len(self.ids) != self.count:
            return None
        return self, manifest

    def terms_containing(self, needle: str) -> np.ndarray:
        """Numbers (ascending, distinct) of the terms containing `needle` (no line
        break in it). UTF-8 is self-synchronising: a byte match is a character match."""
        want = needle.encode("utf-8", "surrogatepass")
        lex = self.lexicon
        if not want or len(want) > len(lex):
            return np.empty(0, np.int64)
        at = np.flatnonzero(lex[:len(lex) - len(want) + 1] == want[0])
        for j in range(1, len(want)):
            if not len(at):
                break
            at = at[lex[at + j] == want[j]]
        terms = self.term_of[at]  # ascending, as `at` is
        if len(terms) > 1:
            terms = terms[np.concatenate(([True], terms[1:] != terms[:-1]))]
        return terms

    def holding(self, needle: str) -> np.ndarray:
        """Boolean mask over the ranks: the records holding a word that contains
        `needle` (a fresh array, the caller's to change)."""
        picked = self.terms_containing(needle)
        slots = self.slot[picked]
        dense = slots[slots >= 0]
        if len(dense) == 1:
            mask = self.masks[dense[0]].copy()
        elif len(dense):
            mask = np.logical_or.reduce(self.masks[dense], axis=0)
        else:
            mask = np.zeros(self.count, np.bool_)
        rest = picked[slots < 0]
        if len(rest):
            starts = self.offsets[rest]
            lens = self.offsets[rest + 1] - starts
            total = int(lens.sum())
            if total:
                # Every posting of every picked term in one gather: position k of the
                # output reads ranks[start of its term + k - postings before its term].
                shift = np.repeat(starts - (np.cumsum(lens) - lens), lens)
                mask[self.ranks[np.arange(total) + shift]] = True
        return mask

    def search(self, include: Iterable[str], exclude: Iterable[str]) -> np.ndarray:
        """Sorted ids of the records holding every `include` word and no `exclude` word
        (each as a substring of one of their words)."""
        mask: np.ndarray | None = None
        for word in dict.fromkeys(include):
            found = self.holding(word)
            mask = found if mask is None else mask & found
            if not mask.any():
                return self.ids[:0]
        if mask is None:
            mask = np.ones(self.count, np.bool_)
        for word in dict.fromkeys(exclude):
            if not mask.any():
                break
            mask &= ~self.holding(word)
        return self.ids[mask]


class LivePostings:
    """A collection's `Postings` following the catalog. Built at construction (the
    master's load, before a preloaded server forks), or read from `cache_file` when
    saved before (the paths that differ since are stale); the paths changed since are
    marked (`mark`) and their records matched in Python per search (their words kept
    per record object, so a search costs a byte find per stale record), until `REBUILD`
    of them make `rebuild_if_stale` (the indexer thread) build the postings again."""

    REBUILD = 2000

    def __init__(self, catalog: Catalog, collection: str, words: Words,
                 cache_file: Path | None = None, workers: int | None = None) -> None:
        self.catalog = catalog
        self.collection = collection
        self.words = words
        self.cache_file = cache_file
        self._dirty: dict[str, int] = {}  # path -> change counter
        self._counter = 0
        self._lock = threading.Lock()
        self._texts: dict[int, tuple[Record, bytes]] = {}  # id -> (record, its words)
        saved = Postings.load(cache_file) if cache_file is not None else None
        if saved is not None:
            stale = self._differences(saved[1])
            if len(stale) < self.REBUILD:
                self.postings = saved[0]
                self.mark(stale)
                return
        self.postings = self._build(workers)

    def _state(self) -> tuple[list[Record], dict[str, tuple[tuple[int, int] | None, int]]]:
        """The collection's records and path -> (stat, id), read together."""
        with self.catalog.lock:
            records = self.catalog.current.all(self.collection)
            stats = self.catalog.stats
            return records, {r.path: (stats.get(r.path), r.id) for r in records}

    def _differences(self, manifest: dict) -> set[str]:
        """Paths whose record is not what the saved postings hold. One pass over the
        manifest (this runs at every start); the collection's own paths are listed only
        when their number says one is new."""
        with self.catalog.lock:
            view, stats = self.catalog.current, self.catalog.stats
            paths = view.paths
            stale = {p for p, (stat, rid) in manifest.items()
                     if paths.get(p) != rid or stats.get(p) != stat}
            if len(view.slugs[self.collection]) != len(manifest) - len(stale) or stale:
                stale |= {r.path for r in view.all(self.collection) if r.path not in manifest}
        return stale

    def _build(self, workers: int | None = None) -> Postings:
        records, manifest = self._state()
        records.sort(key=lambda r: r.id)
        postings = Postings(records, self.words, workers)
        if self.cache_file is not None:
            try:
                postings.save(self.cache_file, manifest)
            except OSError:  # a read-only cache: build again at the next start
                pass
        return postings

    def mark(self, relpaths: Iterable[str]) -> None:
        with self._lock:
            for path in relpaths:
                self._counter += 1
                self._dirty[path] = self._counter

    def stale(self) -> int:
        return len(self._dirty)

    def rebuild_if_stale(self) -> bool:
        """Build the postings again when too many records changed since (here, in this
        process: no fork in a serving process with threads)."""
        if len(self._dirty) < self.REBUILD:
            return False
        with self._lock:
            marked = dict(self._dirty)
        # Every change marked so far is in the current version: listeners hear of a
        # version once it is published.
        fresh = self._build(workers=1)
        with self._lock:
            self.postings = fresh
            for path, n in marked.items():
                if self._dirty.get(path) == n:
                    del self._dirty[path]
            self._texts = {}
        return True

    def after_fork(self) -> None:
        self._lock = threading.Lock()

    def search(self, view: CatalogVersion, include: list[str], exclude: list[str]
               ) -> np.ndarray:
        """Sorted ids of the records of `view` (of the collection) holding every
        `include` word and no `exclude` word; the postings answer for records unchanged
        since they were built, Python for the others. Ids the postings hold that `view`
        does not are the caller's to drop."""
        with self._lock:
            postings, stale_paths = self.postings, list(self._dirty)
        ids = postings.search(include, exclude)
        stale = [i for p in stale_paths if (i := view.paths.get(p)) is not None]
        if not stale:
            return ids
        ids = ids[~np.isin(ids, np.array(stale, np.int64))]
        want = [t.encode("utf-8", "surrogatepass") for t in include]
        avoid = [t.encode("utf-8", "surrogatepass") for t in exclude]
        again = [rid for rid in stale if self._matches(view.records[rid], want, avoid)]
        return np.union1d(ids, np.array(again, np.int64)) if again else ids

    def _matches(self, record: Record, include: list[bytes], exclude: list[bytes]) -> bool:
        if record.collection != self.collection:
            return False
        known = self._texts.get(record.id)
        if known is None or known[0] is not record:
            known = (record, b"\n".join(self.words(record)))
            self._texts[record.id] = known
        text = known[1]
        return all(t in text for t in include) and not any(t in text for t in exclude)
