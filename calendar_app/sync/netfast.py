"""Pushes, and the fetch after a refused push, made in-process over git:// (libgit2,
pygit2).

With several instances on one remote, a write's push is often refused and fetched
after: `git fetch` and its `unpack-objects` were two of the dozen git processes a
refusal costs, and libgit2 fetches the same few objects in about two thirds of the
time (bench/RESULTS.md). A write's push the same way: `git push` and its `pack-objects`
were two processes per push, 20-60 ms on a busy machine for a pack of three objects.
Only plain `git://` remotes are fetched here: they need no
credentials, proxies or helpers; anything else (ssh, http, a proxy or a URL rewrite in
the configuration) and any libgit2 error answer None, and git fetches as before. A
remote that does not answer within the time left is RemoteStalled, as with git.

libgit2 sends a push's commands and its pack in two small writes on a socket without
TCP_NODELAY: the pack waits (Nagle) until the remote acknowledges the commands, which
it delays (~40 ms on Linux) as it has nothing to send back. That stall was most of a
loopback push (65 ms p50, 23 ms without it; bench/RESULTS.md, writes8), so once the
connection is made (`push_negotiation`, before anything is sent) the push's socket
gets TCP_NODELAY.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from .settings import RemoteStalled, SyncError

# libgit2's words when it refuses a push itself, before sending: the remote's branch
# holds commits this clone lacks (someone pushed first), as git's "fetch first".
_REFUSED_HERE = ("contains commits that are not present locally",
                 "cannot push non-fastforwardable reference")
# The remote's words for a ref update lost to another push, as sync._REFUSED has them.
_REFUSED_THERE = re.compile(r"non-fast-forward|fetch first|stale|failed to update ref|"
                            r"cannot lock ref|failed to lock|reference already exists")


def fetch(git_dir: Path | None, remote: str, refspec: str, deadline: float) -> bool | None:
    """Fetch `refspec` ("+src:dst") from `remote`: True once done, None when git must
    fetch. Writes FETCH_HEAD as libgit2 does (one fetch at a time: the push lock)."""
    found = _remote(git_dir, remote, deadline)
    if found is None:
        return None
    pygit2, repo, url = found
    try:
        repo.remotes.create_anonymous(url).fetch([refspec], callbacks=_until(pygit2, deadline))
    except _Late:
        raise RemoteStalled(f"git fetch got no answer from the remote in time "
                            f"({url})") from None
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        if _out_of_time(exc, deadline):
            raise RemoteStalled(f"git fetch got no answer from the remote in time "
                                f"({url})") from None
        return None
    return True


def push(git_dir: Path | None, remote: str, head: str, ref: str,
         deadline: float) -> str | None:
    """Push commit `head` to `ref` of `remote`, never forced: "pushed", "refused" (the
    remote's ref moved on: fetch and integrate), None when git must push (not git://,
    or any libgit2 error, so git tries and says what went wrong in its own words).
    A remote that refuses for another reason (a hook) is SyncError with its words."""
    found = _remote(git_dir, remote, deadline)
    if found is None:
        return None
    pygit2, repo, url = found
    callbacks = _until(pygit2, deadline, no_delay=_Connection(url))
    try:
        repo.remotes.create_anonymous(url).push([f"{head}:{ref}"], callbacks=callbacks)
    except _Late:
        raise RemoteStalled(f"git push got no answer from the remote in time "
                            f"({url})") from None
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        if any(words in str(exc) for words in _REFUSED_HERE):
            return "refused"
        if _out_of_time(exc, deadline):
            raise RemoteStalled(f"git push got no answer from the remote in time "
                                f"({url})") from None
        return None
    return verdict(ref, callbacks.refusals.get(ref))  # type: ignore[attr-defined]


def verdict(ref: str, refusal: str | None) -> str:
    """What the remote's report on `ref` means: "pushed" (no refusal), "refused" (it
    moved on meanwhile), else SyncError with the remote's words (a hook said no)."""
    if refusal is None:
        return "pushed"
    if _REFUSED_THERE.search(refusal):
        return "refused"
    words = " ".join(refusal.split())[:200] or "no reason given"
    raise SyncError(f"git push failed: the remote refused {ref}: {words}")


def _out_of_time(exc: Exception, deadline: float) -> bool:
    """libgit2's socket time-outs are set to the time left, truncated to whole ms and
    started a moment later: its "timed out" may come a hair before `deadline`."""
    return time.monotonic() >= deadline or "timed out" in str(exc)


def _remote(git_dir: Path | None, remote: str,
            deadline: float) -> tuple[object, object, str] | None:
    """(pygit2, the repository, the remote's URL) when this remote is exchanged with
    here, with libgit2's time-outs set to what is left; None: git must do it."""
    if git_dir is None:
        return None
    import pygit2

    try:
        repo = pygit2.Repository(str(git_dir))
        url = repo.remotes[remote].url or ""
        config = repo.config
        if not url.startswith("git://") or "core.gitproxy" in config or any(
                entry.name.startswith("url.") for entry in config):
            return None
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None
    left_ms = int((deadline - time.monotonic()) * 1000)
    if left_ms <= 0:
        return None  # git's call says there is no time left
    # Process-wide settings: every exchange made here sets them before it starts.
    pygit2.settings.server_connect_timeout = left_ms
    pygit2.settings.server_timeout = left_ms
    return pygit2, repo, url


class _Late(Exception):
    """The exchange's time ran out during a transfer that still trickles."""


class _Connection:
    """Finds the socket libgit2 opened to a git:// URL (Linux: /proc/self/fd) and sets
    TCP_NODELAY on it: a socket made since this object (a new inode) whose peer is the
    URL's port. Another thread's new connection to the same port may get it too, which
    only sends its writes sooner. Elsewhere, or on any error, nothing changes."""

    def __init__(self, url: str) -> None:
        self.port = urlsplit(url).port or 9418
        self.before = set(_sockets().values())
        self.set = 0  # sockets given TCP_NODELAY (tests read it)

    def no_delay(self) -> None:
        for fd, inode in _sockets().items():
            if inode in self.before:
                continue
            with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as sock:
                if sock.family in (socket.AF_INET, socket.AF_INET6) \
                        and sock.type == socket.SOCK_STREAM \
                        and sock.getpeername()[1] == self.port:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.set += 1


def _sockets() -> dict[int, str]:
    """This process's open sockets: fd -> "socket:[inode]" ({} without /proc)."""
    found = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{name}")
                if target.startswith("socket:"):
                    found[int(name)] = target
    return found


def _until(pygit2: object, deadline: float, no_delay: _Connection | None = None) -> object:
    """Callbacks that stop a transfer once `deadline` (monotonic) has passed, and note
    the refs a push's remote refused (`refusals`: ref -> the remote's words); a push's
    socket gets TCP_NODELAY (`no_delay`) before its commands are sent."""

    class Deadline(pygit2.RemoteCallbacks):  # type: ignore[attr-defined,name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.refusals: dict[str, str] = {}

        def push_negotiation(self, updates: object) -> None:
            if no_delay is not None:
                no_delay.no_delay()

        def transfer_progress(self, stats: object) -> None:
            if time.monotonic() > deadline:
                raise _Late

        def push_transfer_progress(self, objects: int, total: int, sent: int) -> None:
            if time.monotonic() > deadline:
                raise _Late

        def push_update_reference(self, refname: str, message: str | None) -> None:
            if message is not None:
                self.refusals[refname] = message

    return Deadline()
