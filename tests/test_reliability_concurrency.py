"""Reliability under concurrency (issue 6, "No lost updates" and "Edits from both sides").

- 8 writer threads against one app served over real HTTP (werkzeug, threaded), and
  separately against 2 gunicorn worker processes on loopback: 500 mixed creates,
  updates (POST/PUT/PATCH, some with If-Match) and deletes (trash; some send
  force=true, which only trashes) on an overlapping set of records. Afterwards every
  file parses, no id or slug is used twice, every successful write is one git commit whose message matches the response, the
  final files agree with the last successful write of each record, the search index and
  the lists agree with the files, and no request got a 5xx.
- An editor changes a file on disk while the interface writes the same record: the
  interface applies only the fields it sends on top of the latest file
  (`service.Service._current`), or answers 412 when the client sent an old If-Match.
- A `git pull` brings a change to a record: fast-forward (the interface then writes on
  top of it) and a conflicting one (merge conflict in the working tree): the conflicted
  file is reported, never overwritten, and a write the interface refused is not
  committed later by the person resolving the merge.

Figures are printed with the prefix "RELIABILITY" (run with -s to see them).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import re
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import BASE, NOW, git, make_repo
from gitserver import free_port, serve_in_thread, start_gunicorn
from gitserver import stop_process as stop

from calendar_app.catalog.index import TextIndex
from calendar_app.http.app import create_app
from calendar_app.model.records import RecordError, from_file
from calendar_app.model.resources import RESOURCES
from calendar_app.store import yamlfile

WRITERS = 8
# The workload's size: the default run hammers with 120 operations (every check below
# still runs and fails when a lock goes missing); `-m slow` runs the full 500.
OPERATIONS = [120, pytest.param(500, marks=pytest.mark.slow)]
OK_WRITE = (200, 201)


# -- a tiny HTTP client over loopback ---------------------------------------------------
class Http:
    def __init__(self, port: int, headers: dict | None = None) -> None:
        self.port = port
        self.headers = headers or {}

    def request(self, method: str, path: str, body: object = None,
                headers: dict | None = None, raw: bytes | None = None,
                timeout: float = 60) -> tuple[int, dict, object]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            hdrs = {**self.headers, **(headers or {})}
            data = raw
            if body is not None:
                data = json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
            out_headers = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload
        return resp.status, out_headers, parsed


def basic(name: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 30,
                  log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log else ""
            raise RuntimeError(f"server exited with {proc.returncode}:\n{tail}")
        try:
            status, _, _ = Http(port).request("GET", BASE + "/", timeout=5)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.02)  # servers start in about a second: poll often
    raise RuntimeError("server did not start")


STALE_LOCK = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def start_after_kill(start: Callable[[int], subprocess.Popen], log: Path, git_dir: Path,
                     before_removing: Callable[[], object] = lambda: None,
                     timeout: float = 30) -> tuple[int, subprocess.Popen, int]:
    """Start a server, `start(port)`, after a kill: (port, process, locks removed).
    A git the kill interrupted leaves its locks (index.lock, HEAD.lock, a branch's);
    the start-up then refuses, naming one as git does. The operator's fix, removing
    the stale locks it names, is applied and the server started again (a kill inside
    `git commit` can leave two: two refusals). Any other failure raises."""
    removed = 0
    for _attempt in range(4):
        port = free_port()
        seen = log.stat().st_size if log.exists() else 0
        proc = start(port)
        try:
            wait_for_port(port, proc, timeout=timeout, log=log)
            return port, proc, removed
        except RuntimeError:
            stop(proc)
            # Only this start's output: the log also holds earlier starts' messages,
            # naming locks already removed.
            said = log.read_bytes()[seen:].decode(errors="replace")
            locks = {Path(name) for name in STALE_LOCK.findall(said)}
            if not locks or not all(lk.exists() and git_dir in lk.parents for lk in locks):
                raise
            before_removing()
            for lock in locks:
                lock.unlink()
                removed += 1
    raise AssertionError("server did not come back")


class ThreadedServer:
    """The app behind werkzeug's threaded server, in a thread of this process."""

    def __init__(self, app) -> None:
        import logging

        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.thread: threading.Thread | None = None

    def __enter__(self):
        self.thread = serve_in_thread(self.server)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)


