"""Import and export (calendar_app/importing): a plugin site read over HTTP on loopback
(our own server, and a stub replaying the plugin's captured answers), CSV in and out,
update rules, gone and duplicate events, sources run by hand and on a fake clock,
HTTP failures, and hostile inputs."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import BASE, NOW, SAMPLE, commit_count, git, make_repo
from gitserver import serve_in_thread
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from calendar_app.cli import main
from calendar_app.http.app import create_app
from calendar_app.importing import fetch
from calendar_app.importing.apply import Options, apply_batch
from calendar_app.importing.media import download_images
from calendar_app.importing.sources import (
    load_source,
    run_source,
)
from calendar_app.importing.tec import read_tec
from calendar_app.wiring import open_calendar

FIXTURES = Path(__file__).parent / "fixtures" / "tec"


# -- helpers -------------------------------------------------------------------------
@contextlib.contextmanager
def serve(wsgi: Callable) -> Iterator[str]:
    """A WSGI app served on loopback in a thread; yields its base URL."""
    server = make_server("127.0.0.1", 0, wsgi, threaded=True)
    thread = serve_in_thread(server)
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def empty_tree(tmp: Path, name: str = "dest") -> Path:
    content = make_repo(tmp / name, source=None)
    (content / "calendar.yaml").write_text((SAMPLE / "calendar.yaml").read_text())
    git(content.parent, "commit", "-qam", "the sample's settings")
    return content


def commits(content: Path) -> int:
    return commit_count(content.parent)


def open_cal(content: Path, tmp: Path, users: Path | None = None, cache: str = "cache"):
    return open_calendar(content, users or tmp / "users.yaml", tmp / cache,
                         now=NOW, index_in_background=False)


def comparable(record) -> dict:
    return {k: v for k, v in record.data.items()
            if k not in ("id", "source", "source_id", "modified", "date", "author")}


# -- a round trip through our own server -------------------------------------------
@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory, users_master) -> dict:
    """The sample served over HTTP, imported (with --media) into an empty tree."""
    tmp = tmp_path_factory.mktemp("roundtrip")
    with pytest.MonkeyPatch.context() as mp:
        for who in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{who}_NAME", "Test Runner")
            mp.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
        source = make_repo(tmp / "src")
        users = users_master[0]
        config = {"USERS_FILE": str(users), "NOW": NOW, "TESTING": True, "SOURCES_TICK": 0}
        src_app = create_app({**config, "CONTENT_DIR": str(source),
                              "CACHE_DIR": str(tmp / "c1")})
        dest = empty_tree(tmp)
        with serve(src_app) as url:
            batch = read_tec(url + "/")
            site = "https://calendar.example.org"  # the sample's address, in image URLs
            files = download_images(batch, dest, lambda u: fetch.get(u.replace(site, url)))
            calendar = open_cal(dest, tmp, users, "c2")
            first = apply_batch(calendar.service, batch, Options(batch.origin, files=files),
                                None)
            count = commits(dest)
            second = read_tec(url)
            files = download_images(second, dest, lambda u: fetch.get(u.replace(site, url)))
            again = apply_batch(calendar.service, second, Options(
                batch.origin, fingerprints=first.fingerprints, files=files), None)
            calendar.close()
        dest_app = create_app({**config, "CONTENT_DIR": str(dest),
                               "CACHE_DIR": str(tmp / "c3")})
        yield {"src": src_app, "dest": dest_app, "first": first, "again": again,
               "commits": (count, commits(dest)), "dest_dir": dest}


def _answers(app, path: str) -> tuple[int, str, dict]:
    answer = app.test_client().get(BASE + path)
    text = answer.get_data(as_text=True).replace("http://localhost", "HOST")
    return answer.status_code, text, {k: answer.headers.get(k)
                                      for k in ("X-TEC-Total", "X-TEC-TotalPages")}


@pytest.mark.parametrize("path", [
    "/events?per_page=50", "/events?per_page=50&page=2", "/events",
    "/events?start_date=2027-01-01&end_date=2027-12-31&per_page=50",
    "/venues?per_page=50", "/organizers?per_page=50", "/categories?per_page=50",
    "/tags?per_page=50", "/events/by-slug/jazz-night-january-2027",
    "/events?categories=jazz&per_page=50", "/events?search=jazz"])
def test_round_trip_answers_equal(round_trip: dict, path: str) -> None:
    assert _answers(round_trip["src"], path) == _answers(round_trip["dest"], path)


def test_round_trip_every_single_record_equal(round_trip: dict) -> None:
    src = round_trip["src"].extensions["calendar"].catalog
    for collection in ("events", "venues", "organizers", "categories", "tags"):
        for record in src.all(collection):
            if record.status != "publish":
                continue  # not imported without credentials (403 there, 404 here)
            path = f"/{collection}/{record.id}"
            assert _answers(round_trip["src"], path) == _answers(round_trip["dest"], path)


def test_round_trip_imports_everything_once(round_trip: dict) -> None:
    src = round_trip["src"].extensions["calendar"].catalog
    dest = round_trip["dest"].extensions["calendar"].catalog
    for collection in ("events", "venues", "organizers", "categories", "tags"):
        public = {r.id for r in src.all(collection) if r.status == "publish"}
        assert {r.id for r in dest.all(collection)} == public  # no credentials: no drafts
    hidden = [r for r in src.all("events") if r.get("hide_from_listings")]
    assert hidden and all(dest.get(r.id) is not None for r in hidden)  # found by id
    first = round_trip["first"]
    assert first.committed and not first.problems
    assert (round_trip["dest_dir"] / "media" / "jazz-night.png").read_bytes() == (
        SAMPLE / "media" / "jazz-night.png").read_bytes()
    message = git(round_trip["dest_dir"].parent, "log", "-1", "--format=%s%n%an")
    assert message.startswith(f"{len(first.created)} new, 0 changed from http://127.0.0.1:")


def test_round_trip_second_run_makes_no_commit(round_trip: dict) -> None:
    again = round_trip["again"]
    assert not again.committed and not again.created and not again.changed
    assert round_trip["commits"][0] == round_trip["commits"][1]


# -- a stub replaying the plugin's captured answers ----------------------------------
def _captured() -> dict[str, list[dict]]:
    lists: dict[str, list[dict]] = {}
    for path in sorted(FIXTURES.glob("*-list*.json")):
        body = json.loads(path.read_text())["body"]
        for name in ("events", "venues", "organizers", "categories", "tags"):
            for item in body.get(name, []):
                known = {i["id"] for i in lists.setdefault(name, [])}
                if item["id"] not in known:
                    lists[name].append(item)
    return lists


def plugin_stub(lists: dict[str, list[dict]], log: list | None = None) -> Callable:
    @Request.application
    def app(request: Request) -> Response:
        if log is not None:
            log.append(request)
        match = re.fullmatch(r"/wp-json/tribe/events/v1/(\w+)(?:/(\d+))?", request.path)
        if not match or match.group(1) not in lists:
            return Response('{"code":"rest_no_route"}', 404, mimetype="application/json")
        items = lists[match.group(1)]
        if match.group(2):
            found = [i for i in items if i["id"] == int(match.group(2))]
            return Response(json.dumps(found[0]) if found else "{}", 200 if found else 404,
                            mimetype="application/json")
        per_page, page = int(request.args.get("per_page", 10)), int(request.args["page"])
        pages = -(-len(items) // per_page)
        body = {match.group(1): items[(page - 1) * per_page:page * per_page],
                "total": len(items), "total_pages": pages}
        return Response(json.dumps(body), mimetype="application/json",
                        headers={"X-TEC-TotalPages": str(pages)})
    return app


def test_import_from_the_plugins_captured_answers(tmp_path: Path) -> None:
    lists = _captured()
    log: list = []
    with serve(plugin_stub(lists, log)) as url:
        batch = read_tec(url + "/wp-json/tribe/events/v1/")
    assert {r.source_id for r in batch.records if r.collection == "events"} == {
        str(e["id"]) for e in lists["events"]}
    assert all(r.args["per_page"] == "50" for r in log if "page" in r.args)
    assert any(r.args.get("start_date", "").startswith("1000-01-01") for r in log)
    calendar = open_cal(empty_tree(tmp_path), tmp_path)
    outcome = apply_batch(calendar.service, batch, Options("stub"), None)
    assert outcome.committed and not outcome.problems
    event = calendar.catalog.get(12, "events")
    assert event.data["title"] == "Jazz Night #1" and event.slug == "jazz-night-1"
    assert event.data["venue"] == "blue-note-hall"
    assert event.data["start_date"] == dt.datetime(2026, 11, 22, 9, 0)
    assert event.data["description"].startswith("<p>Jazz Night edition 1.")
    assert event.data["image"].startswith("http://127.0.0.1:8089/wp-content/uploads/")
    assert event.data["source"] == "stub" and event.data["source_id"] == "12"
    jazz = calendar.catalog.by_slug("categories", "jazz")
    assert jazz.data["parent"] == "music"  # listed before its parent, linked all the same
    calendar.close()


def test_drafts_asked_for_with_credentials_only() -> None:
    log: list = []
    with serve(plugin_stub(_captured(), log)) as url:
        read_tec(url)
        anonymous = [r for r in log if r.path.endswith("/events")]
        log.clear()
        read_tec(url, "editor", "secret")
    assert all("status" not in r.args and "Authorization" not in r.headers for r in anonymous)
    events = [r for r in log if r.path.endswith("/events")]
    assert events and all(r.args["status"] == "publish,future,draft,pending,private"
                          for r in events)
    assert all(r.headers["Authorization"].startswith("Basic ") for r in events)


# -- HTTP failures ---------------------------------------------------------------------
def test_server_errors_are_retried_then_reported() -> None:
    # The waits are recorded, not slept: `get` binds time.sleep as its default at
    # import, so patching fetch.time.sleep (as this test once did) slept 5 s for real.
    calls = {"n": 0}
    waits: list[float] = []

    @Request.application
    def flaky(request: Request) -> Response:
        calls["n"] += 1
        return Response("busy", 503) if calls["n"] < 3 else Response("ok")

    with serve(flaky) as url:
        assert fetch.get(url + "/x", sleep=waits.append).body == b"ok"
        assert waits == [0.5, 1.0]  # backing off, doubling
        calls["n"] = -100
        waits.clear()
        with pytest.raises(fetch.FetchError, match=r"HTTP 503 .*after 4 tries"):
            fetch.get(url + "/x", sleep=waits.append)
        assert waits == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("answer, message", [
    (lambda r: Response("", 302, headers={"Location": r.path}), "redirect"),
    (lambda r: Response("x" * 5000), "5000 bytes, more than 1000"),
    (lambda r: Response(iter([b"x" * 800] * 3)), "more than 1000 bytes"),  # no length
    (lambda r: Response("nope", 404), "HTTP 404"),
    (lambda r: Response("denied", 401), "wrong user or password"),
])
def test_http_failures_name_the_url(answer: Callable, message: str) -> None:
    with serve(Request.application(answer)) as url, pytest.raises(
            fetch.FetchError, match=message) as caught:
        fetch.get(url + "/feed", limit=1000)
    assert f"{url}/feed" in str(caught.value)


def test_a_site_that_is_not_the_plugin(tmp_path: Path) -> None:
    @Request.application
    def html(_request: Request) -> Response:
        return Response("<html>hello</html>", mimetype="text/html")

    with serve(html) as url:
        with pytest.raises(fetch.FetchError, match="not JSON"):
            read_tec(url)
        content = empty_tree(tmp_path)
        assert main(["import", "tec", url, "--content", str(content),
                     "--cache-dir", str(tmp_path / "c")]) == 1
    assert commits(content) == 2


def test_reading_holds_no_write_lock(tmp_path: Path, users: dict, auth: Callable) -> None:
    """A slow source does not hold back the interface's writes."""
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True})
    calendar = app.extensions["calendar"]
    release = threading.Event()

    @Request.application
    def slow(_request: Request) -> Response:
        release.wait(10)
        return Response("Venue Name\nSlow Hall\n")

    with serve(slow) as url:
        (content / "sources").mkdir()
        (content / "sources" / "slow.yaml").write_text(
            f"kind: csv\nurl: {url}/v.csv\ntype: venues\nschedule: 15m\n")
        runner = threading.Thread(target=run_source,
                                  args=(calendar, load_source(content, "slow")))
        runner.start()
        time.sleep(0.2)
        started = time.perf_counter()
        answer = app.test_client().post(f"{BASE}/tags", json={"name": "Quick"},
                                        headers=auth("administrator"))
        took = time.perf_counter() - started
        release.set()
        runner.join(10)
    assert answer.status_code == 201 and took < 2
    assert calendar.catalog.by_slug("venues", "slow-hall") is not None
