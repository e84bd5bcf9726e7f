"""What a write must not do to the tree, checked before its commit, and what to tell
the client when the tree refused it."""

from __future__ import annotations

from typing import Protocol

from ..model.errors import ApiError
from ..model.records import Record
from . import yamlfile
from .content import GitError


class Staged(Protocol):
    """What a write has staged (linking.Write): each file's new text, the records put."""

    texts: dict[str, str | None]
    put: list[Record]


def check_sizes(write: Staged) -> None:
    """Refuse (413) a file the loader would refuse as too large: it would be committed,
    then left out at the next read. YAML can outgrow the request that made it (each
    line of a block is indented), so this is checked on the text, every write here."""
    limit = yamlfile.MAX_FILE_BYTES
    for path, text in write.texts.items():
        if text is None or len(text) <= limit // 4 or len(text.encode("utf-8")) <= limit:
            continue  # a character is at most 4 bytes: most files need no encoding
        record = next((r for r in reversed(write.put) if r.path == path), None)
        name = _largest_field(record) if record is not None else ""
        what = record.resource.singular if record is not None else "record"
        raise ApiError(413, "rest_record_too_large",
                       f"The {what} would be saved as a file larger than {limit} bytes"
                       + (f"; {name} is too long." if name else "."),
                       params={name: f"{name} is too long."} if name else {})


def _largest_field(record: Record) -> str:
    """The field of a record that takes the most room in its file."""
    def size(value: object) -> int:
        return sum(map(size, value)) if isinstance(value, list) else len(str(value))
    return max(record.data, key=lambda name: size(record.data[name]), default="")


def storage_advice(exc: Exception) -> str:
    if isinstance(exc, GitError):
        return exc.advice
    if isinstance(exc, OSError):
        return f"the server could not write the files ({exc.strerror or exc})"
    return "see the server's log"
