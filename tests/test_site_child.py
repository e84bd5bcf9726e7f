"""The website's builder under gunicorn (site/child.py, http/gunicorn_conf.py): a process
of the master's own, not a worker, holding site.lock; writes and edits by hand reach the
pages; if it is killed a worker takes over; it ends with the master."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest
from conftest import BASE, make_repo
from gitserver import free_port, start_gunicorn, stop_process
from test_reliability_concurrency import Http, basic, wait_for_port

from calendar_app.site.live import LOCK_FILE

APRIL = "/event/jazz-night-april-2027/"
FRESH_WITHIN = 2.0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(p) for p in (task / "children").read_text().split()]
    return out


def _is_builder(pid: int) -> bool:
    try:
        return b"calendar_app.site.child" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _lock_holder(cache: Path) -> int | None:
    """The pid holding the flock on site.lock, from /proc/locks (by inode)."""
    inode = os.stat(cache / LOCK_FILE).st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "FLOCK" in fields and fields[-3].endswith(f":{inode}"):
            return int(fields[-4])
    return None


def _start(tmp: Path, users_master) -> tuple:
    content = make_repo(tmp)
    shutil.copy(users_master[0], tmp / "users.yaml")
    port = free_port()
    log = tmp / "gunicorn.log"
    proc = start_gunicorn(content, tmp / "users.yaml", tmp / "cache", port, log=log,
                          env={"CALENDAR_SITE": "1",
                               "CALENDAR_SITE_URL": f"http://127.0.0.1:{port}/"})
    wait_for_port(port, proc, log=log, timeout=60)
    reader = Http(port)
    deadline = time.monotonic() + 60
    while reader.request("GET", "/")[0] != 200:  # "building" (503) until built
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
        time.sleep(0.05)
    return content, port, log, proc, reader


def _wait_for(reader: Http, path: str, needle: str, timeout: float) -> float:
    started = time.monotonic()
    while needle.encode() not in reader.request("GET", path)[2]:
        assert time.monotonic() - started < timeout, f"{needle!r} never on {path}"
        time.sleep(0.02)
    return time.monotonic() - started


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, users_master):
    tmp = tmp_path_factory.mktemp("sitechild")
    content, port, log, proc, reader = _start(tmp, users_master)
    admin = Http(port, basic("administrator", users_master[1]["administrator"]))
    yield proc, tmp / "cache", content, reader, admin
    stop_process(proc)
    assert "Traceback" not in log.read_text(errors="replace")


def test_the_builder_is_neither_the_master_nor_a_worker(server) -> None:
    proc, cache, *_ = server
    children = _children(proc.pid)
    builders = [pid for pid in children if _is_builder(pid)]
    assert len(builders) == 1 and len(children) == 3  # the builder and two workers
    assert _lock_holder(cache) == builders[0] != proc.pid


def test_a_write_is_on_its_page_within_two_seconds(server) -> None:
    _proc, _cache, _content, reader, admin = server
    took = []
    for n in range(4):  # the two workers take turns at the writes
        title = f"Child built title {n}"
        assert admin.request("POST", f"{BASE}/events/109", {"title": title})[0] == 200
        took.append(_wait_for(reader, APRIL, title, 10))
    assert max(took) < FRESH_WITHIN, took


def test_an_edit_by_hand_is_on_its_page_within_two_seconds(server) -> None:
    _proc, _cache, content, reader, _admin = server
    path = content / "events/2027/jazz-night-march-2027.yaml"
    path.write_text(re.sub(r"^title: .*$", "title: Edited By Hand", path.read_text(),
                           count=1, flags=re.MULTILINE))
    assert _wait_for(reader, "/event/jazz-night-march-2027/", "Edited By Hand", 10) \
        < FRESH_WITHIN


def test_a_worker_takes_over_when_the_builder_is_killed(server) -> None:
    proc, cache, _content, reader, admin = server
    builder = next(pid for pid in _children(proc.pid) if _is_builder(pid))
    os.kill(builder, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _lock_holder(cache) in (None, builder):
        assert time.monotonic() < deadline, "no worker took the site lock"
        time.sleep(0.05)
    assert _lock_holder(cache) in _children(proc.pid)  # a worker now
    assert not Path(f"/proc/{builder}").exists()  # reaped by the master, no zombie
    title = "Written after the builder died"
    assert admin.request("POST", f"{BASE}/events/109", {"title": title})[0] == 200
    _wait_for(reader, APRIL, title, 30)  # the new holder builds the whole site first


@pytest.mark.slow  # a gunicorn master killed and its processes watched
def test_no_builder_is_left_when_the_master_stops(tmp_path: Path, users_master) -> None:
    _content, _port, log, proc, _reader = _start(tmp_path, users_master)
    try:
        builder = next(pid for pid in _children(proc.pid) if _is_builder(pid))
        os.kill(proc.pid, signal.SIGTERM)  # the master alone, as a service manager does
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _is_builder(builder):
            assert time.monotonic() < deadline, "the builder outlived the master"
            time.sleep(0.05)
    finally:
        stop_process(proc)
    assert "Traceback" not in log.read_text(errors="replace")
