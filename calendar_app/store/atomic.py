"""Replacing a small state file at once: a reader in this or another process sees the
old file or the new one, never half of either.

The temporary file is named per process *and* per thread: two writers of one worker
replacing the same file at the same moment must not write into one temp file (that
was a 500 once, when two pushes failed together). A write that fails leaves no temp
file behind and the old file untouched.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def temp_name(path: Path) -> Path:
    """The temp file beside `path` for this process and thread (hidden, `.tmp`)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")


@contextlib.contextmanager
def replacing(path: Path, *, binary: bool = False, mode: int = 0o666,
              durable: bool = False) -> Iterator[IO]:
    """Yield a file to write; on leaving without error it replaces `path`.

    `mode` is the new file's permission before the umask (0o600 for secrets);
    `durable` syncs the file and its folder, for state that must survive a crash
    (an id lease), at the cost of two disk flushes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def replace_text(path: Path, text: str, *, mode: int = 0o666, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8) at once."""
    with replacing(path, mode=mode, durable=durable) as fh:
        fh.write(text)
