"""Writing outputs: only when the bytes differ, atomically, and removing stale ones."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_made: set[Path] = set()  # folders known to exist: one mkdir per folder per process


def _target(out: Path, relpath: str) -> tuple[Path, str]:
    """The output's path (its folder made) and the temporary name it is written under:
    temp file + rename, a server never sees half a page."""
    target = out / relpath
    if target.parent not in _made:
        target.parent.mkdir(parents=True, exist_ok=True)
        _made.add(target.parent)
    return target, f"{target.parent}/.{target.name}.tmp"


def write(out: Path, relpath: str, data: bytes) -> None:
    target, tmp = _target(out, relpath)
    # Plain descriptors: a file object per output cost a tenth of a 40,000-file
    # build's writing.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, target)


def link(out: Path, source: str, relpath: str) -> bool:
    """`relpath` as a hard link to the output `source` (same bytes, one copy on disk);
    False where the file system has no hard links."""
    target, tmp = _target(out, relpath)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.link(out / source, tmp)
    except OSError:
        return False
    os.replace(tmp, target)
    return True


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
