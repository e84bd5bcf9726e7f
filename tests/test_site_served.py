"""The website served at `/` by the app (site/live.py, http/site_files.py): the pages
`build` makes, built in the background, kept in step with writes through the interface
and edits of the tree, served safely, with the plugin's `?ical=1`; one builder among
several processes."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import icalendar
import pytest
from conftest import BASE, NOW, compiled_templates, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.http.app import create_app
from calendar_app.site import Options, build, live
from calendar_app.site.live import LiveSite

LOCAL = "http://127.0.0.1:8000/"
APRIL = "event/jazz-night-april-2027/"
SECRET = "not-for-the-web-7c1f"
FRESH_WITHIN = 2.0  # seconds from a write to its page


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, users_master):
    """One app over a copy of the sample, its site built once for the module."""
    import shutil

    tmp = tmp_path_factory.mktemp("served")
    with pytest.MonkeyPatch.context() as mp:
        for who in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{who}_NAME", "Test Runner")
            mp.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
        content = make_repo(tmp)
    shutil.copy(users_master[0], tmp / "users.yaml")
    (tmp / "cache").mkdir()
    (tmp / "cache" / "secret.txt").write_text(SECRET)  # beside the site folder
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp / "users.yaml"),
                      "CACHE_DIR": str(tmp / "cache"), "NOW": NOW, "TESTING": True,
                      "SITE": True, "WATCH": True, "LOCAL_URL": LOCAL,
                      "LOGIN_MAX_FAILURES": 10_000})
    client = app.test_client()
    client.get(BASE + "/")  # starts the background threads
    site: LiveSite = app.extensions["site"]
    assert site.wait_built(120)
    yield app, client, content, tmp
    app.extensions["calendar"].close()


def _admin(users_master) -> dict:
    import base64

    token = base64.b64encode(f"administrator:{users_master[1]['administrator']}".encode())
    return {"Authorization": "Basic " + token.decode()}


def _wait_for(client, path: str, needle: str, timeout: float = 10) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if needle in client.get(path).get_data(as_text=True):
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"{needle!r} not on {path} after {timeout} s")


def test_a_building_page_answers_until_the_first_build(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(LiveSite, "start", lambda self: None)  # never builds here
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "u.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "SITE": True})
    client = app.test_client()
    for path in ("/", "/events/list/", "/event/x/?ical=1"):
        answer = client.get(path)
        assert answer.status_code == 503
        assert answer.headers["Retry-After"] == "2"
        assert "Building the calendar" in answer.get_data(as_text=True)
    # The interface answers at once.
    assert client.get(f"{BASE}/events").status_code == 200


def test_the_site_is_what_build_makes(served, tmp_path: Path) -> None:
    app, client, content, _tmp = served
    site: LiveSite = app.extensions["site"]
    assert site.wait_idle(30)
    home = client.get("/")
    assert home.status_code == 200 and home.content_type == "text/html; charset=utf-8"
    assert "X-Robots-Tag" not in home.headers  # the website is for search engines
    assert client.get(f"{BASE}/events").headers["X-Robots-Tag"] == "noindex"
    build(Options(content=content, out=tmp_path / "public", now=NOW, base_url=LOCAL,
                  cache_dir=tmp_path / "cache", progress=False,
                  compiled_templates=compiled_templates()))

    def digests(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in root.rglob("*") if p.is_file()}

    assert digests(site.out) == digests(tmp_path / "public")
    # Served as a host would: folders are their index.html, the same bytes.
    page = (tmp_path / "public" / APRIL / "index.html").read_bytes()
    assert client.get("/" + APRIL).data == page
    assert client.get("/" + APRIL + "index.html").data == page


def test_files_have_their_type_and_validators(served) -> None:
    _app, client, _content, _tmp = served
    for path, kind in (("/calendar.ics", "text/calendar; charset=utf-8"),
                       ("/assets/style.css", "text/css; charset=utf-8"),
                       ("/assets/now.js", "text/javascript; charset=utf-8"),
                       ("/sitemap.xml", "application/xml; charset=utf-8"),
                       ("/robots.txt", "text/plain; charset=utf-8"),
                       ("/feed.xml", "application/xml; charset=utf-8")):
        answer = client.get(path)
        assert (answer.status_code, answer.content_type) == (200, kind), path
        assert answer.headers["ETag"] and answer.headers["Last-Modified"]
        assert answer.headers["Cache-Control"] == "no-cache"
        again = client.get(path, headers={"If-None-Match": answer.headers["ETag"]})
        assert again.status_code == 304 and again.data == b""
        since = client.get(path, headers={"If-Modified-Since": answer.headers["Last-Modified"]})
        assert since.status_code == 304
    head = client.head("/")
    assert head.status_code == 200 and head.data == b""


def test_a_page_replaced_while_served_is_sent_whole(served) -> None:
    """The builder renames new pages over old ones: each answer is one version, whole,
    with its own length (a send by path announced one file's length, sent another's)."""
    import threading

    app, client, _content, _tmp = served
    out = Path(app.extensions["site"].out)
    versions = [b"short\n", b"a much longer version of the page\n" * 40]
    target, stop = out / "race.txt", threading.Event()
    target.write_bytes(versions[0])

    def replace() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            spare = out / f".race-{n % 2}"
            spare.write_bytes(versions[n % 2])
            os.replace(spare, target)

    writer = threading.Thread(target=replace)
    writer.start()
    try:
        for _ in range(300):
            answer = client.get("/race.txt")
            assert answer.status_code == 200
            assert answer.data in versions
            assert int(answer.headers["Content-Length"]) == len(answer.data)
    finally:
        stop.set()
        writer.join()
        target.unlink()


def test_a_folder_without_its_slash_redirects(served) -> None:
    _app, client, _content, _tmp = served
    answer = client.get("/" + APRIL.rstrip("/") + "?ical=1")
    assert answer.status_code == 308
    assert answer.headers["Location"] == "/" + APRIL + "?ical=1"


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/..%2fsecret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt",
    "/.build-manifest", "/event/.hidden", "//etc/passwd", "/..\\secret.txt",
    "/event/%00/", "/nothing-here/", "/event/nope/index.html"])
def test_no_path_leaves_the_site_folder(served, path: str) -> None:
    _app, client, _content, _tmp = served
    answer = client.get(path)
    assert answer.status_code in (404, 308), (path, answer.status_code)
    assert SECRET.encode() not in answer.data
    assert b".build-manifest" not in answer.data or answer.status_code == 404
    if answer.status_code == 404:
        assert answer.content_type == "text/html; charset=utf-8"
        assert b"<html" in answer.data  # the site's own 404 page


# Cheap by default, full under slow (tests/README.md). No tab, CR or LF: no request
# line holds them, and the test client's URL parser drops them, so "/\r/x" reached
# the app as "//x", a host name (a failure of the test client, not of the app).
PATHS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",),
                                       exclude_characters="\t\r\n"), max_size=40)


@pytest.mark.parametrize("size", [40, pytest.param(150, marks=pytest.mark.slow)])
def test_any_path_gets_a_page_a_redirect_or_a_404(served, size: int) -> None:
    _app, client, _content, _tmp = served

    @settings(max_examples=size, deadline=None, suppress_health_check=list(HealthCheck))
    @given(PATHS)
    def any_path(text: str) -> None:
        for query in ("", "?ical=1", "?ical=" + text[:10]):
            started = time.monotonic()
            answer = client.get("/" + text.lstrip("/") + query)
            assert time.monotonic() - started < 5
            assert answer.status_code in (200, 308, 404, 503), answer.status_code
            assert SECRET.encode() not in answer.data
    any_path()


# Header values a client or a proxy may send: well-formed ranges, the odd ones, and
# anything printable.
RANGES = st.one_of(
    st.builds(lambda a, b: f"bytes={a}-{b}", st.integers(-5, 10**12), st.integers(-5, 10**12)),
    st.builds(lambda n: f"bytes=-{n}", st.integers(0, 10**12)),
    st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 3000)), min_size=1, max_size=4)
    .map(lambda parts: "bytes=" + ",".join(f"{a}-{b}" for a, b in parts)),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30))
VALIDATORS = st.one_of(st.none(), st.just("etag"), st.just("*"),
                       st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                               max_size=30))


def test_any_range_and_validators_get_an_exact_answer(served) -> None:
    """Range, If-Range, If-None-Match and If-Modified-Since as anyone may send them: a
    whole file, the bytes asked for, a 304 or a 416, with lengths that add up; never an
    error, never a wait."""
    _app, client, _content, _tmp = served
    whole = client.get("/assets/style.css")
    body, etag = whole.data, whole.headers["ETag"]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(RANGES, VALIDATORS, VALIDATORS, st.sampled_from(["", whole.headers["Last-Modified"],
                                                            "yesterday"]))
    def any_headers(asked: str, if_range: str | None, if_none_match: str | None,
                    since: str) -> None:
        headers = {"Range": asked}
        for name, value in (("If-Range", if_range), ("If-None-Match", if_none_match),
                            ("If-Modified-Since", since)):
            if value:
                headers[name] = etag if value == "etag" else value
        started = time.monotonic()
        answer = client.get("/assets/style.css", headers=headers)
        assert time.monotonic() - started < 5
        status = answer.status_code
        assert status in (200, 206, 304, 416), (status, headers)
        if status == 200:
            assert answer.data == body
        elif status == 206:
            first, last = map(int, answer.headers["Content-Range"]
                              .removeprefix("bytes ").split("/")[0].split("-"))
            assert answer.data == body[first:last + 1] and answer.data
        elif status == 416:
            assert answer.headers["Content-Range"] == f"bytes */{len(body)}"
        else:
            assert answer.data == b""
        if status != 304:
            assert int(answer.headers["Content-Length"]) == len(answer.data)
    any_headers()


def _summaries(data: bytes) -> list[str]:
    return [str(e["SUMMARY"]) for e in icalendar.Calendar.from_ical(data).walk("VEVENT")]


def test_ical_on_each_kind_of_page_answers_its_feed(served) -> None:
    _app, client, _content, _tmp = served
    pages = {
        "/": "/calendar.ics",
        "/events/list/": "/calendar.ics",
        "/events/list/page/2/": "/calendar.ics",
        "/events/month/2027-04/": "/events/month/2027-04/events.ics",
        "/events/2027-04-01/": "/events/2027-04-01/events.ics",
        "/" + APRIL: "/" + APRIL + "event.ics",
        "/venue/the-blue-lantern/": "/venue/the-blue-lantern/calendar.ics",
        "/organizer/riverside-jazz-collective/":
            "/organizer/riverside-jazz-collective/calendar.ics",
    }
    for page, feed in pages.items():
        answer = client.get(page + "?ical=1")
        assert answer.status_code == 200, page
        assert answer.content_type == "text/calendar; charset=utf-8", page
        assert answer.headers["Content-Disposition"].startswith("attachment; filename="), page
        assert answer.data == client.get(feed).data, page
    assert _summaries(client.get(f"/{APRIL}?ical=1").data) == [
        "Jazz Night: Naomi Takeda, vocals"]
    day = _summaries(client.get("/events/2027-04-01/?ical=1").data)
    assert "Jazz Night: Naomi Takeda, vocals" in day
    month = _summaries(client.get("/events/month/2027-04/?ical=1").data)
    assert set(day) <= set(month) and len(month) > len(day)


def test_webcal_links_are_on_those_pages(served) -> None:
    _app, client, _content, _tmp = served
    for page in ("/", "/events/list/", "/events/month/2027-04/", "/events/2027-04-01/",
                 "/" + APRIL, "/venue/the-blue-lantern/",
                 "/organizer/riverside-jazz-collective/"):
        html = client.get(page).get_data(as_text=True)
        assert 'href="webcal://127.0.0.1:8000/calendar.ics"' in html, page
    venue = client.get("/venue/the-blue-lantern/").get_data(as_text=True)
    assert 'href="webcal://127.0.0.1:8000/venue/the-blue-lantern/calendar.ics"' in venue


def test_a_write_is_on_its_page_within_two_seconds(served, users_master) -> None:
    app, client, _content, _tmp = served
    took = []
    for n in range(3):
        title = f"Jazz Night renamed {n}"
        answer = client.post(f"{BASE}/events/109", headers=_admin(users_master),
                             json={"title": title})
        assert answer.status_code == 200
        took.append(_wait_for(client, "/" + APRIL, title))
        assert title in client.get("/events/month/2027-04/").get_data(as_text=True)
    print(f"SITE freshness after a write (dev app): {max(took):.2f} s max of {len(took)}")
    assert max(took) < FRESH_WITHIN
    # A new event gets its page; the lists show it.
    created = client.post(f"{BASE}/events", headers=_admin(users_master), json={
        "title": "Brand New Gathering", "start_date": "2027-04-02 18:00:00",
        "end_date": "2027-04-02 19:00:00", "status": "publish"})
    assert created.status_code == 201
    slug = created.get_json()["slug"]
    assert _wait_for(client, f"/event/{slug}/", "Brand New Gathering") < FRESH_WITHIN
    assert "Brand New Gathering" in client.get("/events/2027-04-02/").get_data(as_text=True)
    assert app.extensions["site"].last_report.problems == []


def test_an_edit_of_the_tree_is_on_its_page(served) -> None:
    _app, client, content, _tmp = served
    path = content / "events/2027/jazz-night-march-2027.yaml"
    text = path.read_text()
    path.write_text(re.sub(r"^title: .*$", "title: Edited By Hand", text, count=1,
                           flags=re.MULTILINE))
    took = _wait_for(client, "/event/jazz-night-march-2027/", "Edited By Hand")
    print(f"SITE freshness after an edit on disk: {took:.2f} s")
    assert took < FRESH_WITHIN + 1  # the file watcher's debounce comes first


def test_one_process_builds_at_a_time(tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Two servers' sites over one cache folder (two gunicorn workers): the second waits
    for the first's lock, serves its folder meanwhile, and builds once it is gone."""
    monkeypatch.setattr(live, "LOCK_POLL", 0.05)  # tries the lock 20 times a second
    content = make_repo(tmp_path)
    cache = tmp_path / "cache"
    first = LiveSite(content, cache, LOCAL, NOW)
    second = LiveSite(content, cache, LOCAL, NOW)
    first.start()
    try:
        assert first.wait_built(120)
        second.start()
        time.sleep(0.3)  # a few tries of the lock
        assert second.builds == 0 and second.ready  # the same folder, built by the first
        first.on_catalog_change({"calendar.yaml"}, "files")
        assert first.wait_idle(60) and first.builds == 2
        assert second.builds == 0
    finally:
        first.stop()
    assert second.wait_built(120) and second.builds == 1  # took over
    second.stop()
    assert (cache / "site" / "index.html").is_file()


