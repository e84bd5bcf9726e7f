"""Writing outputs: only when the bytes differ, never half a file over a served one,
and removing stale ones.

Paths are plain strings here: pathlib's joins cost a fifth of writing a 47,000-file
site.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_made: set[str] = set()  # folders known to exist: one mkdir per folder per process
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def _target(out: Path, relpath: str) -> str:
    """The output's path, its folder made."""
    target = f"{os.fspath(out)}/{relpath}"
    folder = target[:target.rfind("/")]
    if folder not in _made:
        try:
            os.mkdir(folder)  # its parent usually exists: no stat per level first
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
        _made.add(folder)
    return target


def _create(target: str, flags: int) -> int:
    """A descriptor to write `target`, its folder made again if it vanished since
    `_target` saw it (the output folder removed under a running --watch)."""
    try:
        return os.open(target, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(target[:target.rfind("/")], exist_ok=True)
        return os.open(target, flags, 0o666)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write(out: Path, relpath: str, data: bytes) -> None:
    target = _target(out, relpath)
    try:
        # A new file is written in place: no page was served there before (a full
        # build into an empty folder skips 47,000 renames).
        fd = _create(target, _NEW)
    except FileExistsError:
        # Over an existing file: temp file + rename, a server never sees half a page.
        tmp = _temp_name(target)
        fd = _create(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return
    try:
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        os.unlink(target)  # no truncated page left behind (disk full)
        raise
    os.close(fd)


def link(out: Path, source: str, relpath: str) -> bool:
    """`relpath` as a hard link to the output `source` (same bytes, one copy on disk);
    False where the file system has no hard links."""
    target = _target(out, relpath)
    source = f"{os.fspath(out)}/{source}"
    try:
        os.link(source, target)
        return True
    except FileExistsError:
        pass
    except OSError:  # no hard links here, or the folder vanished: the caller writes
        return False
    tmp = _temp_name(target)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.link(source, tmp)
    except OSError:
        return False
    os.replace(tmp, target)
    return True


def _temp_name(target: str) -> str:
    cut = target.rfind("/") + 1
    return f"{target[:cut]}.{target[cut:]}.tmp"


def remove(out: Path, relpath: str) -> None:
    target = out / relpath
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    # Drop folders left empty (an event page's folder), never the output root.
    folder = target.parent
    _made.discard(str(folder))
    while folder != out and out in folder.parents:
        try:
            folder.rmdir()
            _made.discard(str(folder))
        except OSError:
            break
        folder = folder.parent
