"""Reading the Whoosh index as numpy arrays: the fast path of `TextIndex.search`.

Whoosh's matchers walk postings one document at a time in Python: at 100,000 events a
word held by most of them ("jazz" in the generated calendars) took ~0.35 s to
enumerate and map to ids. Here the index (same files, same writer) is read per
segment and per term straight from the posting blocks into numpy arrays:

- a `Snapshot` is one generation of the index: one reader per segment, the `rid`
  column of each segment sorted (`_Order`: record ids in order, and each document's
  rank in it), and which documents are deleted (from the TOC);
- the documents of a term are decoded once, as a boolean mask in rank order (or the
  ranks themselves when the term is rare), and kept in a process-wide LRU bounded in
  bytes (`PostingCache`), keyed by the segment's id: a segment never changes once
  written (deletions live in the TOC), so entries stay valid across generations and
  only the segments a commit adds or merges are read again. A search word is the
  union of the terms that contain it ("ja", "azz", "jazz" share the decoded "jazz"),
  found with `bytes.find` in the segment's term dictionary held as one string
  (`_Lexicon`, cached by segment id too); a term held by one document names it in
  its term info's head, so the thousands of terms a digit is in cost one gather;
- a query (the `And`/`Or`/`AndNot`/`Term`/`Prefix`/`Substring` tree
  `SearchTerms.query` builds)
  is evaluated per segment with mask operations; the ids of the final mask come out
  sorted (rank order), distinct, as int64. Any other query node falls back to
  Whoosh's own matchers.

Another worker's commit may merge segments away while this process opens or reads
them: opening retries on the next generation, and a search that meets a missing file
reopens and runs again (`TextIndex.search_ids`).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import pickle
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
from whoosh import columns as wcolumns
from whoosh import index as windex
from whoosh import query as wq
from whoosh.codec.whoosh3 import W3TermInfo, W3TermsReader
from whoosh.reading import ReaderClosed
from whoosh.searching import Searcher

_MAGIC_LEN = 4  # a posting extent starts with Whoosh's 4-byte block magic
_EMPTY = np.empty(0, np.int32)
# Terms of a prefix held by at most this many documents are decoded on the spot rather
# than cached one by one (W3's block size: one block, read in a few microseconds).
_SMALL = 128
# The fixed head of a W3 term info (`W3TermInfo._struct`, "!BfIBBfII"): flags,
# weight, document frequency, lengths, max weight, first and last document.
_INFO_HEAD = np.dtype([("flags", "u1"), ("weight", ">f4"), ("df", ">u4"), ("minlen", "u1"),
                       ("maxlen", "u1"), ("maxweight", ">f4"), ("minid", ">u4"),
                       ("maxid", ">u4")])
# What a cache entry costs beyond its array (key tuple, bytes, array header).
_ENTRY_OVERHEAD = 300
OPEN_RETRIES = 20
# How a query word meets the terms of a field.
TERM, PREFIX, SUBSTRING = "term", "prefix", "substring"


class Substring(wq.Wildcard):
    """Documents holding a term that contains `needle` (WordPress's `LIKE '%word%'`).
    To Whoosh's own matchers (the fallback) it is the glob `*needle*`; the numpy
    reader finds the terms in the segment's `_Lexicon` instead."""

    def __init__(self, fieldname: str, needle: str) -> None:
        if not needle or any(c in needle for c in "*?[]"):
            raise ValueError(f"not a search word: {needle!r}")  # it would be a glob
        super().__init__(fieldname, f"*{needle}*")
        self.needle = needle


class PostingCache:
    """Decoded document numbers per (segment id, field, kind, term bytes): an LRU
    bounded by the bytes of the arrays it holds."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: tuple) -> np.ndarray | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return found

    def put(self, key: tuple, docs: np.ndarray) -> None:
        if docs.nbytes > self.max_bytes // 4:
            return  # one huge entry would push out everything else
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.bytes -= old.nbytes + _ENTRY_OVERHEAD
            self.items[key] = docs
            self.bytes += docs.nbytes + _ENTRY_OVERHEAD
            while self.bytes > self.max_bytes and self.items:
                _k, dropped = self.items.popitem(last=False)
                self.bytes -= dropped.nbytes + _ENTRY_OVERHEAD

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.bytes = 0


POSTINGS = PostingCache()
# Record-id order per segment id (immutable once written); bounded anyway.
_ORDERS: OrderedDict[str, _Order] = OrderedDict()
_ORDERS_LOCK = threading.Lock()
_ORDERS_KEEP = 64


def _decode_blocks(buf: bytes) -> np.ndarray:
    """Document numbers of one posting list in W3 block format (`W3PostingsWriter`):
    after 4 magic bytes, blocks of [int32 length (negative for the last block),
    pickled info tuple, zlib-compressed pickled (delta ids, weights, values)]. Each
    block's ids are delta-encoded from 0."""
    stream = io.BytesIO(buf)
    pos = _MAGIC_LEN
    end = len(buf)
    chunks: list[tuple] = []
    while pos < end:
        length = int.from_bytes(buf[pos:pos + 4], "big", signed=True)
        last = length < 0
        length = abs(length)
        stream.seek(pos + 4)
        info = pickle.load(stream)
        datapos = stream.tell()
        nextpos = pos + 4 + length
        data = buf[datapos:nextpos]
        if info[3]:
            data = zlib.decompress(data)
        chunks.append(pickle.loads(data)[0])
        pos = nextpos
        if last:
            break
    if not chunks:
        return _EMPTY
    lens = np.fromiter(map(len, chunks), np.int64, len(chunks))
    deltas = np.fromiter(itertools.chain.from_iterable(chunks), np.int64, int(lens.sum()))
    total = np.cumsum(deltas)
    # Each block restarts from 0: subtract the running sum at the end of the previous
    # block from every element of the block.
    ends = np.cumsum(lens)
    before = np.concatenate(([0], total[ends[:-1] - 1]))
    return (total - np.repeat(before, lens)).astype(np.int32)


class _Order:
    """A segment's documents in record-id order (immutable, like the segment): `ids`
    the sorted rid column, `rank[docnum]` a document's place in it. Masks are kept in
    this order, so the ids of a mask come out sorted without sorting."""

    def __init__(self, rids: np.ndarray) -> None:
        order = np.argsort(rids, kind="stable")
        self.ids = rids[order]
        self.rank = np.empty(len(rids), np.int32)
        self.rank[order] = np.arange(len(rids), dtype=np.int32)
        self.nbytes = self.ids.nbytes + self.rank.nbytes


class SegmentView:
    """One segment of one generation."""

    def __init__(self, reader: object) -> None:
        self.reader = reader
        segment = reader.segment()
        self.segid = segment.segment_id()
        self.count = reader.doc_count_all()
        self.order = _segment_order(self.segid, reader, self.count)
        self.alive: np.ndarray | None = None  # in rank order; None: nothing deleted
        if reader.has_deletions():
            deleted = np.fromiter(segment.deleted_docs(), np.int64)
            alive = np.ones(self.count, np.bool_)
            alive[self.order.rank[deleted[deleted < self.count]]] = False
            self.alive = alive
        terms = getattr(reader, "_terms", None)
        self.terms = terms if isinstance(terms, W3TermsReader) else None

    def mask(self, field: str, text: bytes, kind: str = TERM) -> np.ndarray:
        """Boolean mask (rank order) of the documents holding the term (`TERM`), any
        term starting with `text` (`PREFIX`) or containing it (`SUBSTRING`);
        read-only when it comes from the cache.

        Cached per term, so "ja", "azz" and "jazz" share the decoded "jazz"; a word
        that expands to many terms (title numbers: "12" is in 1,111 terms at 100k
        events as a prefix, 4,000 as a substring) is cached as a whole too, so its
        terms are not listed again."""
        whole = (self.segid, field, kind, text)
        found = POSTINGS.get(whole)
        if found is not None:
            return self._as_mask(found)
        if self.terms is None:  # another codec: Whoosh's API, cached per query word
            found = self._entry(self.order.rank[self._read_slow(field, text, kind)])
            POSTINGS.put(whole, found)
            return self._as_mask(found)
        terms = self.terms
        keybytes = terms._keycoder(field, text)
        if kind == TERM:
            raw = terms._tindex.get(keybytes)
            found = self._entry(self.order.rank[self._decode(W3TermInfo.from_bytes(raw))]
                                if raw is not None else _EMPTY)
            POSTINGS.put(whole, found)
            return self._as_mask(found)
        if kind == PREFIX:
            skip = len(keybytes) - len(text)  # the field number before the term
            items = itertools.takewhile(lambda kv: kv[0].startswith(keybytes),
                                        terms._tindex.items_from(keybytes))
            mask, count, cached = self._union(
                field, ((k[skip:], v) for k, v in items))
        else:
            mask, count, cached = self._contains(field, text)
        if count > 8:
            found = self._entry(np.flatnonzero(mask)) if not cached else mask
            found.setflags(write=False)
            POSTINGS.put(whole, found)
        return mask

    def _contains(self, field: str, text: bytes) -> tuple[np.ndarray, int, bool]:
        """(mask, terms, whether a term's mask was merged) for the terms holding
        `text`. A term held by one document names it in its head (a title number,
        a rare word: most of the terms a letter or digit is in), so those are one
        gather however many; only the others are decoded or looked up one by one."""
        lexicon = _lexicon(self, field)
        picked = lexicon.find(text)
        one = lexicon.df[picked] == 1
        mask, _count, cached = self._union(field, lexicon.items(picked[~one]))
        if one.any():
            if not mask.flags.writeable:  # one cached term's mask, shared
                mask = mask.copy()
            mask[self.order.rank[lexicon.first[picked[one]]]] = True
        return mask, len(picked), cached

    def _union(self, field: str, items: Iterable[tuple[bytes, bytes]]
               ) -> tuple[np.ndarray, int, bool]:
        """(mask, terms, whether a cached mask was merged) of the union of the
        documents of these (term, term info) pairs. A mask that is one cached term's
        is shared read-only."""
        masks: list[np.ndarray] = []
        ranks: list[np.ndarray] = []
        single: list[int] = []  # documents of terms held by one document (inlined)
        count = 0
        for term, raw in items:
            count += 1
            info = W3TermInfo.from_bytes(raw)
            if info.is_inlined():
                single.extend(info.inlined_postings()[0])
                continue
            if info.doc_frequency() <= _SMALL:  # rare: decoding beats a cache entry
                single.extend(self._decode_small(info))
                continue
            key = (self.segid, field, TERM, term)
            entry = POSTINGS.get(key)
            if entry is None:
                entry = self._entry(self.order.rank[self._decode(info)])
                POSTINGS.put(key, entry)
            (masks if entry.dtype == np.bool_ else ranks).append(entry)
        if len(masks) + len(ranks) == 1 and not single:
            return self._as_mask((masks or ranks)[0]), count, True
        mask = np.zeros(self.count, np.bool_)
        for m in masks:
            mask |= m
        if single:
            ranks.append(self.order.rank[np.array(single, np.int64)])
        if ranks:
            mask[np.concatenate(ranks)] = True
        return mask, count, bool(masks)

    def _entry(self, ranks: np.ndarray) -> np.ndarray:
        """What the cache keeps of a document set: its ranks when rare, else a mask."""
        if len(ranks) * 32 < self.count:
            found = ranks.astype(np.int32, copy=False)
        else:
            found = np.zeros(self.count, np.bool_)
            found[ranks] = True
        found.setflags(write=False)
        return found

    def _as_mask(self, found: np.ndarray) -> np.ndarray:
        if found.dtype == np.bool_:
            return found
        mask = np.zeros(self.count, np.bool_)
        mask[found] = True
        return mask

    def _decode_small(self, info: W3TermInfo) -> list[int]:
        """Document numbers of a term held by at most `_SMALL` documents (one block)."""
        offset, length = info.extent()
        if isinstance(length, tuple):
            length = length[0]
        buf = self.terms._postfile.get(offset, length)
        size = int.from_bytes(buf[_MAGIC_LEN:_MAGIC_LEN + 4], "big", signed=True)
        if size >= 0:  # more than one block after all
            return _decode_blocks(buf).tolist()
        stream = io.BytesIO(buf)
        stream.seek(_MAGIC_LEN + 4)
        block = pickle.load(stream)
        data = buf[stream.tell():]
        if block[3]:
            data = zlib.decompress(data)
        return list(itertools.accumulate(pickle.loads(data)[0]))

    def _decode(self, info: W3TermInfo) -> np.ndarray:
        """Document numbers of one term."""
        if info.is_inlined():
            return np.array(info.inlined_postings()[0], np.int64)
        offset, length = info.extent()
        if isinstance(length, tuple):  # W3TermInfo.from_bytes leaves it packed
            length = length[0]
        return _decode_blocks(self.terms._postfile.get(offset, length))

    def _read_slow(self, field: str, text: bytes, kind: str) -> np.ndarray:
        """Any other codec: Whoosh's own term and matcher API."""
        reader = self.reader
        if kind == SUBSTRING:
            texts = [t for t in reader.lexicon(field) if text in t]
        else:
            texts = list(reader.expand_prefix(field, text)) if kind == PREFIX else [text]
        found = np.zeros(self.count, np.bool_)
        for t in texts:
            if (field, t) in reader:
                found[np.fromiter(reader.postings(field, t).all_ids(), np.int64)] = True
        return np.flatnonzero(found).astype(np.int32)


_KINDS = {wq.Term: TERM, wq.Prefix: PREFIX, Substring: SUBSTRING}


class _Lexicon:
    """One field's terms in one segment as one byte string (`\\n` after each term), so
    the terms containing a word are found by `bytes.find` over it; immutable like the
    segment. Term infos are kept so postings need no second look-up, and their heads'
    document frequency and first document as arrays."""

    def __init__(self, seg: SegmentView, field: str) -> None:
        terms = seg.terms
        keybytes = terms._keycoder(field, b"")
        skip = len(keybytes)
        words: list[bytes] = []
        self.infos: list[bytes] = []
        for k, v in terms._tindex.items_from(keybytes):
            if not k.startswith(keybytes):
                break
            words.append(k[skip:])
            self.infos.append(v)
        self.text = b"\n".join(words) + b"\n" if words else b""
        lens = np.fromiter(map(len, words), np.int64, len(words)) + 1
        self.starts = np.cumsum(lens) - lens
        size = _INFO_HEAD.itemsize
        heads = np.frombuffer(b"".join(v[:size] for v in self.infos), _INFO_HEAD)
        self.df = heads["df"].astype(np.int64)
        self.first = heads["minid"].astype(np.int64)

    def find(self, needle: bytes) -> np.ndarray:
        """Numbers (ascending) of the terms containing `needle` (no `\\n` in it)."""
        text = self.text
        find = text.find
        hits = []
        at = find(needle)
        while at >= 0:
            hits.append(at)
            at = find(needle, find(b"\n", at) + 1)  # on from the next term
        return np.searchsorted(self.starts, np.array(hits, np.int64), side="right") - 1

    def items(self, picked: np.ndarray) -> Iterator[tuple[bytes, bytes]]:
        """(term, term info) of the terms `picked`."""
        text, starts, infos = self.text, self.starts, self.infos
        for i in picked.tolist():
            start = int(starts[i])
            yield text[start:text.index(b"\n", start)], infos[i]


# Lexicons per (segment id, field): segments never change.
_LEXICONS: OrderedDict[tuple[str, str], _Lexicon] = OrderedDict()
_LEXICONS_KEEP = 48


def _lexicon(seg: SegmentView, field: str) -> _Lexicon:
    key = (seg.segid, field)
    with _ORDERS_LOCK:
        found = _LEXICONS.get(key)
        if found is not None:
            _LEXICONS.move_to_end(key)
            return found
    found = _Lexicon(seg, field)
    with _ORDERS_LOCK:
        _LEXICONS[key] = found
        while len(_LEXICONS) > _LEXICONS_KEEP:
            _LEXICONS.popitem(last=False)
    return found


def _segment_order(segid: str, reader: object, count: int) -> _Order:
    with _ORDERS_LOCK:
        found = _ORDERS.get(segid)
        if found is not None and len(found.ids) == count:
            _ORDERS.move_to_end(segid)
            return found
    col = reader.column_reader("rid", translate=False)
    rids = None
    if isinstance(col, wcolumns.NumericColumn.Reader) and col._typecode == "q":
        # Fixed-size big-endian values; documents past the last written one (and any
        # with the default value at the end) read as the default.
        raw = col._dbfile.get(col._basepos, col._count * col._fixedlen)
        rids = np.full(count, col._default, np.int64)
        rids[:col._count] = np.frombuffer(raw, ">i8")
    if rids is None:
        rids = np.fromiter((int(v) for v in col), np.int64, count)
    found = _Order(rids)
    with _ORDERS_LOCK:
        _ORDERS[segid] = found
        while len(_ORDERS) > _ORDERS_KEEP:
            _ORDERS.popitem(last=False)
    return found


class Unsupported(Exception):
    """A query node this reader does not evaluate (Whoosh's matchers answer it)."""


class Snapshot:
    """One generation of the index, read as numpy arrays."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ix = windex.open_dir(str(folder))
        self.reader = self.ix.reader()
        self.generation = self.reader.generation()
        self.schema = self.reader.schema
        self.segments = [SegmentView(r) for r, _base in self.reader.leaf_readers()]
        self.stamp = self._stamp()

    def _stamp(self) -> tuple[int, int]:
        """Identity of this generation's TOC file: a rebuild replaces the whole folder
        and may reach the same generation number."""
        st = os.stat(self.folder / windex.TOC._filename(self.ix.indexname, self.generation))
        return st.st_ino, st.st_mtime_ns

    def up_to_date(self) -> bool:
        try:
            return (self.ix.latest_generation() == self.generation
                    and self._stamp() == self.stamp)
        except OSError:
            return False

    def close(self) -> None:
        with contextlib.suppress(ReaderClosed, OSError):  # nothing left to release
            self.reader.close()

    def ids(self, q: wq.Query) -> np.ndarray:
        """Sorted distinct record ids of the live documents matching `q`."""
        out = []
        for seg in self.segments:
            if not seg.count:
                continue
            try:
                mask = self._eval(seg, q)
            except Unsupported:
                mask = self._whoosh(seg, q)
            if seg.alive is not None:
                mask = mask & seg.alive
            out.append(seg.order.ids[mask])
        if not out:
            return np.empty(0, np.int64)
        if len(out) == 1:
            ids = out[0]
        else:  # sorted runs: timsort merges them in linear time
            ids = np.sort(np.concatenate(out), kind="stable")
        if len(ids) > 1:  # one id in two documents (two paths claimed it)
            dup = ids[1:] == ids[:-1]
            if dup.any():
                ids = ids[np.concatenate(([True], ~dup))]
        return ids

    def warm(self, fields: Iterable[str]) -> None:
        """Read the term dictionaries of these fields now (~0.4 s at 100k events),
        rather than in the first search that needs them."""
        for seg in self.segments:
            if seg.terms is not None:
                for field in fields:
                    if field in self.schema:
                        _lexicon(seg, field)

    def _bytes(self, field: str, text: str) -> bytes:
        return self.schema[field].to_bytes(text)

    def _eval(self, seg: SegmentView, q: wq.Query) -> np.ndarray:
        """Boolean mask in the segment's rank order; may be a shared read-only array."""
        kind = type(q)
        if kind is wq.Term or kind is wq.Prefix or kind is Substring:
            if q.fieldname not in self.schema:
                return np.zeros(seg.count, np.bool_)
            text = q.needle if kind is Substring else q.text
            tbytes = text if isinstance(text, bytes) else self._bytes(q.fieldname, text)
            return seg.mask(q.fieldname, tbytes, _KINDS[kind])
        if kind is wq.And:
            if not q.subqueries:
                return np.zeros(seg.count, np.bool_)
            subs = iter(q.subqueries)
            mask = self._eval(seg, next(subs))
            for sub in subs:
                if not mask.any():
                    break
                mask = mask & self._eval(seg, sub)
            return mask
        if kind is wq.Or:
            mask = np.zeros(seg.count, np.bool_)
            for sub in q.subqueries:
                mask |= self._eval(seg, sub)
            return mask
        if kind is wq.AndNot:
            mask = self._eval(seg, q.a)
            return mask & ~self._eval(seg, q.b) if mask.any() else mask
        if isinstance(q, type(wq.NullQuery)):
            return np.zeros(seg.count, np.bool_)
        raise Unsupported(kind.__name__)

    def _whoosh(self, seg: SegmentView, q: wq.Query) -> np.ndarray:
        mask = np.zeros(seg.count, np.bool_)
        searcher = Searcher(seg.reader, closereader=False)
        mask[seg.order.rank[np.fromiter(q.docs(searcher), np.int64)]] = True
        return mask


def open_snapshot(folder: Path, retries: int = OPEN_RETRIES,
                  sleep: Callable[[float], None] = time.sleep) -> Snapshot | None:
    """The latest generation, or None when there is no index. Another worker's commit
    may delete the files of the generation just read (merged segments, old TOC):
    then read the newest generation again."""
    for attempt in range(retries):
        if not windex.exists_in(str(folder)):
            return None
        try:
            return Snapshot(folder)
        except (FileNotFoundError, windex.EmptyIndexError):
            if attempt == retries - 1:
                raise
            sleep(0.01 * (attempt + 1))
    return None


# ------------------------------------------------------------------ known ids
class KnownIds:
    """Which ids are records of one catalog version: the index may hold a record this
    version does not have yet. Made once per version (`CatalogVersion.derive`): a
    dense mask when ids are dense, else the sorted ids, so filtering a search result
    is a vectorised gather rather than a Python loop per id."""

    def __init__(self, records: dict) -> None:
        keys = np.fromiter(records.keys(), np.int64, len(records))
        top = int(keys.max()) if len(keys) else -1
        self.dense = bool(len(keys)) and int(keys.min()) >= 0 and top < 4 * len(keys) + 4096
        if self.dense:
            self.table = np.zeros(top + 1, np.bool_)
            self.table[keys] = True
        else:
            self.table = np.sort(keys)

    def filter(self, ids: np.ndarray) -> np.ndarray:
        """The ids (in their order) that are records of the version."""
        table = self.table
        if not len(ids):
            return ids
        if self.dense:
            inside = (ids >= 0) & (ids < len(table))
            ok = inside.copy()
            ok[inside] = table[ids[inside]]
            return ids[ok]
        if not len(table):
            return ids[:0]
        at = np.clip(np.searchsorted(table, ids), 0, len(table) - 1)
        return ids[table[at] == ids]
