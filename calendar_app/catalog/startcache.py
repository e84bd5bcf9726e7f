"""The catalog's start-up cache on disk: what was parsed from each record file, keyed
by the file's stat, so a restart parses only the files changed since. `Catalog.load`
reads it and `Catalog.save_cache` decides what goes in it; `scan_stats` gives the stats
it is keyed by (and `Catalog.resync` compares).
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Mapping
from pathlib import Path

from ..model.resources import RESOURCES
from ..store import atomic

# Bump when Record/Problem or the parsing rules change: old start-up caches are ignored.
CACHE_FORMAT = 4
# The start-up cache is a base file plus a small delta of the paths changed since the
# base was written: rewriting 100k records (~200 MB) per write or catch-up costs
# seconds, the delta milliseconds. The base is rewritten once the delta grows past this.
DELTA_LIMIT = 2000
DELTA_FRACTION = 20  # ... or past 1/20 of the tree


def scan_stats(root: Path) -> dict[str, tuple[int, int]]:
    """relpath -> (mtime_ns, size) of every record file (the rules of
    `ContentTree.scan`: `.yaml` files in the collection folders and their subfolders,
    hidden names and symlinks skipped). Plain strings, no Path objects: at 100k files
    the per-file `resolve()` of `ContentTree.scan` alone took seconds."""
    found: dict[str, tuple[int, int]] = {}

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, f"{prefix}{name}/")
                elif name.endswith(".yaml") and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[prefix + name] = (st.st_mtime_ns, st.st_size)

    for collection in RESOURCES:
        base = os.path.join(root, collection)
        if os.path.isdir(base):
            walk(base, f"{collection}/")
    return found


def write_cache(cache_file: Path, root: Path, token: str,
                entries: Mapping[str, tuple[tuple[int, int], object] | None], full: bool) -> None:
    """Write `entries` (relpath -> (stat, item); None: no longer cached) as a new base
    named `token` (`full`), or as the delta of the base `token`."""
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    delta_file = _delta_file(cache_file)
    if full:
        # A stale delta must never be applied to the new base: remove it first.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(delta_file)
        _dump(cache_file, (CACHE_FORMAT, str(root), token,
                           list(entries), list(entries.values())))
    else:
        _dump(delta_file, (CACHE_FORMAT, token, entries))


def _delta_file(cache_file: Path) -> Path:
    return cache_file.with_name(f"{cache_file.name}.delta")


def _dump(path: Path, value: object) -> None:
    with atomic.replacing(path, binary=True) as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)


def _load(path: Path) -> object:
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError, AttributeError,
            TypeError, ImportError, IndexError):
        return None


def read_cache(cache_file: Path) -> tuple[str | None, dict[str, tuple[tuple[int, int],
                                                                          object]]]:
    """(token of the base, relpath -> (stat, item)) from the base and its delta. Any
    entry is only a hint: it is used when the file's stat still matches."""
    base = _load(cache_file)
    try:
        fmt, _root, token, paths, items = base  # type: ignore[misc]
    except (TypeError, ValueError):
        return None, {}
    if fmt != CACHE_FORMAT or len(paths) != len(items):
        return None, {}
    entries = dict(zip(paths, items, strict=True))
    delta = _load(_delta_file(cache_file))
    try:
        dfmt, dtoken, changes = delta  # type: ignore[misc]
    except (TypeError, ValueError):
        return token, entries
    if dfmt == CACHE_FORMAT and dtoken == token:
        for relpath, entry in changes.items():
            if entry is None:
                entries.pop(relpath, None)
            else:
                entries[relpath] = entry
    return token, entries
