"""Shortcuts for writes of thousands of files at once (imports), used by content.py.

Both only make a large write faster: the file system synced once rather than each file,
and the new texts stored in git as one pack rather than one loose file each.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path


def syncfs(folder: Path) -> bool:
    """Flush the whole file system holding `folder` (Linux's syncfs); False where the C
    library has no such call or it fails."""
    import ctypes  # only large writes get here

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(folder, os.O_RDONLY)
    try:
        return call(fd) == 0
    finally:
        os.close(fd)


def store_blobs(git_root: Path, contents: Sequence[str], env: dict[str, str]) -> str | None:
    """Store these texts in git as one pack (fast-import), so that staging the files
    finds each object there: made one loose file each, 10,000 objects took half a
    minute on a busy machine. A file whose staged form differs (a filter in
    .gitattributes) is simply stored by staging as usual. Returns git's complaint when
    it fails, else None."""
    stream = bytearray()
    for text in contents:
        data = text.encode("utf-8")
        stream += b"blob\ndata %d\n" % len(data) + data + b"\n"
    if not stream:
        return None
    proc = subprocess.run(["git", "fast-import", "--quiet"], cwd=git_root, env=env,
                          input=bytes(stream), capture_output=True, check=False)
    if proc.returncode != 0:
        return proc.stderr.decode("utf-8", "replace").strip() or "git fast-import failed"
    return None
