"""The sync state file under concurrent writers: many threads of one process (writers
whose pushes fail at once each record the failure) and readers never see half a file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from calendar_app.sync.state import STATE_FILE, read_state, write_state


def test_threads_of_one_process_write_the_state_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cache" / STATE_FILE
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        start.wait()
        try:
            for round_ in range(100):
                write_state(path, {"writer": n, "round": round_, "error": "x" * 500})
                assert read_state(path)["round"] >= 0  # whole, never half written
        except BaseException as exc:  # noqa: BLE001 - reported below, whatever it is
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert json.loads(path.read_text())["round"] == 99
    assert [p.name for p in path.parent.iterdir()] == [STATE_FILE]  # no temp file left
