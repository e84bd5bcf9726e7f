"""Read-your-writes with everything switched on (issue 12).

Clients do what a plugin client does: create a venue and an organizer, read them back,
create an event linking both, read it by id and by slug and through filtered lists,
update it and read it again. Every answer must show the state the client has just
written: on the app in-process (werkzeug, threaded, watcher and background indexer on)
and under gunicorn with 2 workers (the README's production command), against a real git
repository. A second test runs one long mixed sequence twice against fresh servers and
compares every answer.
"""

from __future__ import annotations

import random
import re
import threading
import time
from pathlib import Path

import pytest
from conftest import BASE, NOW, git, make_repo
from test_reliability_concurrency import (
    Http,
    ThreadedServer,
    basic,
    free_port,
    start_gunicorn,
    stop,
    wait_for_port,
)

from calendar_app.http.app import create_app

CLIENTS = 4
# Rounds per client, 23 calls a round: the default run makes 4 x (1 + 6 x 23) = 556 calls
# (a lost read-your-write still shows within a few rounds); `-m slow` the full 2,028.
ROUNDS = [6, pytest.param(22, marks=pytest.mark.slow)]
CALLS_A_ROUND = 23


class Client:
    """One plugin client's loop; every unexpected answer is a miss."""

    def __init__(self, http: Http, name: str) -> None:
        self.http = http
        self.name = name
        self.calls = 0
        self.misses: list[str] = []
        self.organizer = 0

    def call(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        self.calls += 1
        status, _headers, payload = self.http.request(method, BASE + path, body)
        return status, payload

    def expect(self, what: str, status: int, payload: object, want: int,
               check: bool = True) -> None:
        if status != want or not check:
            text = str(payload)[:200]
            self.misses.append(f"{self.name} {what}: {status} {text}")

    def start(self) -> None:
        s, organizer = self.call("POST", "/organizers", {"organizer": f"Crew {self.name}"})
        self.expect("create organizer", s, organizer, 201)
        self.organizer = organizer.get("id", 0) if isinstance(organizer, dict) else 0

    def round(self, n: int, category_id: int) -> None:
        """3 writes, each followed by reads of what it wrote: 23 calls."""
        tag, oid = f"{self.name}-{n}", self.organizer
        s, venue = self.call("POST", "/venues", {"venue": f"Hall {tag}", "city": "Lyon"})
        self.expect("create venue", s, venue, 201)
        if not isinstance(venue, dict) or "id" not in venue:
            return
        vid = venue["id"]
        s, body = self.call("GET", f"/venues/{vid}")
        self.expect("venue by id", s, body, 200)
        s, body = self.call("GET", f"/venues/by-slug/{venue['slug']}")
        self.expect("venue by slug", s, body, 200, isinstance(body, dict) and body["id"] == vid)
        s, body = self.call("GET", f"/organizers/{oid}")
        self.expect("organizer by id", s, body, 200)
        s, event = self.call("POST", "/events", {
            "title": f"Night {tag}", "start_date": "2027-05-01 19:00:00",
            "end_date": "2027-05-01 22:00:00", "venue": vid, "organizer": [oid],
            "categories": [category_id]})
        linked = event.get("venue") if isinstance(event, dict) else None
        ok = isinstance(linked, dict) and linked.get("id") == vid and [
            c["id"] for c in event.get("categories", [])] == [category_id] and [
            o["id"] for o in event.get("organizer", [])] == [oid]
        self.expect("create event", s, event, 201, ok)
        if not isinstance(event, dict) or "id" not in event:
            return
        eid, slug = event["id"], event["slug"]
        for path in (f"/events/{eid}", f"/events/by-slug/{slug}", f"/events/{eid}"):
            s, body = self.call("GET", path)
            self.expect(f"event {path}", s, body, 200,
                        isinstance(body, dict) and body.get("title") == f"Night {tag}")
        for query in (f"venue={vid}", f"organizer={oid}", f"search=Night+{tag}",
                      f"categories={category_id}&search={tag}"):
            s, body = self.call("GET", f"/events?{query}&start_date=2027-04-01&per_page=50")
            ids = [e["id"] for e in body.get("events", [])] if isinstance(body, dict) else []
            self.expect(f"list {query}", s, body, 200, eid in ids if "organizer" in query
                        else ids == [eid])
        s, body = self.call("GET", f"/venues?event={eid}")
        ids = [v["id"] for v in body.get("venues", [])] if isinstance(body, dict) else []
        self.expect("venues of the event", s, body, 200, ids == [vid])
        s, body = self.call("PATCH", f"/events/{eid}", {"title": f"Late night {tag}"})
        self.expect("update event", s, body, 200,
                    isinstance(body, dict) and body.get("title") == f"Late night {tag}")
        for path in (f"/events/{eid}", f"/events/by-slug/{slug}", f"/events/{eid}",
                     f"/events/{eid}", f"/events/by-slug/{slug}", f"/events/{eid}",
                     f"/events/{eid}", f"/events?search=Late+{tag}&start_date=2027-04-01",
                     f"/events?venue={vid}&start_date=2027-04-01"):
            s, body = self.call("GET", path)
            if "?" in path:
                found = body.get("events") if isinstance(body, dict) else None
                ok = bool(found) and [e["id"] for e in found] == [eid] and (
                    found[0]["title"] == f"Late night {tag}")
            else:
                ok = isinstance(body, dict) and body.get("title") == f"Late night {tag}"
            self.expect(f"after update {path}", s, body, 200, ok)


def hammer(port: int, auth: dict, rounds: int) -> tuple[int, list[str], float]:
    clients = [Client(Http(port, auth), f"c{i}") for i in range(CLIENTS)]
    errors: list[BaseException] = []

    def run(client: Client) -> None:
        try:
            client.start()
            for n in range(rounds):
                client.round(n, category_id=1)
        except Exception as exc:  # noqa: BLE001 - a broken client fails the test, not hang it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return sum(c.calls for c in clients), [m for c in clients for m in c.misses], (
        time.monotonic() - t0)


