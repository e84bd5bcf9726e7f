"""The in-memory postings (catalog/postings.py) against a plain Python substring scan,
their file in the cache folder, and following the catalog's changes."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.catalog import index, postings, words
from calendar_app.catalog.version import CatalogVersion
from calendar_app.model.records import Record

FIELDS = index.EVENT_SEARCH_FIELDS
WORDS = words.word_set(FIELDS)
# Case that changes length or bytes (ß, İ, Ä), an underscore (a word character that is
# not alphanumeric), digits, and what splits or hides words (space, apostrophe, tags).
ALPHABET = "abnAB\u00e4\u00c4\u00df\u00e9\u0130_ -'<>1"


def records_of(texts: list[str]) -> list[Record]:
    return [Record("events", {"id": 3 * i + 1, "title": t, "excerpt": texts[-i - 1],
                              "description": f"{t} {texts[i // 2]}"}, f"events/e{i}.yaml")
            for i, t in enumerate(texts)]


def scan(records: list[Record], include: list[str], exclude: list[str]) -> list[int]:
    """Every record, every word: `token in word` as spelled out (no index)."""
    out = []
    for r in records:
        ws = [w for f in FIELDS for w in words.tokens(words._plain(r.data.get(f)))]
        has = lambda t, ws=ws: any(t in w for w in ws)
        if all(map(has, include)) and not any(map(has, exclude)):
            out.append(r.id)
    return sorted(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(ALPHABET, max_size=24), min_size=1, max_size=14),
       searches=st.lists(st.text(ALPHABET, max_size=7), min_size=1, max_size=6))
def test_same_ids_as_a_python_substring_scan(texts: list[str], searches: list[str]) -> None:
    """The fast path (masks for frequent terms, gathered ranks for the others) gives
    the ids of the plain scan, for random texts and searches with exclusions."""
    records = records_of(texts)
    for r in records:  # the words are those of the tokenizer the Whoosh index uses
        want = {w.encode() for f in FIELDS for w in words.tokens(words._plain(r.data.get(f)))}
        assert WORDS(r) == want
    built = postings.Postings(records, WORDS, workers=1)
    for text in searches:
        terms = index.SearchTerms(text)
        got = built.search(terms.include, terms.exclude)
        assert got.dtype == np.int64
        assert got.tolist() == scan(records, terms.include, terms.exclude), text


@settings(max_examples=30, deadline=None)
@given(text=st.text(max_size=40))
def test_any_text_gives_its_tokens(text: str) -> None:
    """Any Unicode text (not only ASCII, the fast path): the tokenizer's words."""
    record = Record("events", {"id": 1, "title": text, "description": f"<i>{text}</i>"},
                    "events/e.yaml")
    assert WORDS(record) == {w.encode() for w in words.tokens(words._plain(text))}


def test_two_processes_build_what_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"River{i} jazz_{i % 7} Ärger {'<b>bold</b>' if i % 3 else 'x'}"
             for i in range(300)]
    records = records_of(texts)
    one = postings.Postings(records, WORDS, workers=1)
    monkeypatch.setattr(postings, "MASK_BUDGET", 3 * len(records))  # masks for 3 terms
    two = postings.Postings(records, WORDS, workers=2)
    assert two.masks.shape == (3, len(records)) and len(one.masks) > 3
    for q in ("riv", "1", "22", "jazz_3", "ärg", "bold", "b", "x", "zzz"):
        assert one.search([q], []).tolist() == two.search([q], []).tolist() \
            == scan(records, [q], []), q
    assert two.search([], ["jazz"]).tolist() == []
    assert two.search([], []).tolist() == sorted(r.id for r in records)


def test_no_records() -> None:
    empty = postings.Postings([], WORDS)
    assert empty.search(["a"], []).tolist() == [] and empty.search([], []).tolist() == []


