"""Sync with a shared remote on the same machine: write latency and webhook-to-visible.

    python bench/sync_bench.py [--writes 40] [--root /tmp/bench-sync]

The remote is a bare repository holding the bundled sample calendar, served by
`git daemon` on 127.0.0.1 (git://, pushes enabled), by `git http-backend` behind
Python's CGI server on 127.0.0.1 (smart HTTP, a process per request as under a
plain CGI set-up), and also used as a plain path (git's local transport). The server is the real app behind werkzeug's threaded
server, in this process, talking HTTP over loopback (one client, sequential).

1. Write latency, POST /venues, p50 / p95 / max of `--writes` after 3 warm-up writes:
   no remote (baseline: commit only); push "wait" over git://, http:// and the path;
   push "queue" over git:// (the answer comes after the commit; the bench also
   measures from sending the request until the remote branch holds that commit).
2. Webhook to visible: another clone pushes a title change; time from sending the
   signed webhook until a GET of the event shows the new title (the webhook answers
   after integrating, so this is one webhook round trip plus one GET), and, with
   `--poll 1`, from the other clone's push until a GET shows it (no webhook).

Run by hand on a quiet machine; it prints the load average beside the figures.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import logging
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from werkzeug.serving import make_server

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from calendar_app.http.app import create_app
from calendar_app.store.users import UserStore

BASE = "/wp-json/tribe/events/v1"
SECRET = "bench-secret"
EVENT_FILE = "events/2026/family-film-matinee-december-2026.yaml"
EVENT_ID = 105


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Smart HTTP for the bench: git http-backend as a CGI script, run as this user.
HTTP_SERVER = """
import http.server, os, sys
os.environ["GIT_PROJECT_ROOT"] = sys.argv[2]
os.environ["GIT_HTTP_EXPORT_ALL"] = "1"
http.server.nobody_uid = os.getuid  # as root the CGI would run as nobody
class Handler(http.server.CGIHTTPRequestHandler):
    cgi_directories = ["/git"]
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def http_backend(root: Path, port: int) -> subprocess.Popen:
    cgi = root / "www" / "git"
    cgi.mkdir(parents=True)
    script = cgi / "backend"
    script.write_text("#!/bin/sh\nexec git http-backend\n")
    script.chmod(0o755)
    git(root / "remote.git", "config", "http.receivepack", "true")  # no REMOTE_USER here
    return subprocess.Popen([sys.executable, "-c", HTTP_SERVER, str(port), str(root)],
                            cwd=root / "www", stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def make_remote(root: Path) -> Path:
    seed = root / "seed"
    shutil.copytree(REPO / "content", seed)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit",
                  "-q", "-m", "bench calendar"]):
        git(seed, *args)
    bare = root / "remote.git"
    git(root, "clone", "-q", "--bare", str(seed), str(bare))
    shutil.rmtree(seed)
    return bare


class Server:
    def __init__(self, app) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, object]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, dict(resp.getheaders()), json.loads(data) if data else None
        finally:
            conn.close()

    def close(self) -> None:
        self.server.shutdown()
        self.thread.join()


def summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms  max {ms[-1]:6.1f} ms"


def write_latency(root: Path, label: str, url: str | None, push: str, writes: int,
                  auth: dict, remote: Path) -> None:
    content = root / f"server-{label}"
    config = {"CONTENT_DIR": str(content), "USERS_FILE": str(root / "users.yaml"),
              "CACHE_DIR": str(root / f"cache-{label}"), "WATCH": False}
    if url:
        config.update(SYNC_REMOTE=url, SYNC_PUSH=push)
    else:
        git(root, "clone", "-q", str(remote), str(content))
    app = create_app(config)
    server = Server(app)
    answered, in_remote = [], []
    headers = {**auth, "Content-Type": "application/json"}
    try:
        for n in range(writes + 3):
            body = json.dumps({"venue": f"{label} venue {n}"}).encode()
            t0 = time.perf_counter()
            status, hdrs, _ = server.request("POST", f"{BASE}/venues", body, headers)
            t1 = time.perf_counter()
            assert status == 201, status
            expected = {"wait": "pushed", "queue": "queued"}.get(push) if url else None
            assert hdrs.get("X-Calendar-Sync") == expected, hdrs
            if url and push == "queue":  # until the remote holds this very commit
                head = git(content, "rev-parse", "HEAD").strip()
                while git(remote, "rev-parse", "main").strip() != head:
                    time.sleep(0.002)
            t2 = time.perf_counter()
            if n >= 3:
                answered.append(t1 - t0)
                in_remote.append(t2 - t0)
    finally:
        server.close()
        app.extensions["calendar"].close()
    print(f"{label:28s} answered: {summary(answered)}", flush=True)
    if url and push == "queue":
        print(f"{'':28s} in remote: {summary(in_remote)}", flush=True)


