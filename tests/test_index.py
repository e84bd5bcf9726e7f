"""The Whoosh index and the start-up cache: built, caught up, rebuilt, shared."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from calendar_app import cli
from calendar_app.catalog import index
from calendar_app.http.app import create_app

FIXTURE = Path(__file__).parent / "fixtures" / "lists"
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE = "/wp-json/tribe/events/v1"


@pytest.fixture
def setup(tmp_path: Path, users: dict[str, str]):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo / "content")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    apps = []

    def make(**extra):
        config = {"CONTENT_DIR": str(repo / "content"),
                  "USERS_FILE": str(tmp_path / "users.yaml"),
                  "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True, **extra}
        app = create_app(config)
        apps.append(app)
        return app

    yield repo / "content", make
    for app in apps:
        app.extensions["calendar"].close()


def search_ids(app, text: str) -> list[int]:
    body = app.test_client().get(f"{BASE}/events?search={text}&start_date=2000-01-01"
                                 "&end_date=2100-01-01").get_json()
    return [e["id"] for e in body["events"]]


def test_schema_comes_from_the_descriptions() -> None:
    names = set(index.schema().names())
    assert {"key", "rid", "collection", "title", "excerpt", "description", "venue",
            "city", "organizer", "email", "name"} <= names
    assert "slug" not in names and "start_date" not in names


def test_flush_builds_the_index_and_whoosh_answers(setup) -> None:
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    assert cal.index.pending()  # nothing indexed yet: answered from memory
    assert search_ids(app, "jazz") == [103, 104]
    cal.index.flush()
    assert not cal.index.pending()
    assert cal.index.text.search(index.SearchTerms("jazz").query(
        "events", index.EVENT_SEARCH_FIELDS))[0] == {103, 104}
    assert search_ids(app, "jazz") == [103, 104]
    assert search_ids(app, "pancakes") == [104]


def test_search_finds_the_middle_of_words_before_and_after_indexing(setup) -> None:
    """WordPress's `LIKE '%word%'`: the same answers from memory (nothing indexed
    yet) and from the index."""
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    queries = ("azz", "AZZ", "ancake", "azz -ancake", "zzzq")
    assert cal.index.pending()
    before = [search_ids(app, quote(q)) for q in queries]
    cal.index.flush()
    assert not cal.index.pending()
    assert [search_ids(app, quote(q)) for q in queries] == before
    assert before == [[103, 104], [103, 104], [104], [103], []]


def test_restart_catches_up_only_what_changed(setup) -> None:
    content, make = setup
    first = make()
    first.extensions["calendar"].index.flush()
    first.extensions["calendar"].close()
    # While the app is down: edit, add, delete and rename files.
    jazz = content / "events" / "jazz-night.yaml"
    jazz.write_text(jazz.read_text().replace("Jazz Night", "Blues Night"))
    (content / "events" / "pottery-class.yaml").unlink()
    (content / "events" / "early-birds.yaml").rename(content / "events" / "early.yaml")
    (content / "events" / "new-one.yaml").write_text(
        "id: 150\ntitle: Jazz Picnic\nstart_date: 2027-07-01 12:00\n"
        "end_date: 2027-07-01 14:00\n")
    second = make()
    cal = second.extensions["calendar"]
    assert cal.index.pending() == {"events/jazz-night.yaml", "events/pottery-class.yaml",
                                   "events/early-birds.yaml", "events/early.yaml",
                                   "events/new-one.yaml"}
    assert cal.index.flush() == 5  # five documents, not a rebuild
    assert search_ids(second, "jazz") == [104, 150]
    assert search_ids(second, "blues") == [103]
    assert search_ids(second, "pottery") == []
    assert search_ids(second, "birds") == [112]


def test_start_up_cache_skips_parsing(setup, monkeypatch) -> None:
    _content, make = setup
    make().extensions["calendar"].close()
    from calendar_app.store import parsing

    parsed = []
    real = parsing.from_file
    monkeypatch.setattr(parsing, "from_file", lambda *a: parsed.append(a[2]) or real(*a))
    app = make()
    assert parsed == []
    assert len(app.extensions["calendar"].catalog.records) == 26


def test_reindex_command(setup, capsys) -> None:
    content, _make = setup
    assert cli.main(["reindex", "--content", str(content), "--cache-dir",
                     str(content.parent.parent / "cache2")]) == 0
    assert "indexed 26" in capsys.readouterr().out
    text = index.TextIndex(content.parent.parent / "cache2")
    assert text.exists()
    assert text.search(index.SearchTerms("bebop").query("events", ("excerpt",)))[0] == {103}


def test_write_in_one_worker_is_seen_by_another(setup, auth) -> None:
    _content, make = setup
    a, b = make(), make()
    assert len(b.test_client().get(f"{BASE}/events").get_json()["events"]) == 5
    r = a.test_client().post(f"{BASE}/events/105", json={"title": "Fresh Gig"},
                             headers=auth("administrator"))
    assert r.status_code == 200, r.get_json()
    # b's watcher is off: only the journal can tell it.
    titles = [e["title"] for e in b.test_client().get(f"{BASE}/events").get_json()["events"]]
    assert "Fresh Gig" in titles and "Pottery Class" not in titles
    assert search_ids(b, "fresh") == [105]
    assert search_ids(b, "pottery") == []


def test_parsing_over_two_processes_gives_the_same_catalog(tmp_path, monkeypatch) -> None:
    """A cold load of thousands of files parses half in a forked child: same records,
    same problems (with their lines) as parsing them all here."""
    from calendar_app.catalog.catalog import Catalog
    from calendar_app.store import parsing
    from calendar_app.store.content import ContentTree

    content = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parent.parent / "content", content)
    (content / "events/2026/broken.yaml").write_text("id: 900\ntitle: [unclosed\n")
    (content / "events/2026/no-title.yaml").write_text("id: 901\nslug: no-title\n")

    def load() -> Catalog:
        catalog = Catalog(ContentTree(content, tmp_path / "lock"))
        catalog.load()
        return catalog
    alone = load()
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 4)
    split = load()
    assert forks == [1]
    assert {i: r.data for i, r in split.records.items()} == {
        i: r.data for i, r in alone.records.items()}
    assert len(split.records) == 99
    assert split.problems == alone.problems
    assert split.problems["events/2026/broken.yaml"].line == 3  # where YAML noticed


def test_background_writer_commits_at_most_once_per_interval(setup, monkeypatch) -> None:
    """A steady stream of changes makes one Whoosh commit per FLUSH_INTERVAL, not one
    per GATHER_SECONDS (a commit costs about the same for one document or ten); the
    stream is not starved (commits keep coming), and a lone change after a quiet spell
    is written within GATHER_SECONDS and a little."""
    _content, make = setup
    # Shorter than the production 0.25 s, still three times GATHER_SECONDS: a stream of
    # four intervals tells one commit per interval from one per gathering.
    monkeypatch.setattr(index, "FLUSH_INTERVAL", 0.15)
    stream = 4 * index.FLUSH_INTERVAL
    ix = make(INDEX_IN_BACKGROUND=True).extensions["calendar"].index
    ix.flush()  # the start-up catch-up, out of the way
    flushes: list[float] = []
    real = ix.flush

    def counted() -> int:
        flushes.append(time.monotonic())
        return real()

    monkeypatch.setattr(ix, "flush", counted)
    ix.start()
    paths = sorted(ix.catalog.paths)[:5]
    started = time.monotonic()
    while time.monotonic() - started < stream:  # a change every 10 ms
        ix.on_catalog_change({paths[len(flushes) % len(paths)]}, "test")
        time.sleep(0.01)
    streamed = len(flushes)
    assert 2 <= streamed <= stream / index.FLUSH_INTERVAL + 2, flushes
    assert all(b - a >= index.FLUSH_INTERVAL * 0.9 for a, b in itertools.pairwise(flushes))
    time.sleep(index.FLUSH_INTERVAL + 0.3)  # quiet; whatever was pending is written
    quiet = len(flushes)
    changed = time.monotonic()
    ix.on_catalog_change({paths[0]}, "test")
    while len(flushes) == quiet and time.monotonic() - changed < 2:
        time.sleep(0.005)
    assert flushes[-1] - changed < index.GATHER_SECONDS + 0.2