@pytest.mark.parametrize("rounds", ROUNDS)
def test_read_your_writes_in_process_with_watcher(tmp_path: Path, users: dict[str, str],
                                                   rounds: int) -> None:
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW,
                      "WATCH": True, "INDEX_IN_BACKGROUND": True})
    try:
        with ThreadedServer(app) as server:
            calls, misses, seconds = hammer(server.port,
                                            basic("administrator", users["administrator"]),
                                            rounds)
        watcher = app.extensions["calendar"].watcher
        assert watcher is not None  # the watcher was on for the whole run
    finally:
        app.extensions["calendar"].close()
    print(f"READ-YOUR-WRITES in-process: {calls} calls, {len(misses)} misses, "
          f"{seconds:.1f} s")
    assert misses == []
    assert calls == CLIENTS * (1 + CALLS_A_ROUND * rounds)
    # Our own writes were not re-read as foreign changes: one catalog version per
    # write, none for the watcher's events about our own files.
    writes = CLIENTS * (1 + 3 * rounds)
    assert app.extensions["calendar"].catalog.current.version <= 1 + writes
    assert watcher.batches > 0  # ... though it saw them


@pytest.mark.parametrize("rounds", ROUNDS)
def test_read_your_writes_two_gunicorn_workers(tmp_path: Path, users: dict[str, str],
                                               rounds: int) -> None:
    content = make_repo(tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / "cache", port, log=log)
    try:
        wait_for_port(port, proc, log=log)
        calls, misses, seconds = hammer(port, basic("administrator", users["administrator"]),
                                        rounds)
    finally:
        stop(proc)
    print(f"READ-YOUR-WRITES gunicorn -w 2: {calls} calls, {len(misses)} misses, "
          f"{seconds:.1f} s")
    assert calls == CLIENTS * (1 + CALLS_A_ROUND * rounds)
    assert misses == []
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]


# -- the same sequence twice -------------------------------------------------------------
VOLATILE = {"date", "date_utc", "modified", "modified_utc", "global_id", "global_id_lineage"}