def test_saved_and_read_back(tmp_path: Path) -> None:
    records = records_of(["Jazz night", "River blues", "Jazz market 12"])
    built = postings.Postings(records, WORDS)
    path = tmp_path / "p.bin"
    built.save(path, {"events/e0.yaml": ((1, 2), 1)})
    back, manifest = postings.Postings.load(path)
    assert manifest == {"events/e0.yaml": ((1, 2), 1)}
    for q in ("jazz", "1", "e", "nothing"):
        assert back.search([q], []).tolist() == built.search([q], []).tolist()
    assert not back.ranks.flags.writeable
    raw = path.read_bytes()
    for damaged in (raw[:len(raw) // 2], b"", b"garbage" * 10, raw[:-3]):
        path.write_bytes(damaged)
        assert postings.Postings.load(path) is None
    assert postings.Postings.load(tmp_path / "missing.bin") is None


class FakeCatalog:
    """What LivePostings reads of a Catalog: `lock`, `current`, `stats`."""

    def __init__(self, records: list[Record]) -> None:
        self.lock = threading.RLock()
        self.stats: dict[str, tuple[int, int]] = {}
        self.publish(records)

    def publish(self, records: list[Record]) -> None:
        self.current = CatalogVersion(
            1, {r.id: r for r in records}, {"events": {r.path: r.id for r in records}},
            {r.path: r.id for r in records}, {}, {})
        for r in records:
            self.stats.setdefault(r.path, (1, len(str(r.data))))


def test_live_postings_follow_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    records = [Record("events", {"id": i, "title": t}, f"events/e{i}.yaml")
               for i, t in ((1, "Jazz night"), (4, "River blues"), (7, "Market day"))]
    catalog = FakeCatalog(records)
    cache = tmp_path / "postings.bin"
    live = postings.LivePostings(catalog, "events", WORDS, cache)  # type: ignore[arg-type]
    assert cache.exists()
    changed = Record("events", {**records[1].data, "title": "Jazz quartet"}, records[1].path)
    added = Record("events", {"id": 99, "title": "Late jazz"}, "events/new.yaml")
    catalog.publish([records[0], changed, added])
    catalog.stats[changed.path] = (2, 2)
    live.mark({changed.path, added.path, records[2].path})
    view = catalog.current
    assert live.search(view, ["jazz"], []).tolist() == [1, 4, 99]
    assert live.search(view, ["blues"], []).tolist() == []
    assert live.search(view, ["jazz"], ["quart"]).tolist() == [1, 99]
    # The deleted record's id stays in the postings: the caller drops unknown ids.
    assert 7 in live.search(view, ["day"], []).tolist()
    assert live.rebuild_if_stale() is False and live.stale() == 3
    # A restart reads the saved postings; the paths changed since are stale.
    again = postings.LivePostings(catalog, "events", WORDS, cache)  # type: ignore[arg-type]
    assert again.stale() == 3
    assert again.search(view, ["jazz"], []).tolist() == [1, 4, 99]
    monkeypatch.setattr(postings.LivePostings, "REBUILD", 2)
    assert again.rebuild_if_stale() is True and again.stale() == 0
    assert again.search(view, ["jazz"], []).tolist() == [1, 4, 99]
    assert again.search(view, ["day"], []).tolist() == []
    third = postings.LivePostings(catalog, "events", WORDS, cache)  # type: ignore[arg-type]
    assert third.stale() == 0 and third.search(view, ["quartet"], []).tolist() == [4]


def test_too_stale_a_file_is_built_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    records = records_of(["a", "b", "c"])
    catalog = FakeCatalog(records)
    cache = tmp_path / "postings.bin"
    postings.LivePostings(catalog, "events", WORDS, cache)  # type: ignore[arg-type]
    for r in records:
        catalog.stats[r.path] = (5, 5)
    monkeypatch.setattr(postings.LivePostings, "REBUILD", 2)
    live = postings.LivePostings(catalog, "events", WORDS, cache)  # type: ignore[arg-type]
    assert live.stale() == 0
    assert postings.Postings.load(cache)[1] == {r.path: ((5, 5), r.id) for r in records}


def test_the_interface_searches_the_postings_built_at_load(reading_client) -> None:
    """The calendar's index holds postings of every event from its load, and its
    search gives the ids of the Python scan."""
    calendar = reading_client.application.extensions["calendar"]
    index_ = calendar.index
    assert index_.memory.postings.count == len(calendar.catalog.current.all("events"))
    body = reading_client.get("/wp-json/tribe/events/v1/events",
                              query_string={"search": "a", "per_page": 50,
                                            "start_date": "2000-01-01"}).get_json()
    view = calendar.catalog.current
    terms = index.SearchTerms("a")
    want = set(index.match_in_memory(view, "events", terms, FIELDS).tolist())
    assert body["total"] > 0 and want
    assert index_.search_events(view, "a").tolist() == sorted(want)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.text(ALPHABET + "\u00a0\t\n%&=#?\x00\ud7ff\U0001f600", max_size=30))
def test_hostile_search_strings(reading_client, text: str) -> None:
    """Any search string: a 200 with the events of the Python scan (or a precise 400
    for what the interface refuses, e.g. control characters), never a 500."""
    calendar = reading_client.application.extensions["calendar"]
    response = reading_client.get("/wp-json/tribe/events/v1/events",
                                  query_string={"search": text, "start_date": "2000-01-01"})
    assert response.status_code in (200, 400, 404), response.status_code
    if response.status_code == 400:
        assert response.get_json()["data"]["status"] == 400
    view = calendar.catalog.current
    want = index.match_in_memory(view, "events", index.SearchTerms(text), FIELDS)
    assert calendar.index.search_events(view, text).tolist() == want.tolist()