def test_the_builder_loads_no_flask() -> None:
    import subprocess
    import sys

    code = ("import sys; import calendar_app.site.live; "
            "print(sorted(m for m in ('flask', 'werkzeug', 'whoosh') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


# Slow: gunicorn, two workers and the site built again in a process of its own. The
# quick run keeps the guarantee in test_site_child (a module's gunicorn with two workers
# and its builder: writes through either worker on their page within two seconds).
@pytest.mark.slow
def test_under_gunicorn_two_workers_serve_fresh_pages(tmp_path: Path, users) -> None:
    from gitserver import free_port, start_gunicorn
    from gitserver import stop_process as stop
    from test_reliability_concurrency import Http, basic, wait_for_port

    content = make_repo(tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / "cache", port, log=log,
                          env={"CALENDAR_SITE": "1",
                               "CALENDAR_SITE_URL": f"http://127.0.0.1:{port}/"})
    try:
        wait_for_port(port, proc, log=log)
        reader = Http(port)
        deadline = time.monotonic() + 120
        while reader.request("GET", "/")[0] != 200:  # "building" (503) until built
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
            time.sleep(0.1)
        admin = Http(port, basic("administrator", users["administrator"]))
        took = []
        for n in range(6):  # the two workers take turns at the writes
            title = f"Gunicorn title {n}"
            status, _, _ = admin.request("POST", f"{BASE}/events/109", {"title": title})
            assert status == 200
            started = time.monotonic()
            while title.encode() not in reader.request("GET", "/" + APRIL)[2]:
                assert time.monotonic() - started < 10, f"{title} never shown"
                time.sleep(0.02)
            took.append(time.monotonic() - started)
        print(f"SITE freshness after a write (gunicorn, 2 workers): max {max(took):.2f} s")
        assert max(took) < FRESH_WITHIN
        # Files go out streamed (gunicorn's sendfile): whole with their length, or a range.
        import http.client

        # (a file no write changes: the builds the writes started may still be running)
        style = (tmp_path / "cache" / "site" / "assets" / "style.css").read_bytes()
        for headers, status, body in (({}, 200, style),
                                      ({"Range": "bytes=5-14"}, 206, style[5:15])):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/assets/style.css", headers=headers)
            answer = connection.getresponse()
            got = answer.read()
            connection.close()
            assert (answer.status, got) == (status, body)
            assert int(answer.getheader("Content-Length")) == len(body)
    finally:
        stop(proc)
    assert "Traceback" not in log.read_text(errors="replace")


def test_a_large_file_is_streamed_with_its_length_and_ranges(served) -> None:
    """A big file (an image, a year's feed) goes out from the open file, not read whole
    into memory, and still with its length, validators, ranges and 304s."""
    import tracemalloc

    app, client, _content, _tmp = served
    out = Path(app.extensions["site"].out)
    size = 48 * 1024 * 1024
    (out / "files").mkdir(exist_ok=True)
    big = out / "files" / "poster.bin"
    with open(big, "wb") as fh:
        fh.writelines(bytes([n % 251]) * 65536 for n in range(size // 65536))
    try:
        tracemalloc.start()
        answer = client.get("/files/poster.bin", buffered=False)
        sent = sum(len(chunk) for chunk in answer.response)
        answer.close()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (answer.status_code, sent) == (200, size)
        assert int(answer.headers["Content-Length"]) == size
        assert answer.headers["Accept-Ranges"] == "bytes"
        assert peak < 4 * 1024 * 1024, f"{peak / 2**20:.1f} MB held to send {size >> 20} MB"

        part = client.get("/files/poster.bin", headers={"Range": "bytes=65530-65541"})
        assert part.status_code == 206
        assert part.headers["Content-Range"] == f"bytes 65530-65541/{size}"
        assert part.data == bytes([0]) * 6 + bytes([1]) * 6
        tail = client.get("/files/poster.bin", headers={"Range": "bytes=-3"})
        assert (tail.status_code, tail.data) == (206, bytes([(size // 65536 - 1) % 251]) * 3)
        beyond = client.get("/files/poster.bin", headers={"Range": f"bytes={size}-"})
        assert beyond.status_code == 416
        assert beyond.headers["Content-Range"] == f"bytes */{size}"
        for fresh_copy in ({"If-None-Match": answer.headers["ETag"]},
                           {"If-None-Match": answer.headers["ETag"], "Range": "bytes=0-9"},
                           {"If-Modified-Since": answer.headers["Last-Modified"],
                            "Range": "bytes=5-"}):
            fresh = client.get("/files/poster.bin", headers=fresh_copy)
            assert (fresh.status_code, fresh.data) == (304, b""), fresh_copy
        stale = client.get("/files/poster.bin", headers={
            "If-None-Match": '"another-version"', "Range": "bytes=0-1"})
        assert (stale.status_code, stale.data) == (206, b"\0\0")
        resumed = client.get("/files/poster.bin", headers={
            "If-Range": answer.headers["ETag"], "Range": "bytes=0-1"})
        assert (resumed.status_code, resumed.data) == (206, b"\0\0")
        changed = client.get("/files/poster.bin", buffered=False, headers={
            "If-Range": '"another-version"', "Range": "bytes=0-1"})
        assert changed.status_code == 200
        assert int(changed.headers["Content-Length"]) == size
        changed.close()
        head = client.head("/files/poster.bin")
        assert (head.status_code, head.data) == (200, b"")
        assert int(head.headers["Content-Length"]) == size
    finally:
        big.unlink()
