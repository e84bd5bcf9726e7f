"""The sync state file under concurrent writers: many threads of one process (writers
whose pushes fail at once each record the failure) and readers never see half a file."""

from __future__ import annotations

import json
from pathlib import Path

from concurrently import run_at_once

from calendar_app.sync.state import STATE_FILE, read_state, write_state


def test_threads_of_one_process_write_the_state_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cache" / STATE_FILE

    def writer(n: int) -> None:
        for round_ in range(100):
            write_state(path, {"writer": n, "round": round_, "error": "x" * 500})
            assert read_state(path)["round"] >= 0  # whole, never half written

    assert run_at_once(writer, threads=8) == []
    assert json.loads(path.read_text())["round"] == 99
    assert [p.name for p in path.parent.iterdir()] == [STATE_FILE]  # no temp file left
