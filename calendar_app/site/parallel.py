"""Rendering over several processes: fork after the catalog and the plan are in memory.

Nothing is pickled on the way in (a forked child already has the model, the
templates and the render closures); each child sends back only small results (the
content hash of each output it wrote) and whatever it added to a cache the parent
keeps. Outputs are dealt out by the first record they show, so an event's page, its
`.ics` and its JSON snapshots are made in the same process (one Markdown conversion
per description, thanks to markup's cache).
"""

from __future__ import annotations

import os
import pickle
import traceback
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    # Two already pays for the fork on a 2-core machine; more rarely helps: writing
    # files and the parent's serial parts remain.
    if not hasattr(os, "fork"):
        return 1
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def share_of(item: Any, workers: int) -> int:
    output = item[0]
    key = output.deps[0] if output.deps else hash(output.path)
    return key % workers


def run(items: Sequence[T], render: Callable[[T], R], collect: Callable[[], Any],
        merge: Callable[[Any], None], step: Callable[[int], None],
        workers: int = 1, place: Callable[[T, int], int] = share_of) -> list[R]:
    """`render` every item, in `workers` processes; results in the items' order.

    `place(item, workers)` picks the process (0 is this one). `collect()` runs in each
    child when done, its value is handed to `merge()` in the parent (for caches filled
    while rendering).
    """
    results: list[Any] = [None] * len(items)
    if workers <= 1 or not hasattr(os, "fork"):
        for i, item in enumerate(items):
            results[i] = render(item)
            step(1)
        return results
    shares: list[list[int]] = [[] for _ in range(workers)]
    for i, item in enumerate(items):
        shares[place(item, workers)].append(i)
    children: list[tuple[int, int]] = []
    for share in shares[1:]:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: render its share, report, and leave without cleanup
            os.close(read_end)
            status = 0
            try:
                payload: Any = ("ok", [render(items[i]) for i in share], collect())
            except BaseException:  # noqa: BLE001 (the parent re-raises it)
                payload = ("error", traceback.format_exc(), None)
                status = 1
            try:
                with os.fdopen(write_end, "wb") as fh:
                    pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                os._exit(status)
        os.close(write_end)
        children.append((pid, read_end))
    for i in shares[0]:
        results[i] = render(items[i])
        step(1)
    failure = None
    for (pid, read_end), share in zip(children, shares[1:]):
        with os.fdopen(read_end, "rb") as fh:
            try:
                kind, values, extra = pickle.load(fh)  # from our own child
            except EOFError:
                kind, values, extra = "error", "a render process died", None
        os.waitpid(pid, 0)
        if kind != "ok":
            failure = failure or values
            continue
        for i, value in zip(share, values):
            results[i] = value
        merge(extra)
        step(len(share))
    if failure is not None:
        raise RuntimeError(f"rendering failed in a worker process:\n{failure}")
    return results