# -- the state of a content tree, read straight from the files --------------------------
def record_files(content: Path) -> list[Path]:
    return sorted(p for name in RESOURCES for p in (content / name).rglob("*.yaml")
                  if not any(part.startswith(".") for part in p.relative_to(content).parts))


def check_tree(content: Path) -> dict:
    """Parse every record file on its own; returns {id: (collection, relpath, data)}.
    Fails on an unparsable file, a duplicate id or slug, or a stray temporary file."""
    problems: list[str] = []
    by_id: dict[int, tuple[str, str, dict]] = {}
    slugs: dict[tuple[str, str], str] = {}
    for path in record_files(content):
        rel = path.relative_to(content).as_posix()
        collection = rel.split("/")[0]
        try:
            record = from_file(collection, yamlfile.load(path.read_bytes()), rel)
        except (yamlfile.YamlError, RecordError) as exc:
            problems.append(f"{rel}: {exc}")
            continue
        if record.id in by_id:
            problems.append(f"{rel}: id {record.id} also in {by_id[record.id][1]}")
        if (collection, record.slug) in slugs:
            problems.append(f"{rel}: slug {record.slug} also in {slugs[collection, record.slug]}")
        if rel.rsplit("/", 1)[-1] != f"{record.slug}.yaml":
            problems.append(f"{rel}: file name does not match slug {record.slug}")
        by_id[record.id] = (collection, rel, record.data)
        slugs[collection, record.slug] = rel
    strays = [p.relative_to(content).as_posix() for p in content.rglob(".tmp-*")]
    problems += [f"temporary file left: {s}" for s in strays]
    assert not problems, "\n".join(problems)
    return by_id


COMMIT = re.compile(r'^(\w+): (create|update|trash|delete) "(.*?)"(?: \(was "(.*)"\))? '
                    r'\(#(\d+)\)$')


def commits_since(repo: Path, base: str) -> list[tuple[str, str, str, int]]:
    """(collection, verb, title, id) of each commit after `base`, oldest first."""
    out = []
    log = git(repo, "log", "--reverse", "--format=%s", f"{base}..HEAD")
    for line in log.splitlines():
        match = COMMIT.match(line)
        assert match, f"unexpected commit message {line!r}"
        out.append((match.group(1), match.group(2), match.group(3), int(match.group(5))))
    return out


# -- the workload -----------------------------------------------------------------------
SLUG_POOL = ["shared-slug", "shared-slug-2", "concert", "market", "talk"]


