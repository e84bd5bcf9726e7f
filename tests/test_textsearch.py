"""The numpy reader of the Whoosh index (textsearch.py) against Whoosh's own matchers,
and searches that survive another writer merging segments away."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whoosh import index as windex

from calendar_app.catalog import index, textsearch
from calendar_app.model.records import Record

WORDS = ("jazz", "jazzy", "java", "blues", "bluegrass", "river", "rivet", "market", "film",
         "folk", "fold", "opera", "orchestra", "tango", "salsa", "zine", "poetry", "choir")
FIELDS = index.EVENT_SEARCH_FIELDS


def doc(rng: random.Random, rid: int) -> dict:
    def words(n: int) -> list[str]:
        return list(dict.fromkeys(rng.choice(WORDS) for _ in range(n)))

    d = {"key": f"events/e{rid}.yaml", "rid": rid, "collection": "events",
         "title": words(3) + [str(rid)], "description": words(8)}
    if rid % 3:
        d["excerpt"] = words(4)
    return d


def write(folder: Path, docs: list[dict], delete: list[int] = (), optimize: bool = False,
          create: bool = False) -> None:
    ix = (windex.create_in(str(folder), index.schema()) if create
          else windex.open_dir(str(folder)))
    writer = ix.writer(codec=index.LeanCodec())
    for rid in delete:
        writer.delete_by_term("key", f"events/e{rid}.yaml")
    for d in docs:
        writer.add_document(**d)
    writer.commit(optimize=optimize, merge=False)
    ix.close()


def whoosh_ids(folder: Path, q) -> set[int]:
    ix = windex.open_dir(str(folder))
    with ix.searcher() as s:
        col = s.reader().column_reader("rid")
        return {col[d] for d in s.docs_for_query(q)}


def queries(rng: random.Random) -> list[str]:
    out = ["jazz", "ja", "j", "blu", "river -rivet", "fol -folk", "zzz", "1", "12", "jazz blues",
           "o -opera -orchestra", "", "-jazz", "JAZZ Riv"]
    for _ in range(40):
        ws = [rng.choice(WORDS)[:rng.randint(1, 5)] for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.4:
            ws.append("-" + rng.choice(WORDS)[:rng.randint(2, 5)])
        out.append(" ".join(ws))
    return out


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[int, dict]]:
    """An index of several segments (posting lists spanning many blocks) with deletions."""
    rng = random.Random(3)
    folder = tmp_path / "whoosh"
    folder.mkdir()
    docs = {rid: doc(rng, rid) for rid in range(1, 1201)}
    write(folder, [docs[r] for r in range(1, 801)], create=True)
    write(folder, [docs[r] for r in range(801, 1101)], delete=range(5, 400, 7))
    for r in range(5, 400, 7):
        docs.pop(r)
    write(folder, [docs[r] for r in range(1101, 1201)], delete=[2, 900])
    docs.pop(2)
    docs.pop(900)
    # Re-added under the same key: the old document is deleted, the new one lives.
    docs[3] = {**doc(rng, 3), "title": ["rivet", "3"]}
    write(folder, [docs[3]], delete=[3])
    return folder, docs


def test_numpy_reader_matches_whoosh(built) -> None:
    """Same ids as Whoosh's matchers. Not compared with an exclusion: on an index with
    several segments and deletions, Whoosh 2.7.4's AndNot lets through documents that
    hold the excluded word ("river -rivet" listed a document with "rivet");
    `test_matches_python_semantics` checks those."""
    folder, _docs = built
    snap = textsearch.open_snapshot(folder)
    assert len(snap.segments) >= 3
    textsearch.POSTINGS.clear()
    for text in queries(random.Random(5)):
        q = index.SearchTerms(text).query("events", FIELDS)
        got = snap.ids(q)
        assert got.dtype == np.int64 and np.all(np.diff(got) > 0), text
        if "-" not in text:
            assert set(got.tolist()) == whoosh_ids(folder, q), text
        again = snap.ids(q)  # from the posting cache now
        assert np.array_equal(got, again), text
    snap.close()


def test_matches_python_semantics(built) -> None:
    """Every word inside some word of title/excerpt/description, all required,
    `-word` excluded: the same answer as `SearchTerms.matches` on the documents."""
    folder, docs = built
    snap = textsearch.open_snapshot(folder)
    for text in queries(random.Random(6)):
        terms = index.SearchTerms(text)
        want = set()
        for rid, d in docs.items():
            words = [w for f in FIELDS for w in d.get(f, ())]
            has = lambda t, words=words: any(t in w for w in words)
            if all(has(t) for t in terms.include) and not any(has(t) for t in terms.exclude):
                want.add(rid)
        assert set(snap.ids(terms.query("events", FIELDS)).tolist()) == want, text
    snap.close()


def test_search_survives_a_merge_by_another_writer(built) -> None:
    folder, _docs = built
    text = index.TextIndex(folder.parent)
    q = index.SearchTerms("tango").query("events", FIELDS)
    before = set(text.search_ids(q).tolist())
    assert before == whoosh_ids(folder, q)
    q2 = index.SearchTerms("bluegr").query("events", FIELDS)
    old2 = whoosh_ids(folder, q2)
    # Another worker adds documents and merges every segment into one: the segment
    # files this process has open are deleted.
    rng = random.Random(9)
    more = [{**doc(rng, rid), "title": ["tango", str(rid)]} for rid in range(2000, 2010)]
    write(folder, more, optimize=True)
    assert len(windex.open_dir(str(folder)).reader().leaf_readers()) == 1
    after = whoosh_ids(folder, q)
    assert after == before | set(range(2000, 2010))
    # Not refreshed yet: the old generation or the new one, never an error (the
    # postings of "bluegr" were never read: they come from the deleted files).
    assert set(text.search_ids(q2).tolist()) in (old2, whoosh_ids(folder, q2))
    text.refresh()
    assert set(text.search_ids(q).tolist()) == after
    assert set(text.search_ids(q2).tolist()) == whoosh_ids(folder, q2)
    text.close()


def test_search_reopens_when_files_vanish(built, monkeypatch) -> None:
    """A FileNotFoundError while opening or reading (another worker merged the
    segments away between reading the TOC and opening them) is retried on the
    newest generation instead of failing the request."""
    folder, _docs = built
    text = index.TextIndex(folder.parent)
    q = index.SearchTerms("jazz -blues").query("events", FIELDS)
    want = whoosh_ids(folder, q)
    real_init = textsearch.Snapshot.__init__
    real_ids = textsearch.Snapshot.ids
    failures = {"open": 2, "read": 2}

    def flaky_init(self, folder):
        if failures["open"]:
            failures["open"] -= 1
            raise FileNotFoundError("merged away")
        real_init(self, folder)

    def flaky_ids(self, q):
        if failures["read"]:
            failures["read"] -= 1
            raise FileNotFoundError("merged away")
        return real_ids(self, q)

    monkeypatch.setattr(textsearch.Snapshot, "__init__", flaky_init)
    monkeypatch.setattr(textsearch.Snapshot, "ids", flaky_ids)
    monkeypatch.setattr(textsearch.time, "sleep", lambda s: None)
    assert set(text.search_ids(q).tolist()) == want
    assert failures == {"open": 0, "read": 0}
    # The (ids, keys) form is kept for older callers.
    assert text.search(q) == (want, set())
    text.close()


def test_no_index_means_none(tmp_path: Path) -> None:
    text = index.TextIndex(tmp_path)
    assert text.search_ids(index.SearchTerms("x").query("events", FIELDS)) is None
    assert text.search(index.SearchTerms("x").query("events", FIELDS)) is None


def test_known_ids_filter_ids_not_in_the_catalog() -> None:
    ids = np.array([1, 5, 7, 10**9], np.int64)
    assert textsearch.KnownIds({1: 0, 7: 0, 9: 0}).filter(ids).tolist() == [1, 7]
    # Sparse ids (a lookup table would be huge): sorted keys instead.
    assert textsearch.KnownIds({5: 0, 10**9: 0}).filter(ids).tolist() == [5, 10**9]
    assert textsearch.KnownIds({1: 0}).filter(ids[:0]).tolist() == []
    assert textsearch.KnownIds({}).filter(ids).tolist() == []


def test_refresh_follows_a_rebuild_to_the_same_generation(built, tmp_path) -> None:
    """A rebuild swaps in a new folder; its generation number may equal the one this
    process has open, which must not pass for up to date."""
    folder, _docs = built
    text = index.TextIndex(folder.parent)
    q = index.SearchTerms("tango").query("events", FIELDS)
    assert len(text.search_ids(q)) > 10
    generation = windex.open_dir(str(folder)).latest_generation()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write(fresh, [{**doc(random.Random(1), 5000), "title": ["tango"]}], create=True)
    while windex.open_dir(str(fresh)).latest_generation() < generation:
        write(fresh, [])
    assert windex.open_dir(str(fresh)).latest_generation() == generation
    folder.rename(tmp_path / "old")
    fresh.rename(folder)
    text.refresh()
    assert text.search_ids(q).tolist() == [5000]
    text.close()


def test_other_query_nodes_fall_back_to_whoosh(built) -> None:
    from whoosh import query as wq

    folder, _docs = built
    snap = textsearch.open_snapshot(folder)
    q = wq.And([wq.Term("collection", "events"), wq.Wildcard("title", "ja*z")])
    got = snap.ids(q)
    assert len(got) and set(got.tolist()) == whoosh_ids(folder, q)
    snap.close()


# ------------------------------------------------------------------ substrings
# Letters whose case changes their length or bytes (ß, İ, Ä), digits, and what splits
# or hides words (space, apostrophe, a tag's brackets).
ALPHABET = "abnAB\u00e4\u00c4\u00df\u00e9\u0130 -'<>1"


def records_of(texts: list[str]) -> list[Record]:
    return [Record("events", {"id": i + 1, "title": t, "excerpt": texts[-i - 1],
                              "description": f"{t} {texts[i // 2]}"}, f"events/e{i + 1}.yaml")
            for i, t in enumerate(texts)]


def index_of(folder: Path, records: list[Record]) -> None:
    write(folder, [index.document(r) for r in records[:len(records) // 2]], create=True)
    write(folder, [index.document(r) for r in records[len(records) // 2:]])


def reference(records: list[Record], terms: index.SearchTerms) -> set[int]:
    """`word in text.lower()` over the indexed words of each record, as spelled out."""
    out = set()
    for r in records:
        words = [w for f in FIELDS for w in index.tokens(index._plain(r.data.get(f)))]
        has = lambda t, words=words: any(t in w.lower() for w in words)
        if all(map(has, terms.include)) and not any(map(has, terms.exclude)):
            out.add(r.id)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(ALPHABET, max_size=24), min_size=2, max_size=14),
       searches=st.lists(st.text(ALPHABET, max_size=7), min_size=1, max_size=6))
def test_every_path_finds_the_same_substrings(texts: list[str], searches: list[str]) -> None:
    """The numpy reader (terms of one document read from their heads, others
    decoded or from the cache), Whoosh's own matchers and
    the in-memory test give the ids of the naive reference, for random texts and
    searches (with exclusions)."""
    records = records_of(texts)
    # Hypothesis seeds `random`, so Whoosh's random segment ids repeat across examples:
    # forget what the process cached under them.
    for cache in (textsearch.POSTINGS.items, textsearch._ORDERS, textsearch._LEXICONS):
        cache.clear()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        index_of(folder, records)
        snap = textsearch.open_snapshot(folder)
        try:
            for text in searches:
                terms = index.SearchTerms(text)
                want = reference(records, terms)
                # words with punctuation are then asked of the text as written
                as_written = {r.id for r in records if r.id in want
                              and terms.phrases_match(r, FIELDS)}
                assert {r.id for r in records if terms.matches(r, FIELDS)} == as_written, text
                q = terms.query("events", FIELDS)
                assert set(snap.ids(q).tolist()) == want, text
                textsearch.POSTINGS.clear()  # decoded again, not from whole-word entries
                assert set(snap.ids(q).tolist()) == want, text
                if not terms.exclude:  # Whoosh's AndNot: see the first test
                    assert whoosh_ids(folder, q) == want, text
        finally:
            snap.close()


def test_a_word_inside_a_compound_word(tmp_path: Path) -> None:
    """WordPress's `LIKE '%weinabend%'`: the middle or end of a word, any case."""
    records = [Record("events", {"id": i + 1, "title": t, "excerpt": e, "description": d},
                      f"events/e{i + 1}.yaml")
               for i, (t, e, d) in enumerate([
                   ("Glühweinabend", "", "am Markt"), ("Weinprobe", None, ""),
                   ("Markt", "Abendmarkt", None), ("Fest", "", "<b>STRASSENFEST</b>"),
                   ("Spaß für alle", "", "")])]
    index_of(tmp_path, records)
    snap = textsearch.open_snapshot(tmp_path)
    for text, want in [("weinabend", {1}), ("WEIN", {1, 2}), ("abend", {1, 3}),
                       ("markt -glüh", {3}), ("enfe", {4}), ("ß", {5}), ("b", None),
                       ("zzz", set())]:
        terms = index.SearchTerms(text)
        want = reference(records, terms) if want is None else want
        assert set(snap.ids(terms.query("events", FIELDS)).tolist()) == want, text
        assert {r.id for r in records if terms.matches(r, FIELDS)} == want, text
    snap.close()


def test_substring_is_a_glob_to_whoosh_and_refuses_glob_characters() -> None:
    q = textsearch.Substring("title", "abend")
    assert q.text == "*abend*" and q.normalize() is q
    for bad in ("", "a*", "a?", "[a]"):
        with pytest.raises(ValueError):
            textsearch.Substring("title", bad)


def test_warm_reads_the_term_dictionaries_ahead(built) -> None:
    folder, _docs = built
    text = index.TextIndex(folder.parent)
    textsearch._LEXICONS.clear()
    snap = textsearch.open_snapshot(text.dir)
    assert snap is not None
    snap.warm(FIELDS)
    text._snapshot = snap
    assert {(seg.segid, f) for seg in snap.segments for f in FIELDS} <= set(
        textsearch._LEXICONS)
    q = index.SearchTerms("azz -rivet").query("events", FIELDS)
    assert np.array_equal(text.search_ids(q), snap.ids(q)) and len(snap.ids(q))
    text.close()
