"""How soon a write through the interface is on its page of the served website.

    python bench/site_freshness_bench.py [--writes 20]

For each server, the development one (`python -m calendar_app serve`) and gunicorn
with 2 workers (the shipped configuration): copy the sample calendar into a new git
repository, start the server, wait for its first build (`/` answers 200 instead of
the "building" page), then `--writes` times: change the title of one event
(POST /events/109, HTTP Basic) and fetch its page every 10 ms until the new title is
there. Prints the time to the first start of `/`, and p50 / max of the write-to-page
times, with the load average (the machine is shared: read the load beside them).
Run by hand, never by CI.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BASE = "/wp-json/tribe/events/v1"
PAGE = "/event/jazz-night-april-2027/"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def post(port: int, path: str, body: dict, auth: str) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": auth})
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.status


def prepare(root: Path) -> tuple[Path, Path, str]:
    content = root / "content"
    shutil.copytree(REPO / "content", content)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                  "commit", "-q", "-m", "bench calendar"]):
        subprocess.run(["git", *args], cwd=content, check=True)
    users = root / "users.yaml"
    out = subprocess.run([PY, "-m", "calendar_app", "users", "add", "bench", "--role",
                          "administrator",
                          "--users", str(users)], cwd=REPO, check=True, capture_output=True,
                         text=True).stdout
    password = out.rsplit("Application password:", 1)[1].strip()
    auth = "Basic " + base64.b64encode(f"bench:{password}".encode()).decode()
    return content, users, auth


def start(kind: str, root: Path, content: Path, users: Path, port: int) -> subprocess.Popen:
    env = dict(os.environ, CALENDAR_CONTENT=str(content), CALENDAR_USERS=str(users),
               CALENDAR_CACHE=str(root / "cache"), PYTHONPATH=str(REPO),
               CALENDAR_SITE_URL=f"http://127.0.0.1:{port}/")
    if kind == "dev":
        command = [PY, "-m", "calendar_app", "serve", "--content", str(content), "--users",
                   str(users), "--port", str(port)]
    else:
        command = [str(Path(PY).parent / "gunicorn"), "-c",
                   "python:calendar_app.http.gunicorn_conf", "-w", "2", "-b",
                   f"127.0.0.1:{port}", "calendar_app.http.wsgi:app"]
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def measure(kind: str, writes: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"freshness-{kind}-") as tmp:
        root = Path(tmp)
        content, users, auth = prepare(root)
        port = free_port()
        proc = start(kind, root, content, users, port)
        try:
            began = time.monotonic()
            while get(port, "/")[0] != 200:
                if proc.poll() is not None or time.monotonic() - began > 300:
                    raise RuntimeError(f"{kind}: the site never came up")
                time.sleep(0.05)
            first = time.monotonic() - began
            took = []
            for n in range(writes):
                title = f"Freshness {kind} {n}"
                assert post(port, f"{BASE}/events/109", {"title": title}, auth) == 200
                sent = time.monotonic()
                while title.encode() not in get(port, PAGE)[1]:
                    if time.monotonic() - sent > 30:
                        raise RuntimeError(f"{kind}: {title!r} never reached its page")
                    time.sleep(0.01)
                took.append(time.monotonic() - sent)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    return {"server": kind, "first_site_s": round(first, 2), "writes": writes,
            "p50_s": round(statistics.median(took), 3), "max_s": round(max(took), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    print(f"load before: {loadavg()}")
    for kind in ("dev", "gunicorn"):
        print(json.dumps(measure(kind, args.writes)), flush=True)
    print(f"load after: {loadavg()}")


if __name__ == "__main__":
    main()