class Workload:
    """8 writers, `operations` operations on overlapping records; every response is kept."""

    def __init__(self, port: int, credentials: list[dict], seed: int = 6,
                 operations: int = 500) -> None:
        self.port = port
        self.credentials = credentials
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.ids: dict[str, list[int]] = {"events": [], "venues": [], "organizers": []}
        self.results: list[dict] = []
        self.counter = 0
        self.remaining = operations

    def token(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter

    def seed_records(self) -> None:
        http = Http(self.port, self.credentials[0])
        for i in range(4):
            for collection, body in self._create_body(f"seed{i}"):
                self._send(http, "POST", f"{BASE}/{collection}", body, "create", collection)

    def _create_body(self, tag: str) -> list[tuple[str, dict]]:
        day = 1 + self.rng.randrange(27)
        event = {"title": f"Event {tag}", "start_date": f"2027-02-{day:02d} 19:00:00",
                 "end_date": f"2027-02-{day:02d} 21:00:00",
                 "description": f"Body {tag}", "cost": str(self.rng.randrange(5, 50))}
        if self.rng.random() < 0.5:
            event["slug"] = self.rng.choice(SLUG_POOL)
        if self.rng.random() < 0.3:
            event["status"] = self.rng.choice(["draft", "pending", "private"])
        return [("events", event), ("venues", {"venue": f"Venue {tag}", "city": "Riverside"}),
                ("organizers", {"organizer": f"Organizer {tag}"})]

    def _send(self, http: Http, method: str, path: str, body: dict | None, kind: str,
              collection: str, headers: dict | None = None, target: int | None = None) -> dict:
        started = time.monotonic()
        try:
            status, _hdrs, payload = http.request(method, path, body, headers)
        except OSError as exc:
            status, payload = -1, repr(exc)
        result = {"method": method, "path": path, "body": body, "kind": kind,
                  "collection": collection, "status": status, "response": payload,
                  "target": target, "if_match": bool(headers and "If-Match" in headers),
                  "seconds": time.monotonic() - started}
        with self.lock:
            self.results.append(result)
            if status == 201 and isinstance(payload, dict):
                self.ids[collection].append(payload["id"])
        return result

    def _pick(self, collection: str) -> int | None:
        with self.lock:
            pool = self.ids[collection]
            # Overlap on purpose: most operations hit the first few records.
            if not pool:
                return None
            return pool[min(int(self.rng.expovariate(0.4)), len(pool) - 1)]

    def _take(self) -> bool:
        with self.lock:
            if self.remaining <= 0:
                return False
            self.remaining -= 1
            return True

    def writer(self, number: int) -> None:
        http = Http(self.port, self.credentials[number % len(self.credentials)])
        rng = random.Random(number)
        while self._take():
            collection = rng.choices(["events", "venues", "organizers"], [6, 2, 2])[0]
            roll = rng.random()
            target = self._pick(collection)
            if roll < 0.3 or target is None:
                tag = f"w{number}t{self.token()}"
                body = dict(self._create_body(tag))[collection]
                self._send(http, "POST", f"{BASE}/{collection}", body, "create", collection)
            elif roll < 0.85:
                title_key = RESOURCES[collection].title_field
                body = {title_key: f"Renamed w{number}t{self.token()}"}
                if collection == "events" and rng.random() < 0.3:
                    body["slug"] = rng.choice(SLUG_POOL)
                if collection == "events" and rng.random() < 0.3:
                    body["cost"] = str(rng.randrange(1, 99))
                headers = None
                if rng.random() < 0.25:
                    status, hdrs, _ = http.request("GET", f"{BASE}/{collection}/{target}")
                    if status == 200:
                        headers = {"If-Match": hdrs["etag"]}
                method = rng.choice(["POST", "PUT", "PATCH"])
                self._send(http, method, f"{BASE}/{collection}/{target}", body, "update",
                           collection, headers, target)
            else:
                # The plugin's clients send force=true; it only ever trashes.
                body = {"force": True} if rng.random() < 0.4 else {}
                self._send(http, "DELETE", f"{BASE}/{collection}/{target}", body, "delete",
                           collection, None, target)

    def run(self) -> float:
        started = time.monotonic()
        threads = [threading.Thread(target=self.writer, args=(n,)) for n in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        return time.monotonic() - started


def allowed_failure(result: dict) -> bool:
    """Answers that are a correct refusal under concurrency, not a fault."""
    status, payload = result["status"], result["response"]
    code = payload.get("code") if isinstance(payload, dict) else None
    if status == 412:
        return result["if_match"] and code == "rest_precondition_failed"
    if status == 410:
        return result["kind"] == "delete"  # trashed by another writer first
    if status == 409:
        return code == "rest_conflict"  # removed while the request waited for the lock
    if status in (400, 404):
        # The record was removed by another writer (events 404, others 400 on id),
        # or an update asked for a slug another record holds.
        params = payload.get("data", {}).get("params", {}) if isinstance(payload, dict) else {}
        return code in ("rest-event-not-found",) or set(params) <= {"id", "slug"} and bool(
            params)
    return False


def verify(repo: Path, content: Path, base_commit: str, results: list[dict]) -> dict:
    """Every check of the issue's first point; returns the figures."""
    files = check_tree(content)
    five = [r for r in results if r["status"] >= 500 or r["status"] < 0]
    assert not five, f"{len(five)} requests failed with 5xx/no answer: {five[:3]}"
    bad = [r for r in results if r["status"] not in OK_WRITE and not allowed_failure(r)]
    assert not bad, f"unexpected answers: {bad[:5]}"
    ok = [r for r in results if r["status"] in OK_WRITE]
    commits = commits_since(repo, base_commit)
    # One commit per successful write, and the same ones.
    assert len(commits) == len(ok), (len(commits), len(ok))
    expected = Counter()
    for r in ok:
        resp = r["response"]
        title_key = RESOURCES[r["collection"]].title_field
        title = resp.get("title") if r["collection"] == "events" else resp.get(title_key)
        verb = {"create": "create", "update": "update"}.get(r["kind"])
        if r["kind"] == "delete":
            verb = "trash"  # force=true is ignored, as the plugin ignores it
            expected[(r["collection"], verb, resp["id"])] += 1
        else:
            expected[(r["collection"], verb, resp["id"], title)] += 1
    got = Counter()
    for collection, verb, title, rid in commits:
        if verb in ("trash", "delete"):
            got[(collection, verb, rid)] += 1
        else:
            got[(collection, verb, rid, title)] += 1
    assert got == expected, (expected - got, got - expected)
    # The files hold the last successful write of each record (commit order).
    last: dict[int, tuple[str, str, str]] = {}
    for collection, verb, title, rid in commits:
        last[rid] = (collection, verb, title)
    for rid, (collection, verb, title) in last.items():
        if verb == "delete":
            assert rid not in files, f"#{rid} deleted but still in {files[rid][1]}"
            continue
        assert rid in files, f"#{rid} ({verb}) missing from the files"
        data = files[rid][2]
        if verb == "trash":
            assert data["status"] == "trash"
        else:
            assert data[RESOURCES[collection].title_field] == title, (rid, data, title)
    # git agrees with the working tree.
    assert git(repo, "status", "--porcelain", "--", "content").strip() == ""
    git(repo, "fsck", "--no-progress")
    return {"requests": len(results), "successful_writes": len(ok),
            "commits": len(commits), "refused": Counter(r["status"] for r in results
                                                        if r["status"] not in OK_WRITE),
            "files_checked": len(record_files(content))}


def check_reads(port: int, admin: dict, files: dict) -> int:
    """Each record in the files answers the same over HTTP; lists agree with the files."""
    http = Http(port, admin)
    checked = 0
    for rid, (collection, _rel, data) in files.items():
        status, _, body = http.request("GET", f"{BASE}/{collection}/{rid}")
        if collection == "events" and data.get("status") == "trash":
            assert status == 403, (rid, status)
        else:
            assert status == 200, (rid, status, body)
            title_key = "title" if collection == "events" else RESOURCES[collection].title_field
            title = data[RESOURCES[collection].title_field]
            if re.search(r"w\d+t\d+|seed\d", title):  # written by the workload: plain text
                assert body[title_key] == title, (rid, body[title_key], title)
        checked += 1
    # Published events in the files == the anonymous list of the same window.
    window = "start_date=2027-01-01&end_date=2027-12-31&per_page=50"
    published = {rid for rid, (c, _r, d) in files.items() if c == "events"
                 and d.get("status") == "publish" and str(d["start_date"]).startswith("2027")
                 and not d.get("hide_from_listings")}
    listed: set[int] = set()
    page = 1
    while True:
        status, hdrs, body = Http(port).request("GET", f"{BASE}/events?{window}&page={page}")
        if status == 404 and page > 1:
            break
        assert status == 200, body
        # A recurring event is listed as its occurrences, each naming its series.
        listed |= {e.get("series_id", e["id"]) for e in body["events"]}
        if page >= int(hdrs.get("x-tec-totalpages", "1")):
            break
        page += 1
    assert listed == published, (published - listed, listed - published)
    return checked


def check_index(cache: Path, content: Path, files: dict, timeout: float = 30) -> None:
    """The Whoosh index holds exactly the record files (manifest), once caught up."""
    wanted = {rel for (_c, rel, _d) in files.values()}
    text = TextIndex(cache)
    deadline = time.monotonic() + timeout
    while True:
        manifest = text.manifest() or {}  # None: no index yet
        stale = [rel for rel in wanted if manifest.get(rel, ((0, 0), 0))[0] != (
            (st := os.stat(content / rel)).st_mtime_ns, st.st_size)]
        extra = manifest.keys() - wanted
        if not stale and not extra:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"index behind: stale {sorted(stale)[:5]}, extra {extra}")
        time.sleep(0.05)


def check_search(port: int, admin: dict, files: dict) -> int:
    """A search for each record's unique title token finds exactly the records whose
    title or description has a word starting with it (search matches prefixes, so
    `w7t40` also finds `w7t400`)."""
    http = Http(port, admin)
    found = 0
    live = {rid: (c, d[RESOURCES[c].title_field], d.get("description") or "")
            for rid, (c, _rel, d) in files.items() if d.get("status") != "trash"}
    for rid, (collection, title, _description) in live.items():
        match = re.search(r"w\d+t\d+", title)
        if not match:
            continue
        token = match.group(0)
        query = f"search={token}&status=publish,draft,pending,private,future"
        if collection == "events":
            query += "&start_date=2000-01-01&end_date=2100-01-01"
        status, _, body = http.request("GET", f"{BASE}/{collection}?{query}")
        assert status == 200, body
        ids = {item["id"] for item in body[collection]}
        expected = {other for other, (c, t, d) in live.items()
                    if c == collection and re.search(rf"\b{token}", f"{t} {d}")}
        assert rid in expected and ids == expected, (rid, token, ids, expected)
        found += 1
    return found


def report(name: str, figures: dict) -> None:
    print(f"\nRELIABILITY {name}: " + json.dumps(figures, default=dict))


# -- the tests -----------------------------------------------------------------------------
@pytest.mark.parametrize("size", OPERATIONS)
def test_eight_writer_threads_over_http(tmp_path: Path, users: dict[str, str],
                                        size: int) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    cache = tmp_path / "cache"
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(cache), "NOW": NOW, "WATCH": False,
                      "INDEX_IN_BACKGROUND": True})
    base_commit = git(repo, "rev-parse", "HEAD").strip()
    creds = [basic("administrator", users["administrator"]), basic("editor", users["editor"])]
    try:
        with ThreadedServer(app) as server:
            work = Workload(server.port, creds, operations=size)
            work.seed_records()
            seconds = work.run()
            t0 = time.monotonic()
            figures = verify(repo, content, base_commit, work.results)
            files = check_tree(content)
            t1 = time.monotonic()
            check_index(cache, content, files)
            t2 = time.monotonic()
            figures["records_read_back"] = check_reads(server.port, creds[0], files)
            t3 = time.monotonic()
            figures["searches"] = check_search(server.port, creds[0], files)
            figures["seconds"] = round(seconds, 1)
            figures["check_seconds"] = [round(x, 1) for x in (t1 - t0, t2 - t1, t3 - t2,
                                                              time.monotonic() - t3)]
    finally:
        app.extensions["calendar"].close()
    # A fresh app over the same tree (start-up catch-up) sees no problem file.
    fresh = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                        "CACHE_DIR": str(cache), "NOW": NOW, "TESTING": True})
    catalog = fresh.extensions["calendar"].catalog
    assert not catalog.problems
    assert {r.id for r in catalog.records.values()} == set(files)
    report("threads", figures)


