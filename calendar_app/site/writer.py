"""Writing outputs: only when the bytes differ, never half a file over a served one,
and removing stale ones; never outside the output folder (`paths.contained`).

Paths are plain strings here: pathlib's joins cost a fifth of writing a 47,000-file
site.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .paths import contained

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL
T = TypeVar("T")


def _in_folder(target: str, make: Callable[[], T]) -> T:
    """`make()`, once more after making the target's folder if it is missing (the
    first output there, or the output folder removed under a running --watch)."""
    try:
        return make()
    except FileNotFoundError:
        folder = target[:target.rfind("/")]
        try:
            os.mkdir(folder)  # its parent usually exists: no stat per level first
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
        except FileExistsError:
            pass
        return make()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write(out: Path, relpath: str, data: bytes) -> None:
    target = f"{os.fspath(out)}/{contained(relpath)}"
    try:
        # A new file is written in place: no page was served there before (a full
        # build into an empty folder skips 47,000 renames).
        fd = _in_folder(target, lambda: os.open(target, _NEW, 0o666))
    except FileExistsError:
        # Over an existing file: temp file + rename, a server never sees half a page.
        tmp = _temp_name(target)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
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
    False where the file system has no hard links (or `source` is gone)."""
    return link_from(f"{os.fspath(out)}/{contained(source)}", out, relpath)


def link_from(source: str, out: Path, relpath: str) -> bool:
    """`relpath` as a hard link to the file `source` (a path, outside `out` too);
    False where it cannot be linked (gone, another file system)."""
    target = f"{os.fspath(out)}/{contained(relpath)}"
    try:
        _in_folder(target, lambda: os.link(source, target))
        return True
    except FileExistsError:
        pass
    except OSError:
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
    target = out / contained(relpath)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    # Drop folders left empty (an event page's folder), never the output root.
    folder = target.parent
    while folder != out and out in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            break
        folder = folder.parent
