"""Run one long piece of work in a forked child process, at lower priority.

Why a fork: the Whoosh rebuild at 100,000 events takes minutes of CPU. Run in a
thread of a serving worker it held the GIL against the requests (search p95 126 ms,
max 1.3 s on an idle machine); a child has its own interpreter, and `os.nice` lets the
scheduler favour the workers. A fork, not a spawn: the child reads the records the
worker already holds (shared copy-on-write) instead of parsing the tree again.

The child touches only what the caller hands it: it runs in a copy of a threaded
process, where a lock another thread held at the fork stays held for ever, so the
work must take no lock of the parent (the catalog's, logging's) and the child leaves
with `os._exit`, never through the parent's exit handlers. The parent reaps it
(`waitpid`) in every case, so no zombie stays behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import pickle
import signal
from collections.abc import Callable

# Added to the child's niceness: the serving workers come first.
NICENESS = 10
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class ChildFailed(RuntimeError):
    """The child raised, was killed, or exited without an answer."""


def run_in_child(work: Callable[[Callable[[], bool]], object],
                 started: Callable[[int], None] | None = None) -> object:
    """`work(parent_alive)` in a forked child; its (picklable) result here. Blocks the
    calling thread only (`waitpid` and `read` release the GIL). `parent_alive()` lets
    long work stop when the process that wanted it is gone. `started(pid)` is told the
    child's pid (tests kill it)."""
    parent = os.getpid()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        _child(work, write_end, parent)
    os.close(write_end)
    try:
        if started is not None:
            started(pid)
        with os.fdopen(read_end, "rb") as fh:
            answer = fh.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or not answer:
        raise ChildFailed(f"child {pid} ended without an answer (wait status {status})")
    ok, value = pickle.loads(answer)
    if not ok or os.WEXITSTATUS(status) != 0:
        raise ChildFailed(f"child {pid} failed: {value}")
    return value


def _child(work: Callable[[Callable[[], bool]], object], fd: int, parent: int) -> None:
    code = 1
    try:
        # Collections would walk (and so copy) every object shared with the parent.
        gc.disable()
        # Killed with the thread that forked it (a worker killed by gunicorn), so no
        # orphan goes on building for minutes; the swap is all or nothing anyway.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # gone before the line above
            return
        os.nice(NICENESS)
        try:
            answer = (True, work(lambda: os.getppid() == parent))
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, whatever it is
            answer = (False, f"{type(exc).__name__}: {exc}")
        data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        while data:
            data = data[os.write(fd, data):]
    finally:
        os._exit(code)