# Two gunicorn workers end to end: the slow run only (the default run has two workers
# in test_read_your_writes and eight writer threads above).
@pytest.mark.slow
@pytest.mark.parametrize("size", [500])
def test_two_gunicorn_workers(tmp_path: Path, users: dict[str, str], size: int) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    cache = tmp_path / "cache"
    port = free_port()
    base_commit = git(repo, "rev-parse", "HEAD").strip()
    creds = [basic("administrator", users["administrator"]), basic("editor", users["editor"])]
    proc = start_gunicorn(content, tmp_path / "users.yaml", cache, port,
                          log=tmp_path / "gunicorn.log")
    try:
        wait_for_port(port, proc, log=tmp_path / "gunicorn.log")
        work = Workload(port, creds, seed=7, operations=size)
        work.seed_records()
        seconds = work.run()
        figures = verify(repo, content, base_commit, work.results)
        files = check_tree(content)
        check_index(cache, content, files)
        # Both workers answer from the same state: read everything twice.
        figures["records_read_back"] = check_reads(port, creds[0], files)
        check_reads(port, creds[1], files)
        figures["searches"] = check_search(port, creds[0], files)
        figures["seconds"] = round(seconds, 1)
    finally:
        stop(proc)
    log = (tmp_path / "gunicorn.log").read_text(errors="replace")
    # The index is checked under its lock and searchers reopen when another worker's
    # commit removed their files (issue 12): no traceback at all, not even a retried one.
    assert "Traceback" not in log, log[-4000:]
    report("gunicorn", figures)


