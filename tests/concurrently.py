"""Running one function in several threads that start together, for tests that
hammer a guarantee; what any thread raised is returned, not lost in the thread."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_at_once(work: Callable[[int], None], threads: int) -> list[BaseException]:
    """Call `work(n)` for n in range(threads), all released at one barrier."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(n: int) -> None:
        start.wait()
        try:
            work(n)
        except BaseException as exc:  # noqa: BLE001 - handed to the test to assert on
            errors.append(exc)

    started = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return errors
