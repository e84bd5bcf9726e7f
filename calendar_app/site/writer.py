"""Writing outputs: only when the bytes differ, atomically, and removing stale ones."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_made: set[Path] = set()  # folders known to exist: one mkdir per folder per process


def write(out: Path, relpath: str, data: bytes) -> None:
    target = out / relpath
    if target.parent not in _made:
        target.parent.mkdir(parents=True, exist_ok=True)
        _made.add(target.parent)
    # Temp file + rename: a server never sees half a page.
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, target)


def remove(out: Path, relpath: str) -> None:
    target = out / relpath
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    # Drop folders left empty (an event page's folder), never the output root.
    folder = target.parent
    _made.discard(folder)
    while folder != out and out in folder.parents:
        try:
            folder.rmdir()
            _made.discard(folder)
        except OSError:
            break
        folder = folder.parent
