"""The sync state file: what the last exchanges did (`sync status`, `check`), and whether
the remote is stalled (shared by the worker processes)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from ..store import atomic

STATE_FILE = "sync-state.json"


def read_state(path: Path) -> dict:
    with contextlib.suppress(OSError, ValueError):
        state = json.loads(Path(path).read_text())
        if isinstance(state, dict):
            return state
    return {}


def write_state(path: Path, state: dict) -> None:
    """Replace the state file at once (readers in other processes never see half of it)."""
    atomic.replace_text(path, json.dumps(state, indent=1, sort_keys=True))
