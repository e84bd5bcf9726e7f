"""When each record file first appeared: the publication `date` of a hand-written record
that gives none (docs/content-format.md: "file's first commit").

One `git log` pass over the collections when a calendar is opened, kept in the cache
folder under the HEAD it was made for; a later start with new commits on top reads only
those. A file git does not know yet (uncommitted, or no repository) falls back to its
modification time.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

from ..model.formats import digits
from ..model.resources import RESOURCES
from . import atomic

_CACHE_NAME = "first-seen.json"


class FirstSeen:
    """relpath (as records have it, relative to the content root) -> first commit time."""

    def __init__(self, root: Path, times: dict[str, int]) -> None:
        self.root = root
        self.times = times

    def local(self, relpath: str, zone: dt.tzinfo) -> dt.datetime | None:
        """Naive wall time in `zone` of the file's first commit, else its mtime."""
        seconds = self.times.get(relpath)
        if seconds is None:
            try:
                seconds = int((self.root / relpath).stat().st_mtime)
            except OSError:
                return None
        return dt.datetime.fromtimestamp(seconds, zone).replace(tzinfo=None, fold=0)


# Opened calendars by content root, so the representation finds the times of its tree
# without every caller handing them through.
_OPENED: dict[Path, FirstSeen] = {}


def of(root: Path) -> FirstSeen:
    """The times loaded for `root`, or modification times only if none were."""
    return _OPENED.get(root) or FirstSeen(root, {})


def load(root: Path, cache_dir: Path) -> FirstSeen:
    """Read the first commit times of `root`'s record files (see the module text)."""
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD").strip()
    times: dict[str, int] = {}
    if head:
        cache = cache_dir / _CACHE_NAME
        cached = _read_cache(cache)
        old = cached.get("head")
        if old == head:
            times = cached["times"]
        elif old and _is_ancestor(root, old, head):
            times = cached["times"]
            _scan(root, f"{old}..{head}", times)
        else:
            _scan(root, head, times)
        if old != head:
            _write_cache(cache, {"head": head, "times": times})
    _OPENED[root] = FirstSeen(root, times)
    return _OPENED[root]


def _scan(root: Path, revisions: str, times: dict[str, int]) -> None:
    """Oldest first: the first commit that adds a path names its time; a renamed file
    keeps the time of the path it came from."""
    out = _git(root, "log", "--reverse", "--format=%ct", "-z", "--name-status", "-M",
               "--diff-filter=AR", "--relative", revisions, "--", *RESOURCES)
    # -z output: a commit's time, then (status, path) or (Rnnn, old path, new path).
    tokens = [t.strip("\n") for t in out.split("\0")]
    when, i = 0, 0
    while i < len(tokens):
        token = tokens[i]
        if digits(token):
            when, i = int(token), i + 1
        elif token == "A" and i + 1 < len(tokens):
            times.setdefault(tokens[i + 1], when)
            i += 2
        elif token.startswith("R") and i + 2 < len(tokens):
            times.setdefault(tokens[i + 2], times.get(tokens[i + 1], when))
            i += 3
        else:
            i += 1


def _is_ancestor(root: Path, old: str, head: str) -> bool:
    proc = subprocess.run(["git", "merge-base", "--is-ancestor", old, head], cwd=root,
                          capture_output=True, check=False)
    return proc.returncode == 0


def _git(root: Path, *args: str) -> str:
    """stdout, or "" when git fails (no repository, no commits yet)."""
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              check=False)
    except OSError:  # git not installed
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("times"), dict) else {}


def _write_cache(path: Path, data: dict) -> None:
    # Several worker processes may start at once: each writes a whole file and renames.
    try:
        atomic.replace_text(path, json.dumps(data))
    except OSError:
        pass  # a cache: the next start scans again
