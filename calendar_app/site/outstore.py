"""Rendered outputs kept between builds, by signature, in the cache folder.

An output's signature (plan.py) covers its path, its records, its shape and what every
output shares (templates, base URL, settings): the same signature means the same
bytes, which is what lets an incremental build skip an output. Each output written is
hard-linked here under its signature, so that a later full build into an empty folder
links it from here instead of rendering it (a warm build). Nothing is copied: the
store costs disk space only for outputs whose folder was removed since.

The builder never changes an output file in place (a changed output is a new file
renamed over the old one, writer.py), so a file here keeps the bytes it was stored
with as long as nothing else edits the output folder in place, the same trust an
incremental build already puts in the files it skips.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from . import writer
from .stash import Stash


class OutputStore:
    """Signature -> digest of the stored bytes (the index), and the files themselves."""

    def __init__(self, folder: Path) -> None:
        self.folder = os.fspath(folder)
        self.index = Stash(folder.with_name(folder.name + ".pickle"))
        # False once a hard link is refused (another file system, none supported):
        # each process then stops trying for the rest of the build.
        self.usable = True
        self._made = False

    def digest(self, sig: str) -> str | None:
        """The stored output's digest when there is one for this signature."""
        return self.index.data.get(sig) if self.usable else None

    def empty(self) -> bool:
        """Nothing stored: no output of this build can be linked from here."""
        return not (self.usable and self.index.data)

    def link_out(self, sig: str, out: Path, relpath: str) -> bool:
        """Put the stored output at `relpath` in `out`; False when it is missing."""
        return writer.link_from(f"{self.folder}/{sig}", out, relpath)

    def keep(self, out: Path, relpath: str, sig: str) -> bool:
        """Store the output just written at `relpath` under its signature."""
        if not self.usable:
            return False
        source, target = f"{os.fspath(out)}/{relpath}", f"{self.folder}/{sig}"
        if not self._made:
            os.makedirs(self.folder, exist_ok=True)
            self._made = True
        try:
            os.link(source, target)
        except FileExistsError:
            # Left by a build that stopped before saving the index: the new file wins.
            tmp = f"{target}.tmp{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            os.link(source, tmp)
            os.replace(tmp, target)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                self.usable = False
                return False
            raise
        return True

    def add(self, stored: dict[str, str]) -> None:
        """Index what the processes stored (signature -> digest)."""
        self.index.update(stored)

    def keep_only(self, sigs: set[str]) -> None:
        """Remove the stored outputs that the last full plan no longer makes."""
        stale = self.index.data.keys() - sigs
        for sig in stale:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.folder}/{sig}")
        self.index.keep_only(sigs)

    def save(self) -> None:
        self.index.save()
