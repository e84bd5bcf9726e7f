"""A real git server on the loopback for tests and benchmarks: `git daemon` serving bare
repositories over git:// (pushes enabled), and calendar servers as subprocesses, each
over its own clone of a shared repository."""

from __future__ import annotations

import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Self

REPO_ROOT = Path(__file__).resolve().parent.parent


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """Serve `server` (werkzeug's `make_server`) from a daemon thread, ready to stop
    at once. shutdown() waits for the loop's next look: every 10 ms here, not 0.5 s
    (most of a short test's wall time). And a connection select() announced may be
    gone when accept() takes it; on a blocking socket accept() then waits for the
    next one, forever in a test, and shutdown() with it: a second at most here."""
    server.socket.settimeout(1.0)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    return thread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a process started in its own session (`start_new_session`), children too."""
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


class GitDaemon:
    """`git daemon` exporting every bare repository under `base` at git://127.0.0.1:PORT/,
    with `receive-pack` on so clients can push, as a hosted remote would."""

    def __init__(self, base: Path, log: Path | None = None) -> None:
        self.base = Path(base)
        self.port = 0
        self.log = log
        self.proc: subprocess.Popen | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self, timeout: float = 20) -> Self:
        """Start serving; again on the same port after `stop` (clients keep their URL)."""
        self.port = self.port or free_port()
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", f"--base-path={self.base}", "--export-all",
             "--enable=receive-pack", "--informative-errors", "--listen=127.0.0.1",
             f"--port={self.port}", str(self.base)],
            stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"git daemon exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("git daemon did not start")

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def bare_copy(repo: Path, base: Path, name: str = "calendar.git") -> Path:
    """A bare clone of `repo` under the daemon's base path (the shared repository)."""
    bare = base / name
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True,
                   capture_output=True)
    return bare


def start_gunicorn(content: Path, users_file: Path, cache: Path, port: int, workers: int = 2,
                   log: Path | None = None, extra: tuple[str, ...] = (),
                   env: dict[str, str] | None = None) -> subprocess.Popen:
    """A calendar server under gunicorn with the production configuration (README) over
    `content`, in its own session (stop it with `stop_process`); `env` adds settings.
    The website at `/` is left out (CALENDAR_SITE=0) unless `env` asks for it: building
    it costs these tests CPU and none of them looks at it."""
    full = dict(os.environ, CALENDAR_CONTENT=str(content), CALENDAR_USERS=str(users_file),
                CALENDAR_CACHE=str(cache), PYTHONPATH=str(REPO_ROOT), CALENDAR_SITE="0")
    full.update(env or {})
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115  (the child keeps it)
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c", "python:calendar_app.http.gunicorn_conf",
         "-w", str(workers), "-b", f"127.0.0.1:{port}", "--timeout", "120",
         "--graceful-timeout", "5", *extra, "calendar_app.http.wsgi:app"],
        cwd=REPO_ROOT, env=full, stdout=out, stderr=out, start_new_session=True)


def start_calendar_server(content: Path, users_file: Path, cache: Path, port: int,
                          remote: str, log: Path, *, branch: str = "main",
                          poll: float = 0, push: str = "wait", workers: int = 1,
                          threads: int = 1,
                          extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """A production calendar server over `content`, a clone of `remote` (cloned on
    first start when the folder is empty); `threads` > 1: gunicorn's threaded workers."""
    env = dict(CALENDAR_REMOTE=remote, CALENDAR_BRANCH=branch, CALENDAR_POLL=str(poll),
               CALENDAR_PUSH=push, **(extra_env or {}))
    extra = ("--threads", str(threads)) if threads > 1 else ()
    return start_gunicorn(content, users_file, cache, port, workers, log, extra, env=env)
