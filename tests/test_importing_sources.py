"""CSV in and out, the update rules, events gone at the source, duplicates across
sources, sources run by hand and on a fake clock (conditional requests, `check`), the
scheduler thread of a served calendar, the commands, and hostile inputs."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import time
from pathlib import Path

import pytest
from conftest import NOW, git, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_importing import commits, comparable, empty_tree, open_cal, serve
from werkzeug.wrappers import Request, Response

from calendar_app.cli import main
from calendar_app.http.app import create_app
from calendar_app.importing.apply import MERGES_FILE, Options, apply_batch
from calendar_app.importing.batch import Batch, Incoming, Ref
from calendar_app.importing.csvio import CsvError, export_csv, read_csv
from calendar_app.importing.sources import (
    Scheduler,
    SourceError,
    load_source,
)
from calendar_app.store import sourcestate
from calendar_app.store.locations import default_cache_dir
from calendar_app.store.users import User

HEAD = ("Event Name,Event Start Date,Event Start Time,Event End Date,Event End Time,"
        "Event Venue Name,Event Category,Event Cost\n")
ROWS = ("Jazz Night,2027-03-05,19:00,2027-03-05,22:00,Blue Room,\"Music, Jazz\",$10\n"
        "Pottery,2027-03-06,10:00,2027-03-06,12:00,Clay Studio,Workshops,\n")


def run(*argv: str) -> int:
    return main(list(argv))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return empty_tree(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


# -- CSV -------------------------------------------------------------------------------
def test_csv_import_then_again_makes_one_commit(tree: Path, tmp_path: Path) -> None:
    feed = write(tmp_path / "events.csv", HEAD + ROWS)
    args = ("import", "csv", str(feed), "--content", str(tree), "--cache-dir",
            str(tmp_path / "c"))
    assert run(*args) == 0
    assert commits(tree) == 3
    log = git(tree.parent, "log", "-1", "--format=%s|%an")
    assert log == "7 new, 0 changed from events.csv|import\n"  # 2 events, 2 venues, 3 terms
    text = (tree / "events/2027/jazz-night.yaml").read_text()
    assert "venue: blue-room" in text and "source: events.csv" in text
    assert "source_id: Jazz Night @ 2027-03-05 19:00:00" in text
    assert run(*args) == 0
    assert commits(tree) == 3  # nothing changed: no commit


def test_csv_bad_rows_are_named_by_line_and_the_rest_imported(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    feed = write(tmp_path / "bad.csv", HEAD + ROWS + (
        "No Date,,,,,,,\n"
        "Backwards,2027-03-07,20:00,2027-03-07,19:00,,,\n"
        "Far,12000-01-01,10:00,,,,,\n"
        '"Multi\nline",2027-03-08,10:00,2027-03-08,11:00,,,\n'
        "Too,2027-03-09,10:00,2027-03-09,11:00,,,,,extra\n"))
    assert run("import", "csv", str(feed), "--content", str(tree), "--cache-dir",
               str(tmp_path / "c")) == 1
    err = capsys.readouterr().err
    assert "bad.csv, line 4: no start date" in err
    assert "bad.csv, line 5: the end (2027-03-07 19:00:00) is before the start" in err
    assert "bad.csv, line 6: start: '12000-01-01 10:00' is not a date" in err
    assert "bad.csv, line 9: 10 cells, the header has 8" in err
    assert (tree / "events/2027/multi-line.yaml").exists()  # quoted line breaks are fine
    assert not (tree / "events/2027/backwards.yaml").exists()


def test_csv_broken_quoting_stops_with_its_line(tmp_path: Path) -> None:
    batch = read_csv((HEAD + ROWS + '"Unclosed,2027-03-05\n').encode(), "x.csv", "events")
    assert len([r for r in batch.records if r.collection == "events"]) == 2
    assert batch.problems[-1].line == 4 and "rest of the file" in batch.problems[-1].message


def test_csv_dry_run_writes_nothing(tree: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture) -> None:
    feed = write(tmp_path / "e.csv", HEAD + ROWS)
    before = sorted(p.name for p in tree.rglob("*"))
    assert run("import", "csv", str(feed), "--dry-run", "--content", str(tree),
               "--cache-dir", str(tmp_path / "c")) == 0
    out = capsys.readouterr().out
    assert "would create events/2027/jazz-night.yaml" in out and "dry run" in out
    assert sorted(p.name for p in tree.rglob("*")) == before and commits(tree) == 2
    assert not sourcestate.state_path(tmp_path / "c", "e.csv").exists()


def test_csv_map_reads_other_column_names(tree: Path, tmp_path: Path) -> None:
    feed = write(tmp_path / "v.csv", "Place,Town,Lat\nHall,Paris,48.85\n")
    assert run("import", "csv", str(feed), "--type", "venues", "--map", "Place=venue",
               "--map", "Town=Venue City", "--map", "Lat=geo_lat", "--content", str(tree),
               "--cache-dir", str(tmp_path / "c")) == 0
    text = (tree / "venues/hall.yaml").read_text()
    assert "city: Paris" in text and "geo_lat: 48.85" in text
    assert run("import", "csv", str(feed), "--type", "venues", "--map", "Place=nothing",
               "--content", str(tree), "--cache-dir", str(tmp_path / "c")) == 1


def test_export_csv_then_import_gives_the_same_records(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    for kind in ("venues", "organizers", "events"):
        assert run("export", "csv", "--type", kind, "--out", str(out.with_suffix(f".{kind}")),
                   "--content", str(content), "--cache-dir", str(tmp_path / "c1")) == 0
    dest = empty_tree(tmp_path)
    for kind in ("venues", "organizers", "events"):
        assert run("import", "csv", str(out.with_suffix(f".{kind}")), "--type", kind,
                   "--content", str(dest), "--cache-dir", str(tmp_path / "c2")) == 0
    src, new = open_cal(content, tmp_path, cache="c3"), open_cal(dest, tmp_path, cache="c4")

    def named(calendar, record) -> dict:
        """Links by the names of the records linked (CSV names them; slugs may differ)."""
        out = comparable(record)
        for name, target in (("venue", "venues"), ("organizer", "organizers"),
                             ("categories", "categories"), ("tags", "tags")):
            if name in out:
                out[name] = sorted(r.name for r in calendar.catalog.resolve(target, out[name]))
        return out

    for kind in ("venues", "organizers", "events"):
        ours = sorted((named(src, r) for r in src.catalog.all(kind)), key=str)
        theirs = sorted((named(new, r) for r in new.catalog.all(kind)), key=str)
        drop = ("status", "slug")  # CSV has neither: drafts come back published
        for rows in (ours, theirs):
            for row in rows:
                for name in drop:
                    row.pop(name, None)
        for a, b in zip(ours, theirs, strict=True):
            assert a == b, {k: (a.get(k), b.get(k)) for k in {*a, *b} if a.get(k) != b.get(k)}
    text = export_csv(sorted(new.catalog.all("events"), key=lambda r: r.id), "events", {})
    assert text.startswith("Event Name,Event Description,Event Excerpt,Event Start Date,")
    src.close()
    new.close()


# -- update rules, gone and duplicates ----------------------------------------------------
def _event(source_id: str, title: str, **fields) -> Incoming:
    base = {"title": title, "start_date": dt.datetime(2027, 5, 1, 19),
            "end_date": dt.datetime(2027, 5, 1, 21)}
    return Incoming("events", source_id, {**base, **fields})


def _apply(calendar, records: list[Incoming], **options):
    state = options.pop("state", {})
    outcome = apply_batch(calendar.service, Batch("feed", records),
                          Options(options.pop("source", "feed"), fingerprints=state,
                                  **options), None)
    return outcome


@pytest.mark.parametrize("rule, title, website", [
    ("overwrite", "Concert", "https://new.example.org/"),
    ("keep-edits", "Concert (edited here)", "https://new.example.org/"),
    ("new-only", "Concert (edited here)", "https://old.example.org/"),
])
def test_update_rules(tree: Path, tmp_path: Path, rule: str, title: str, website: str) -> None:
    calendar = open_cal(tree, tmp_path)
    first = _apply(calendar, [_event("u1", "Concert", website="https://old.example.org/")])
    record = first.created[0]
    editor = User(1, "editor", "administrator")
    calendar.service.update(record, {"title": "Concert (edited here)"}, editor)
    again = _apply(calendar, [_event("u1", "Concert", website="https://new.example.org/")],
                   rule=rule, state=first.fingerprints)
    now = calendar.catalog.get(record.id)
    assert (now.data["title"], now.data["website"]) == (title, website)
    assert len(calendar.catalog.all("events")) == 1  # updated, never duplicated
    assert again.committed == (rule != "new-only")
    calendar.close()


def test_gone_events_are_cancelled_never_deleted(tree: Path, tmp_path: Path) -> None:
    calendar = open_cal(tree, tmp_path)
    _apply(calendar, [_event("a", "Stays"), _event("b", "Goes")])
    count = commits(tree)
    outcome = _apply(calendar, [_event("a", "Stays")])
    assert [r.get("title") for r in outcome.cancelled] == ["Goes"] and not outcome.gone
    assert commits(tree) == count + 1 and len(calendar.catalog.all("events")) == 2
    gone = next(r for r in calendar.catalog.all("events") if r.get("title") == "Goes")
    assert gone.get("event_status") == "canceled" and gone.status != "trash"
    assert "1 cancelled" in git(tree.parent, "log", "-1", "--format=%s")
    assert not _apply(calendar, [_event("a", "Stays")]).committed  # once, not again
    partial = _apply(calendar, [_event("a", "Stays")], complete=False)
    assert not partial.gone
    calendar.close()


def test_duplicates_across_sources_reported_then_merged(tree: Path, tmp_path: Path) -> None:
    calendar = open_cal(tree, tmp_path)
    hall = Incoming("venues", "h", {"venue": "Town Hall"})
    _apply(calendar, [hall, _event("x1", "Spring Gala", venue=Ref("venues", "h"))],
           source="one")
    other = [Incoming("venues", "th", {"venue": "Town Hall"}),
             _event("y9", "Spring gala!", venue=Ref("venues", "th"))]
    dry = _apply(calendar, other, source="two", dry_run=True)
    assert dry.duplicates and "Spring Gala" in dry.duplicates[0] and not dry.committed
    merged = _apply(calendar, other, source="two", merge_duplicates=True)
    assert merged.merged and not [r for r in merged.created if r.collection == "events"]
    assert "two:\n  y9: " in (tree / MERGES_FILE).read_text()
    assert "merged: event y9" in git(tree.parent, "log", "-1", "--format=%B")
    again = _apply(calendar, other, source="two")  # the decision holds, flag or not
    assert not again.committed and len(calendar.catalog.all("events")) == 1
    calendar.close()


def test_ids_kept_where_free_else_new_and_links_follow(tree: Path, tmp_path: Path) -> None:
    calendar = open_cal(tree, tmp_path)
    _apply(calendar, [Incoming("venues", "v", {"id": 40, "venue": "Taken"})], source="s")
    outcome = _apply(calendar, [Incoming("venues", "v", {"id": 40, "venue": "Elsewhere"}),
                                _event("e", "Linked", id=41, venue=Ref("venues", "v"))],
                     source="other")
    venue = next(r for r in outcome.created if r.collection == "venues")
    event = next(r for r in outcome.created if r.collection == "events")
    assert venue.id != 40 and event.id == 41 and event.data["venue"] == venue.slug
    calendar.close()


# -- sources ----------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> dt.datetime:
        return self.now


def test_scheduled_runs_with_a_fake_clock(tree: Path, tmp_path: Path) -> None:
    feed = write(tmp_path / "feed.csv", HEAD + ROWS)
    (tree / "sources").mkdir()
    write(tree / "sources/city-arts.yaml", f"kind: csv\nurl: {feed}\nschedule: 30m\n"
          "update: keep-edits\nstatus: draft\ndefaults: {categories: [featured-pick]}\n")
    (tree / "categories").mkdir()
    write(tree / "categories/featured-pick.yaml", "id: 900\nname: Featured pick\n")
    git(tree.parent, "add", "-A")
    git(tree.parent, "commit", "-qm", "a source")
    calendar = open_cal(tree, tmp_path)
    clock = calendar.clock = FakeClock()
    scheduler = Scheduler(calendar, tick=3600)
    lock_file = calendar.cache_dir / "sources" / ".run.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as held:  # another worker process is running sources
        fcntl.flock(held, fcntl.LOCK_EX)
        assert scheduler.run_due() == [] and commits(tree) == 3
    assert scheduler.run_due() == ["city-arts"]
    assert git(tree.parent, "log", "-1", "--format=%s|%an") == (
        "7 new, 0 changed from city-arts|sources\n")
    jazz = calendar.catalog.by_slug("events", "jazz-night")
    assert jazz.status == "draft" and "featured-pick" in jazz.data["categories"]
    count = commits(tree)
    clock.now += dt.timedelta(minutes=10)
    assert scheduler.run_due() == []  # not due yet
    clock.now += dt.timedelta(minutes=25)
    assert scheduler.run_due() == ["city-arts"] and commits(tree) == count  # unchanged
    write(feed, HEAD + ROWS.replace("$10", "$12"))
    clock.now += dt.timedelta(minutes=31)
    scheduler.run_due()
    assert git(tree.parent, "log", "-1", "--format=%s") == "0 new, 1 changed from city-arts\n"
    assert sourcestate.read(calendar.cache_dir, "city-arts")["error"] == ""
    calendar.close()


@pytest.mark.parametrize("text, message", [
    ("kind: csv\nurl: x.csv\nschedule: 5m\n", "line 3: schedule '5m': at least every 15"),
    ("kind: rss\nurl: x\n", "line 1: kind: 'rss' is not one of"),
    ("url: x\n", "'kind' is required"),
    ("kind: csv\nurl: x\nupdate: merge\n", "line 3: update: 'merge'"),
    ("kind: csv\nurl: x\nevery: 1h\n", "line 3: unknown key 'every'"),
])
def test_bad_source_files_are_named_with_their_line(tmp_path: Path, text: str,
                                                    message: str) -> None:
    (tmp_path / "sources").mkdir()
    write(tmp_path / "sources/bad.yaml", text)
    with pytest.raises(SourceError, match=message) as caught:
        load_source(tmp_path, "bad")
    assert str(caught.value).startswith("sources/bad.yaml")


def test_conditional_requests_and_failed_runs_in_check(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    seen: list = []
    state = {"fail": False}

    @Request.application
    def feed(request: Request) -> Response:
        seen.append(dict(request.headers))
        if state["fail"]:
            return Response("gone", 404)
        if request.headers.get("If-None-Match") == '"v1"':
            return Response(status=304)
        return Response(HEAD + ROWS, headers={"ETag": '"v1"',
                                              "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"})

    with serve(feed) as url:
        (tree / "sources").mkdir()
        write(tree / "sources/arts.yaml", f"kind: csv\nurl: {url}/feed.csv\n")
        cache = tmp_path / "cache"
        assert run("sources", "run", "--content", str(tree), "--cache-dir", str(cache)) == 0
        assert run("sources", "run", "arts", "--content", str(tree),
                   "--cache-dir", str(cache)) == 0
        assert "arts: not modified since the last run" in capsys.readouterr().out
        assert seen[1]["If-None-Match"] == '"v1"'
        assert seen[1]["If-Modified-Since"] == "Wed, 01 Jan 2025 00:00:00 GMT"
        state["fail"] = True
        assert run("sources", "run", "arts", "--content", str(tree),
                   "--cache-dir", str(cache)) == 1
    assert "HTTP 404" in capsys.readouterr().err
    calendar = open_cal(tree, tmp_path, cache="cache")
    assert sourcestate.failures(calendar.cache_dir)[0][0] == "arts"
    calendar.close()
    # `check` reads the state where a calendar's cache is by default.
    sourcestate.write(default_cache_dir(tree), "arts", {"error": "HTTP 404", "last_run": "x"})
    capsys.readouterr()
    run("check", str(tree))
    out = capsys.readouterr().out
    assert "sources/arts.yaml" in out and "source-failed" in out and "HTTP 404" in out


def test_the_served_calendar_runs_sources_on_schedule(tmp_path: Path, users: dict) -> None:
    content = make_repo(tmp_path)
    feed = write(tmp_path / "v.csv", "Venue Name,Venue City\nRiver Hall,Lyon\n")
    (content / "sources").mkdir()
    write(content / "sources/halls.yaml", f"kind: csv\nurl: {feed}\ntype: venues\n")
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "SOURCES_TICK": 0.05})
    app.test_client().get("/wp-json/tribe/events/v1/")  # starts the background threads
    calendar = app.extensions["calendar"]
    deadline = time.monotonic() + 10
    while calendar.catalog.by_slug("venues", "river-hall") is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert "from halls" in git(content.parent, "log", "-1", "--format=%s")
    calendar.close()


def test_a_failed_commit_leaves_nothing(tree: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from calendar_app.store.content import ContentTree

    def broken(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ContentTree, "apply", broken)
    feed = write(tmp_path / "e.csv", HEAD + ROWS)
    assert run("import", "csv", str(feed), "--content", str(tree), "--cache-dir",
               str(tmp_path / "c")) == 1
    assert not (tree / "events").exists() and commits(tree) == 2


# -- hostile inputs -------------------------------------------------------------------
@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_bytes_as_csv(data: bytes) -> None:
    try:
        batch = read_csv(HEAD.encode() + data, "fuzz.csv", "events")
    except CsvError:
        return
    for problem in batch.problems:
        assert problem.line is None or problem.line >= 1


@pytest.fixture(scope="module")
def fuzz_tree(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        for who in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{who}_NAME", "Test Runner")
            mp.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
        calendar = open_cal(empty_tree(tmp), tmp)
        yield calendar
        calendar.close()


_values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30),
                    st.datetimes(), st.lists(st.text(max_size=5), max_size=3))


@settings(max_examples=40, deadline=5000, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["events", "venues", "tags", "nope"]),
                          st.text(max_size=8),
                          st.dictionaries(st.sampled_from(
                              ["title", "venue", "name", "start_date", "end_date", "id",
                               "slug", "cost", "all_day", "website", "unknown"]), _values,
                              max_size=6)), max_size=5))
def test_hostile_batches_never_write_a_bad_file(fuzz_tree, records: list) -> None:
    calendar = fuzz_tree
    batch = Batch("fuzz", [Incoming(c, s, f) for c, s, f in records])
    apply_batch(calendar.service, batch, Options("fuzz"), None)
    calendar.catalog.resync()
    assert not calendar.catalog.problems  # every file written reads back


def test_an_object_no_file_can_hold_is_one_records_problem(tree: Path,
                                                           tmp_path: Path) -> None:
    calendar = open_cal(tree, tmp_path)
    odd = _event("odd", "Odd", recurrence={"rrule": "FREQ=WEEKLY;COUNT=2",
                                           "changes": {"2027-05-08": {"venue": Ref("v", "x")}}})
    outcome = _apply(calendar, [odd, _event("fine", "Fine")])
    assert [r.name for r in outcome.created] == ["Fine"]
    assert outcome.problems and outcome.problems[0].source_id == "odd"
    calendar.close()


def test_hostile_plugin_answers(tmp_path: Path) -> None:
    from calendar_app.importing import fetch
    from calendar_app.importing.tec import read_tec

    bodies = ['{"events": "x"}', "[]", '{"events": [{"id": "7"}, 5, null]}', "\x00",
              json.dumps({"events": [{"id": 3, "title": 5, "start_date": "soon",
                                      "venue": {"id": "v"}, "categories": [7]}],
                          "total_pages": 1})]
    for body in bodies:
        @Request.application
        def stub(request: Request, body: str = body) -> Response:
            if request.path.endswith("/events"):
                return Response(body, mimetype="application/json")
            name = request.path.rsplit("/", 1)[-1]
            return Response(json.dumps({name: [], "total_pages": 1}))

        with serve(stub) as url:
            try:
                batch = read_tec(url)
            except fetch.FetchError as exc:
                assert url in str(exc)
                continue
        calendar = open_cal(empty_tree(tmp_path, f"t{len(body)}"), tmp_path, cache=body[:3])
        outcome = apply_batch(calendar.service, batch, Options("h"), None)
        assert outcome.problems and not outcome.created
        calendar.close()
