"""What the calendar keeps about a public submission that must not be published: the
submitter's e-mail address, when it came, and the moderation decision with its reason.

Kept in a YAML file beside the users file (outside the content tree), readable by the
server only (mode 0600). Not a field of the event on purpose: the content tree is a git
repository that is often public or pushed to a shared remote, and its history keeps
whatever was ever committed, so an address written there could never be taken back.
Here it never reaches git, the interface, the site or a feed, and deleting an entry
forgets it for good.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..store import atomic

FILE_NAME = "submissions.yaml"


@dataclass(frozen=True)
class Submission:
    event_id: int
    email: str
    received: str  # ISO 8601 UTC
    decision: str = ""  # "", "approved" or "rejected"
    reason: str = ""  # why it was rejected
    editor: str = ""  # who decided


class Submissions:
    """One entry per submitted event, by event id. Writes take an exclusive lock on a
    lock file (several worker processes share the file) and replace it atomically."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def _read(self) -> dict[int, dict]:
        try:
            data = yaml.safe_load(self.path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            return {}
        entries = data.get("submissions") or {}
        return {int(k): dict(v) for k, v in entries.items() if isinstance(v, dict)}

    def _write(self, entries: dict[int, dict]) -> None:
        with atomic.replacing(self.path, mode=0o600, durable=True) as fh:
            yaml.safe_dump({"submissions": entries}, fh, sort_keys=True, allow_unicode=True)

    def add(self, event_id: int, email: str, now: dt.datetime) -> Submission:
        received = now.astimezone(dt.UTC).replace(microsecond=0).isoformat()
        with self._locked():
            entries = self._read()
            entries[event_id] = {"email": email, "received": received}
            self._write(entries)
        return Submission(event_id, email, received)

    def get(self, event_id: int) -> Submission | None:
        with self._locked():
            entry = self._read().get(event_id)
        return _submission(event_id, entry) if entry is not None else None

    def decide(self, event_id: int, decision: str, editor: str, reason: str = "") -> None:
        """Keep the decision (and a rejection's reason) beside the address."""
        with self._locked():
            entries = self._read()
            entry = entries.setdefault(event_id, {"email": "", "received": ""})
            entry.update({"decision": decision, "editor": editor, "reason": reason})
            self._write(entries)


def _submission(event_id: int, entry: dict) -> Submission:
    return Submission(event_id, str(entry.get("email") or ""), str(entry.get("received") or ""),
                      str(entry.get("decision") or ""), str(entry.get("reason") or ""),
                      str(entry.get("editor") or ""))
