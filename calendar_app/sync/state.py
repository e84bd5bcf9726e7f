"""The sync state file: what the last exchanges did (`sync status`, `check`), and whether
the remote is stalled (shared by the worker processes)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

STATE_FILE = "sync-state.json"


def read_state(path: Path) -> dict:
    with contextlib.suppress(OSError, ValueError):
        state = json.loads(Path(path).read_text())
        if isinstance(state, dict):
            return state
    return {}


def write_state(path: Path, state: dict) -> None:
    """Replace the state file at once (readers in other processes never see half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Per thread too: two writers of one worker failing at once must not share it.
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}-{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True))
    os.replace(tmp, path)