def test_a_write_waits_for_a_reread_in_flight(tmp_path: Path, users: dict[str, str],
                                              monkeypatch) -> None:
    """A re-read of changed files (the watcher's thread, another worker's journal)
    forgets them before loading them again. A write that allocated an id meanwhile took
    the id of a record being re-read (seen once with two gunicorn workers): writes now
    wait for the re-read to end."""
    from calendar_app.catalog.catalog import Catalog

    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "WATCH": False})
    catalog = app.extensions["calendar"].catalog
    top = max(catalog.records)
    path = catalog.records[top].path
    reloading = threading.Event()
    load = Catalog._load_file

    def slow_load(self, relpath, *args, **kwargs):
        if relpath == path:
            reloading.set()
            time.sleep(0.3)
        return load(self, relpath, *args, **kwargs)
    monkeypatch.setattr(Catalog, "_load_file", slow_load)
    reread = threading.Thread(target=catalog.refresh, args=([path],))
    reread.start()
    try:
        assert reloading.wait(5)
        response = app.test_client().post(f"{BASE}/tags", json={"name": "Fresh tag"},
                                          headers=basic("administrator", users["administrator"]))
    finally:
        reread.join()
        app.extensions["calendar"].close()
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["id"] == top + 1
    assert catalog.records[top].path == path and catalog.records[top + 1].name == "Fresh tag"