def webhook_to_visible(root: Path, url: str, rounds: int, poll: float) -> None:
    name = f"poll-{poll}" if poll else "webhook"
    content = root / f"server-{name}"
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(root / "users.yaml"),
                      "CACHE_DIR": str(root / f"cache-{name}"), "WATCH": False,
                      "SYNC_REMOTE": url, "SYNC_WEBHOOK_SECRET": SECRET, "SYNC_POLL": poll})
    server = Server(app)
    editor = root / f"editor-{name}"
    git(root, "clone", "-q", url, str(editor))
    webhook, polled = [], []
    try:
        server.request("GET", f"{BASE}/")
        app.extensions["calendar"].remote_sync.caught_up.wait(60)
        for n in range(rounds):
            title = f"Bench title {n}"
            path = editor / EVENT_FILE
            lines = [f"title: {title}" if ln.startswith("title:") else ln
                     for ln in path.read_text().splitlines()]
            path.write_text("\n".join(lines) + "\n")
            git(editor, "-c", "user.name=e", "-c", "user.email=e@localhost", "commit",
                "-qam", title)
            git(editor, "push", "-q", "origin", "main")
            pushed = time.perf_counter()
            if poll:
                while server.request("GET", f"{BASE}/events/{EVENT_ID}")[2]["title"] != title:
                    time.sleep(0.005)
                polled.append(time.perf_counter() - pushed)
                continue
            body = json.dumps({"ref": "refs/heads/main"}).encode()
            sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            t0 = time.perf_counter()
            status, _, _ = server.request("POST", "/wp-json/calendar/v1/sync", body,
                                          {"X-Hub-Signature-256": f"sha256={sig}"})
            assert status == 200, status
            seen = server.request("GET", f"{BASE}/events/{EVENT_ID}")[2]["title"]
            webhook.append(time.perf_counter() - t0)
            assert seen == title, seen
    finally:
        server.close()
        app.extensions["calendar"].close()
    if poll:
        print(f"{'push to visible, poll ' + str(poll) + ' s':28s} {summary(polled)}")
    else:
        print(f"{'webhook to visible':28s} {summary(webhook)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    root = args.root or Path(tempfile.mkdtemp(prefix="bench-sync-"))
    root.mkdir(parents=True, exist_ok=True)
    remote = make_remote(root)
    password = UserStore(root / "users.yaml").add("bench", "administrator")
    auth = {"Authorization": "Basic " + base64.b64encode(f"bench:{password}".encode()).decode()}
    port = free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={root}", "--listen=127.0.0.1", f"--port={port}", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    git_url = f"git://127.0.0.1:{port}/remote.git"
    http_port = free_port()
    web = http_backend(root, http_port)
    http_url = f"http://127.0.0.1:{http_port}/git/backend/remote.git"
    for url in (git_url, http_url):
        while subprocess.run(["git", "ls-remote", url], capture_output=True,
                             check=False).returncode:
            time.sleep(0.05)
    try:
        print(f"load before: {loadavg()}  ({args.writes} writes each, sample calendar)")
        write_latency(root, "no remote (commit only)", None, "", args.writes, auth, remote)
        write_latency(root, "wait, git:// loopback", git_url, "wait", args.writes, auth,
                      remote)
        write_latency(root, "wait, http:// loopback", http_url, "wait", args.writes, auth,
                      remote)
        write_latency(root, "wait, local path", str(remote), "wait", args.writes, auth,
                      remote)
        write_latency(root, "queue, git:// loopback", git_url, "queue", args.writes, auth,
                      remote)
        webhook_to_visible(root, git_url, args.rounds, 0)
        webhook_to_visible(root, git_url, min(args.rounds, 10), 1.0)
        print(f"load after: {loadavg()}")
    finally:
        for server in (daemon, web):
            server.terminate()
            server.wait()
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
