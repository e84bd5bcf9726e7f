"""The production server: gunicorn with the shipped configuration
(`calendar_app/gunicorn_conf.py`, which `start_gunicorn` passes to every gunicorn test).

- Request limits: gunicorn's own limits sit above the interface's, so a long query
  string or huge headers get the interface's JSON error, not gunicorn's HTML page.
- Preloading: the master loads the calendar once, before forking; each worker starts
  its own background threads right after the fork and answers its first request
  without loading anything; writes in one worker are seen by the other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BASE, make_repo
from test_reliability_concurrency import Http, basic, free_port, start_gunicorn, stop, wait_for_port


def _interface_error(status: int, payload: object, expected: int) -> None:
    assert status == expected, (status, payload)
    assert isinstance(payload, dict), payload  # JSON, not gunicorn's HTML page
    assert payload["data"]["status"] == expected and payload["code"] and payload["message"]


def test_long_query_and_huge_headers_get_the_interface_errors(tmp_path: Path,
                                                              users: dict[str, str]) -> None:
    content = make_repo(tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / "cache", port,
                          workers=1, log=log)
    try:
        wait_for_port(port, proc, log=log)
        http = Http(port)
        # 6000 characters: above MAX_QUERY_LENGTH (4096) and gunicorn's default request
        # line limit (4094).
        status, headers, payload = http.request("GET", f"{BASE}/events?search=" + "q" * 5993)
        _interface_error(status, payload, 414)
        assert headers["content-type"].startswith("application/json")
        # 12 KB in one header: above gunicorn's default field size (8190), above
        # MAX_HEADER_BYTES only together with others.
        status, _, payload = http.request("GET", f"{BASE}/events",
                                          headers={"X-Big": "h" * 12000})
        assert status == 200, payload
        status, _, payload = http.request("GET", f"{BASE}/events", headers={
            "X-Big": "h" * 12000, "X-Other": "o" * 5000})
        _interface_error(status, payload, 431)
        # Many small headers (gunicorn's default allows 100 fields).
        status, _, payload = http.request("GET", f"{BASE}/events", headers={
            f"X-Many-{i}": "m" for i in range(150)})
        assert status == 200, payload
        # Beyond gunicorn's own (raised) limits it still answers itself: the limits
        # stay finite.
        status, _, _ = http.request("GET", f"{BASE}/events", headers={"X-Huge": "h" * 70000})
        assert status == 431
    finally:
        stop(proc)
    assert "Traceback" not in log.read_text(errors="replace")
    print("PRODUCTION limits: " + json.dumps({"query_414": "json", "headers_431": "json"}))


@pytest.mark.slow  # gunicorn with two workers and the builder, end to end
def test_master_loads_before_forking_and_workers_share_writes(
        tmp_path: Path, users: dict[str, str]) -> None:
    content = make_repo(tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    # The access log names the worker (pid) that answered each request.
    proc = start_gunicorn(content, tmp_path / "users.yaml", tmp_path / "cache", port, log=log,
                          extra=("--access-logfile", "-",
                                 "--access-logformat", "ACCESS %(p)s %(m)s %(U)s %(s)s"))
    try:
        wait_for_port(port, proc, log=log)
        admin = Http(port, basic("administrator", users["administrator"]))
        reader = Http(port)
        for n in range(25):
            status, _, created = admin.request("POST", f"{BASE}/events", {
                "title": f"Preloaded {n}", "start_date": "2027-01-05 10:00:00",
                "end_date": "2027-01-05 11:00:00", "status": "publish"})
            assert status == 201, created
            for _ in range(3):  # new connections: either worker may answer
                status, _, got = reader.request("GET", f"{BASE}/events/{created['id']}")
                assert status == 200 and got["title"] == f"Preloaded {n}", (status, got)
            status, _, _ = admin.request("PATCH", f"{BASE}/events/{created['id']}",
                                         {"title": f"Changed {n}"})
            assert status == 200
            for _ in range(3):
                status, _, got = reader.request("GET", f"{BASE}/events/{created['id']}")
                assert status == 200 and got["title"] == f"Changed {n}", (status, got)
    finally:
        stop(proc)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "WORKER TIMEOUT" not in text, text[-4000:]
    # The master (the process started) loaded the calendar, once; each worker says it
    # got the calendar from it and started its threads right after the fork.
    loaded = re.findall(r"calendar loaded before forking: (\d+) records \(pid (\d+)\)", text)
    assert [int(pid) for _, pid in loaded] == [proc.pid], text[-4000:]
    forked = re.findall(r"worker (\d+) ready: calendar loaded by pid (\d+)", text)
    assert len(forked) == 2 and {int(by) for _, by in forked} == {proc.pid}, text[-4000:]
    workers = {int(pid) for pid, _ in forked}
    served = {int(pid) for pid in re.findall(r"ACCESS <(\d+)> GET ", text)}
    assert served == workers, (served, workers)
    print("PRODUCTION preload: " + json.dumps({"records": int(loaded[0][0]),
                                              "workers_serving": len(served)}))