# -- edits from both sides ---------------------------------------------------------------
@pytest.fixture
def live(tmp_path: Path, users: dict[str, str]):
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "WATCH": False})
    with ThreadedServer(app) as server:
        yield content, Http(server.port, basic("administrator", users["administrator"]))
    app.extensions["calendar"].close()


def _event_file(content: Path, rid: int) -> Path:
    for path in record_files(content):
        if path.relative_to(content).parts[0] == "events":
            try:
                data = yamlfile.load(path.read_bytes())
            except yamlfile.YamlError:
                continue
            if data.get("id") == rid:
                return path
    raise AssertionError(rid)


def test_disk_edit_during_interface_write_keeps_both(live) -> None:
    """The documented rule (Service._current): the interface applies only the fields it
    sends on top of the latest file; with an old If-Match it answers 412 instead."""
    content, http = live
    status, hdrs, event = http.request("GET", f"{BASE}/events?per_page=1")
    rid = event["events"][0]["id"]
    _status, hdrs, _before = http.request("GET", f"{BASE}/events/{rid}")
    etag = hdrs["etag"]
    path = _event_file(content, rid)
    text = path.read_text()
    # An editor changes the description (and adds a comment) on disk.
    edited = re.sub(r"^description:.*?(?=^\w|\Z)", "description: Changed on disk\n",
                    text, flags=re.MULTILINE | re.DOTALL)
    edited = "# edited by hand\n" + edited
    assert edited != text
    path.write_text(edited)
    # The interface writes the cost only: the disk edit survives.
    status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"cost": "77"})
    assert status == 200, body
    assert "Changed on disk" in body["description"]
    assert body["cost"].endswith("77")
    after = path.read_text()
    assert "# edited by hand" in after and "Changed on disk" in after and "77" in after
    # A client that read before the disk edit and sends If-Match gets a 412, nothing written.
    path.write_text(after.replace("Changed on disk", "Changed again"))
    snapshot = path.read_bytes()
    status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"title": "Stale"},
                                   headers={"If-Match": etag})
    assert status == 412, body
    assert body["code"] == "rest_precondition_failed"
    assert path.read_bytes() == snapshot
    # And a write that sends the very field the editor changed wins (last writer), in
    # full, never a mix of both texts.
    status, _, body = http.request("PATCH", f"{BASE}/events/{rid}",
                                   {"description": "From the interface"})
    assert status == 200
    final = yamlfile.load(path.read_bytes())
    assert final["description"].strip() == "From the interface"
    check_tree(content)


