"""The state of each import source between runs, in the cache folder (not the tree:
it changes at every run, and says nothing a reviewer needs): when it last ran, whether
that failed and why (`check` reports it), the validators of conditional requests, and
a fingerprint of each field as last imported (the keep-edits update rule)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path

from ..model.findings import WARNING, Finding
from . import atomic

FOLDER = "sources"
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def state_path(cache_dir: Path, name: str) -> Path:
    """A source's file; a URL or file imported once gets one named by its digest."""
    stem = name if _PLAIN.fullmatch(name) else (
        "import-" + hashlib.blake2b(name.encode("utf-8"), digest_size=10).hexdigest())
    return Path(cache_dir) / FOLDER / f"{stem}.json"


def read(cache_dir: Path, name: str) -> dict:
    with contextlib.suppress(OSError, ValueError):
        state = json.loads(state_path(cache_dir, name).read_text("utf-8"))
        if isinstance(state, dict):
            return state
    return {}


def write(cache_dir: Path, name: str, state: dict) -> None:
    """Replace the file at once: a reader never sees half of it."""
    path = state_path(cache_dir, name)
    atomic.replace_text(path, json.dumps({**state, "name": name}, sort_keys=True))


def failures(cache_dir: Path) -> list[tuple[str, str, str]]:
    """(source, when, why) of every source whose last run failed."""
    found = []
    folder = Path(cache_dir) / FOLDER
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(path.read_text("utf-8"))
            if isinstance(state, dict) and state.get("error"):
                found.append((str(state.get("name", path.stem)),
                              str(state.get("last_run", "")), str(state["error"])))
    return found


def failure_findings(content: Path, cache_dir: Path) -> list[Finding]:
    """What `check` reports: one warning per source whose last run failed."""
    out = []
    for name, when, why in failures(cache_dir):
        path = f"{FOLDER}/{name}.yaml"
        if not (Path(content) / path).is_file():
            path = name  # an import of a URL or file, not a source of the tree
        out.append(Finding(path, 0, 0, WARNING, "source-failed",
                           f"the last run of this source ({when}) failed: {why}"))
    return out