def _stable(value: object) -> object:
    """An answer without what depends on the moment it was made or the server's port."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"127\.0\.0\.1:\d+", "HOST", value)
    return value


def mixed_sequence(http: Http, steps: int, seed: int = 12) -> list[tuple[str, int, object]]:
    """`steps` writes, each followed by five ordinary plugin-client calls (~7 calls a
    step); what each answered."""
    rng = random.Random(seed)
    out: list[tuple[str, int, object]] = []

    def call(method: str, path: str, body: object = None) -> object:
        status, _h, payload = http.request(method, BASE + path, body)
        out.append((f"{method} {path}", status, _stable(payload)))
        return payload

    venues, organizers, events, tags = [], [], [], []
    for i in range(steps):
        kind = rng.choice(["venue", "organizer", "tag", "event", "event", "event"])
        if kind == "venue" or not venues:
            v = call("POST", "/venues", {"venue": f"Room {i}", "city": rng.choice(["Oslo", "Rome"])})
            venues.append(v["id"])
        elif kind == "organizer" or not organizers:
            o = call("POST", "/organizers", {"organizer": f"Team {i}",
                                              "email": f"team{i}@example.org"})
            organizers.append(o["id"])
        elif kind == "tag" or not tags:
            t = call("POST", "/tags", {"name": f"topic {i}"})
            tags.append(t["id"])
        else:
            day = 1 + rng.randrange(27)
            e = call("POST", "/events", {
                "title": f"Meeting {i}", "start_date": f"2027-06-{day:02d} 10:00:00",
                "end_date": f"2027-06-{day:02d} 12:00:00", "venue": rng.choice(venues),
                "organizer": [rng.choice(organizers)], "tags": [rng.choice(tags)],
                "featured": rng.random() < 0.3})
            events.append(e["id"])
        for _ in range(5):
            pick = rng.random()
            if pick < 0.2 and venues:
                call("GET", f"/events?venue={rng.choice(venues)}&start_date=2027-06-01")
            elif pick < 0.4 and organizers:
                call("GET", f"/events?organizer={rng.choice(organizers)}&start_date=2027-06-01")
            elif pick < 0.55 and tags:
                call("GET", f"/events?tags={rng.choice(tags)}&start_date=2027-06-01")
            elif pick < 0.65:
                call("GET", "/events?featured=true&start_date=2027-06-01&per_page=50")
            elif pick < 0.75:
                call("GET", f"/events?search=Meeting+{rng.randrange(i + 1)}&start_date=2027-06-01")
            elif pick < 0.85 and events:
                rid = rng.choice(events)
                call("DELETE", f"/events/{rid}?force=true")
                call("GET", f"/events/{rid}")
            elif pick < 0.92 and venues:
                call("GET", "/venues?page=1&per_page=50&search=Room")
            else:
                call("GET", "/tags?hide_empty=false&per_page=50")
    return out


# Steps of the sequence: 15 by default (about 100 calls, every kind of call several
# times); `-m slow` the full 40 (about 280).
@pytest.mark.parametrize("steps", [15, pytest.param(40, marks=pytest.mark.slow)])
def test_mixed_sequence_twice_gives_identical_answers(tmp_path: Path, users: dict[str, str],
                                                      steps: int) -> None:
    runs = []
    for n in range(2):
        content = make_repo(tmp_path / f"run{n}")
        port = free_port()
        log = tmp_path / f"gunicorn{n}.log"
        proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / f"cache{n}", port,
                              log=log)
        try:
            wait_for_port(port, proc, log=log)
            runs.append(mixed_sequence(Http(port, basic("administrator",
                                                        users["administrator"])), steps))
        finally:
            stop(proc)
        assert int(git(content.parent, "rev-list", "--count", "HEAD")) > steps
    first, second = runs
    assert len(first) >= 5 * steps
    assert [r[:2] for r in first] == [r[:2] for r in second]
    differ = [(a[0], a[2], b[2]) for a, b in zip(first, second, strict=True) if a != b]
    assert differ == []
    assert all(status < 500 for _what, status, _body in first)