def test_disk_edit_race_many_rounds(live) -> None:
    """An editor rewrites a file in a loop while the interface patches it: every state
    on disk is a valid file, and the interface's fields always land."""
    content, http = live
    _, _, listing = http.request("GET", f"{BASE}/events?per_page=1")
    rid = listing["events"][0]["id"]
    path = _event_file(content, rid)
    stop_flag = threading.Event()
    editor_writes = 0
    seen_bad: list[str] = []

    def editor() -> None:
        nonlocal editor_writes
        n = 0
        while not stop_flag.is_set():
            n += 1
            text = path.read_text()
            new = re.sub(r"^excerpt:.*$", f"excerpt: editor {n}", text, flags=re.MULTILINE)
            if "excerpt:" not in text:
                new = text + f"excerpt: editor {n}\n"
            tmp = path.with_name(f".editor-{n}.swp")
            tmp.write_text(new)
            os.replace(tmp, path)  # editors save atomically too (vim, VS Code)
            editor_writes += 1
            try:
                yamlfile.load(path.read_bytes())
            except yamlfile.YamlError as exc:
                seen_bad.append(str(exc))
            time.sleep(0.005)

    t = threading.Thread(target=editor)
    t.start()
    try:
        for i in range(40):
            status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"cost": f"{i}"})
            assert status == 200, body
            data = yamlfile.load(path.read_bytes())
            assert data["excerpt"].startswith("editor ")
    finally:
        stop_flag.set()
        t.join()
    assert not seen_bad
    # The editor's read-modify-write may still put back a cost it read just before the
    # last PATCH (nothing on our side can stop that; this check failed once in CI).
    # Once it has stopped, a write lands in full and keeps the editor's last excerpt.
    last_excerpt = yamlfile.load(path.read_bytes())["excerpt"]
    status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"cost": "40"})
    assert status == 200, body
    data = yamlfile.load(path.read_bytes())
    assert str(data["cost"]) == "40" and data["excerpt"] == last_excerpt
    check_tree(content)
    report("disk-edit-race", {"interface_writes": 40, "editor_writes": editor_writes})


def _clone(tmp_path: Path, repo: Path) -> Path:
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(repo), str(other)], check=True)
    return other


def test_git_pull_fast_forward_then_write(tmp_path: Path, users: dict[str, str]) -> None:
    """Upstream changes a record; after `git pull` the interface's next write applies
    on top of the pulled version (the watcher or the write itself re-reads it)."""
    upstream = make_repo(tmp_path / "up").parent
    git(upstream, "config", "receive.denyCurrentBranch", "ignore")
    local = tmp_path / "local"
    subprocess.run(["git", "clone", "-q", str(upstream), str(local)], check=True)
    content = local / "content"
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "WATCH": True})
    admin = basic("administrator", users["administrator"])
    with ThreadedServer(app) as server:
        http = Http(server.port, admin)
        _, _, listing = http.request("GET", f"{BASE}/events?per_page=1")
        rid = listing["events"][0]["id"]
        _, hdrs, _ = http.request("GET", f"{BASE}/events/{rid}")
        etag = hdrs["etag"]
        rel = _event_file(content, rid).relative_to(local)
        up_file = upstream / rel
        up_file.write_text(up_file.read_text().replace("title:", "title: Pulled", 1)
                           .replace("title: Pulled \"", "title: \"Pulled ", 1))
        git(upstream, "commit", "-qam", "upstream edit")
        git(local, "pull", "-q", "--ff-only")
        status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"title": "x"},
                                       headers={"If-Match": etag})
        assert status == 412, body
        status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"cost": "12"})
        assert status == 200, body
        assert body["title"].startswith("Pulled"), body["title"]
        data = yamlfile.load((local / rel).read_bytes())
        assert data["title"].startswith("Pulled") and str(data["cost"]).endswith("12")
    app.extensions["calendar"].close()
    assert git(local, "status", "--porcelain").strip() == ""
    check_tree(content)


