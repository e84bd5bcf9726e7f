"""The fetch after a refused push, made in-process over git:// (libgit2, pygit2).

With several instances on one remote, a write's push is often refused and fetched
after: `git fetch` and its `unpack-objects` were two of the dozen git processes a
refusal costs, and libgit2 fetches the same few objects in about two thirds of the
time (bench/RESULTS.md). Only plain `git://` remotes are fetched here: they need no
credentials, proxies or helpers; anything else (ssh, http, a proxy or a URL rewrite in
the configuration) and any libgit2 error answer None, and git fetches as before. A
remote that does not answer within the time left is RemoteStalled, as with git.
"""

from __future__ import annotations

import time
from pathlib import Path

from .settings import RemoteStalled


def fetch(git_dir: Path | None, remote: str, refspec: str, deadline: float) -> bool | None:
    """Fetch `refspec` ("+src:dst") from `remote`: True once done, None when git must
    fetch. Writes FETCH_HEAD as libgit2 does (one fetch at a time: the push lock)."""
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
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            return None  # git's call says there is no time left
        # Process-wide settings: every fetch made here sets them before it starts.
        pygit2.settings.server_connect_timeout = left_ms
        pygit2.settings.server_timeout = left_ms
        repo.remotes.create_anonymous(url).fetch([refspec], callbacks=_until(pygit2, deadline))
    except _Late:
        raise RemoteStalled(f"git fetch got no answer from the remote in time "
                            f"({url})") from None
    except (pygit2.GitError, KeyError, ValueError, OSError):
        if time.monotonic() >= deadline:
            raise RemoteStalled(f"git fetch got no answer from the remote in time "
                                f"({url})") from None
        return None
    return True


class _Late(Exception):
    """The exchange's time ran out during a transfer that still trickles."""


def _until(pygit2: object, deadline: float) -> object:
    """Callbacks that stop a transfer once `deadline` (monotonic) has passed."""

    class Deadline(pygit2.RemoteCallbacks):  # type: ignore[attr-defined,name-defined,misc]
        def transfer_progress(self, stats: object) -> None:
            if time.monotonic() > deadline:
                raise _Late

    return Deadline()
