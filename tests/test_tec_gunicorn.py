"""Read-after-write across the two namespaces under gunicorn with 2 workers (issue 22):
whatever one namespace writes, the other reads back at once, whichever worker answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, make_repo
from gitserver import start_gunicorn
from test_reliability_concurrency import Http, basic, free_port, stop, wait_for_port

from calendar_app.http.tec_api import ACKNOWLEDGEMENT

TEC = "/wp-json/tec/v1"
ROUNDS = 12


# gunicorn; quick forms: test_tec_api (in-process), test_read_your_writes (gunicorn)
@pytest.mark.slow
def test_writes_read_back_across_namespaces_two_workers(tmp_path: Path,
                                                        users: dict[str, str]) -> None:
    content = make_repo(tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / "cache", port, log=log)
    http = Http(port, {**basic("administrator", users["administrator"]),
                       "X-TEC-EEA": ACKNOWLEDGEMENT})
    misses: list[str] = []

    def expect(what: str, status: int, want: int, ok: bool = True) -> None:
        if status != want or not ok:
            misses.append(f"{what}: {status}")

    try:
        wait_for_port(port, proc, log=log)
        for n in range(ROUNDS):
            s, _h, venue = http.request("POST", f"{TEC}/venues", {"title": f"Hall {n}"})
            expect("tec venue", s, 201)
            s, _h, old = http.request("GET", f"{BASE}/venues/{venue['id']}")
            expect("tribe reads venue", s, 200, old.get("venue") == f"Hall {n}")
            s, _h, event = http.request("POST", f"{BASE}/events", {
                "title": f"Night {n}", "start_date": "2027-05-01 19:00:00",
                "end_date": "2027-05-01 21:00:00", "venue": venue["id"]})
            expect("tribe event", s, 201)
            s, _h, tec = http.request("GET", f"{TEC}/events/{event['id']}")
            expect("tec reads event", s, 200, tec.get("venues", [{}])[0].get("id") == venue["id"])
            s, _h, _b = http.request("PUT", f"{TEC}/events/{event['id']}", {
                "title": f"Night {n} moved", "start_date": "2027-05-02 19:00:00",
                "end_date": "2027-05-02 21:00:00"})
            expect("tec update", s, 200)
            s, _h, old = http.request("GET", f"{BASE}/events/{event['id']}")
            expect("tribe reads update", s, 200, old.get("title") == f"Night {n} moved"
                   and old.get("start_date") == "2027-05-02 19:00:00")
            s, _h, listed = http.request("GET", f"{TEC}/events?search=moved&per_page=100")
            expect("tec list", s, 200, event["id"] in [e["id"] for e in listed])
            s, _h, _b = http.request("DELETE", f"{TEC}/events/{event['id']}")
            expect("tec trash", s, 200)
            s, _h, old = http.request("GET", f"{BASE}/events/{event['id']}")
            expect("tribe sees trash", s, 403, old.get("code") == "event-no-longer-available")
    finally:
        stop(proc)
    assert misses == []
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