def test_git_pull_conflict_is_reported_not_overwritten(tmp_path: Path,
                                                       users: dict[str, str]) -> None:
    """The interface commits a change to a record, upstream changed the same lines: the
    pull stops with a conflict in the working tree. The conflicted file is reported
    (path, line) and left out; the interface never overwrites it (409), a write to
    another record is refused while the merge is open (nothing changed, nothing staged),
    and after the merge is resolved everything is consistent."""
    upstream = make_repo(tmp_path / "up").parent
    local = tmp_path / "local"
    subprocess.run(["git", "clone", "-q", str(upstream), str(local)], check=True)
    content = local / "content"
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "WATCH": True})
    calendar = app.extensions["calendar"]
    admin = basic("administrator", users["administrator"])
    with ThreadedServer(app) as server:
        http = Http(server.port, admin)
        _, _, listing = http.request("GET", f"{BASE}/events?per_page=2")
        rid, other_id = (e["id"] for e in listing["events"][:2])
        rel = _event_file(content, rid).relative_to(local)
        status, _, body = http.request("PATCH", f"{BASE}/events/{rid}",
                                       {"title": "Local title"})
        assert status == 200
        up_file = upstream / rel
        up_file.write_text(re.sub(r"^title:.*$", "title: Upstream title",
                                  up_file.read_text(), flags=re.MULTILINE))
        git(upstream, "commit", "-qam", "upstream edit")
        pull = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit"], cwd=local,
                              capture_output=True, text=True, check=False)
        assert pull.returncode != 0 and "CONFLICT" in pull.stdout + pull.stderr
        conflicted = (local / rel).read_text()
        assert "<<<<<<<" in conflicted
        # The watcher reports the file as a problem and leaves the record out.
        deadline = time.monotonic() + 10
        while str(rel.relative_to("content")) not in calendar.catalog.problems and (
                time.monotonic() < deadline):
            time.sleep(0.05)
        problem = calendar.catalog.problems.get(rel.relative_to("content").as_posix())
        assert problem is not None and problem.line > 0, calendar.catalog.problems
        # The problem is noted while the catalog's next version is made, and readers get
        # that version once it is whole: the record is gone from it a moment later.
        deadline = time.monotonic() + 10
        status, _, body = http.request("GET", f"{BASE}/events/{rid}")
        while status == 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            status, _, body = http.request("GET", f"{BASE}/events/{rid}")
        assert status == 404, body
        # The interface does not overwrite the conflicted file.
        status, _, body = http.request("PATCH", f"{BASE}/events/{rid}", {"cost": "5"})
        assert status in (404, 409), (status, body)
        assert (local / rel).read_text() == conflicted
        # A write to another record while the merge is open: either refused with nothing
        # changed (and nothing left staged for the merge commit), or done in full.
        other_rel = _event_file(content, other_id).relative_to(local)
        other_before = (local / other_rel).read_text()
        status, _, body = http.request("PATCH", f"{BASE}/events/{other_id}",
                                       {"title": "Written during merge"})
        assert status < 500 or body.get("code") == "calendar-storage-unavailable", body
        staged = git(local, "diff", "--cached", "--name-only").split()
        if status >= 400:
            assert (local / other_rel).read_text() == other_before
            assert other_rel.as_posix() not in staged, (
                f"a write answered {status} {body.get('code')} is left staged in git's "
                "index and would be committed by whoever concludes the merge")
    # Resolve the merge like a person would (take theirs), commit: consistent again.
    git(local, "checkout", "--theirs", "--", str(rel))
    git(local, "add", str(rel))
    git(local, "commit", "-q", "--no-edit")
    app.extensions["calendar"].close()
    assert git(local, "status", "--porcelain").strip() == ""
    files = check_tree(content)
    assert files[rid][2]["title"] == "Upstream title"
    assert files[other_id][2]["title"] != "Written during merge" or status == 200
