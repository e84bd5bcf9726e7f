"""Work over several processes: fork once the data is in memory.

Nothing is pickled on the way in (a forked child already has everything); each child
sends back its results and whatever it added to a cache the parent keeps. Used by
the catalog to parse thousands of files and by the site builder to render.
"""

from __future__ import annotations

import gc
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


def _nothing() -> None:
    return None


def _nothing_merged(_: Any) -> None:
    return None


def run(items: Sequence[T], render: Callable[[T], R], place: Callable[[T, int], int],
        workers: int = 1, collect: Callable[[], Any] = _nothing,
        merge: Callable[[Any], None] = _nothing_merged,
        step: Callable[[int], None] = _nothing_merged) -> list[R]:
    """`render` every item, in `workers` processes; results in the items' order.

    `place(item, workers)` picks the process (0 is this one). `collect()` runs in each
    child when done, its value is handed to `merge()` in the parent (for caches filled
    while rendering); `step(n)` counts items done. A child that fails or dies makes
    this raise RuntimeError once the others are done.
    """
    results: list[Any] = [None] * len(items)
    if workers <= 1 or len(items) < 2 or not hasattr(os, "fork"):
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
            # What the parent made is out of the collector's sight here: a collection
            # would walk (and copy, writing each object's header) the parent's whole
            # heap, the site plan at 10,000 events some hundreds of MB.
            gc.freeze()
            os.close(read_end)
            status = 0
            try:
                payload: Any = ("ok", [render(items[i]) for i in share], collect())
            except BaseException:  # noqa: BLE001 (the parent re-raises it)
                payload = ("error", traceback.format_exc(), None)
                status = 1
            _report_and_exit(write_end, payload, status)
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
            except (EOFError, pickle.UnpicklingError):
                kind, values, extra = "error", "a worker process died", None
        os.waitpid(pid, 0)
        if kind != "ok":
            failure = failure or values
            continue
        for i, value in zip(share, values):
            results[i] = value
        merge(extra)
        step(len(share))
    if failure is not None:
        raise RuntimeError(f"a worker process failed:\n{failure}")
    return results


def start(work: Callable[[Callable[[], bool]], R]) -> Callable[[], R | None]:
    """`work(stopped)` in a forked child while this process goes on (a cache filled
    ahead, on a core that would wait). The function returned tells the child to stop
    (`stopped()` turns True: `work` returns what it has), waits for it and gives its
    value, or None if it failed or died, or where there is no fork; call it once, also
    when the value is no longer wanted (it reaps the child)."""
    if not hasattr(os, "fork"):
        return lambda: None
    read_end, write_end = os.pipe()
    stop_read, stop_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: as in run(), the parent's heap out of the collector's sight
        gc.freeze()
        os.close(read_end)
        os.close(stop_write)
        os.set_blocking(stop_read, False)

        def stopped() -> bool:
            try:
                os.read(stop_read, 1)  # b"" once the parent closed its end: stop
            except BlockingIOError:
                return False
            return True
        status = 0
        try:
            payload: Any = ("ok", work(stopped))
        except BaseException:  # noqa: BLE001 (the parent goes on without the value)
            payload, status = ("error", None), 1
        _report_and_exit(write_end, payload, status)
    os.close(write_end)
    os.close(stop_read)

    def result() -> R | None:
        os.close(stop_write)
        with os.fdopen(read_end, "rb") as fh:
            try:
                kind, value = pickle.load(fh)  # from our own child
            except (EOFError, pickle.UnpicklingError):
                kind, value = "error", None
        os.waitpid(pid, 0)
        return value if kind == "ok" else None
    return result


def run_pulled(items: Sequence[T], render: Callable[[T], R], workers: int = 1,
               collect: Callable[[], Any] = _nothing,
               merge: Callable[[Any], None] = _nothing_merged,
               step: Callable[[int], None] = _nothing_merged) -> list[R]:
    """As `run`, but each process takes the next run of items when it is free, so all
    finish together whatever each item costs (a fixed share left one process
    rendering alone for seconds). Items next to each other mostly land in the same
    process: order them so that those sharing caches sit together."""
    if workers <= 1 or len(items) < 2 or not hasattr(os, "fork"):
        return run(items, render, lambda _item, _workers: 0, 1, collect, merge, step)
    # The runs' numbers wait in a pipe, 4 bytes each: a read of 4 bytes is atomic
    # (the kernel serializes readers of a pipe), and the pipe's 64 KiB hold them all.
    size = max(64, -(-len(items) // 8192))
    runs = -(-len(items) // size)
    take, give = os.pipe()
    os.write(give, b"".join(n.to_bytes(4, "little") for n in range(runs)))
    os.close(give)  # once empty, a read answers b"": nothing left

    parent = os.getpid()

    def pull(_worker: int) -> list[tuple[int, Any]]:
        done = []
        while (number := os.read(take, 4)):
            start = int.from_bytes(number, "little") * size
            for i in range(start, min(start + size, len(items))):
                done.append((i, render(items[i])))
                if os.getpid() == parent:  # a child's are counted when it reports
                    step(1)
        return done

    # "Item" k is process k's whole job: pull runs until the pipe is empty.
    parts = run(range(workers), pull, lambda k, _workers: k, workers, collect, merge)
    os.close(take)
    results: list[Any] = [None] * len(items)
    for k, part in enumerate(parts):
        for i, value in part:
            results[i] = value
        if k:
            step(len(part))
    return results


def _report_and_exit(write_end: int, payload: Any, status: int) -> None:
    """A forked child's last act: its payload down the pipe to the parent, then out
    without the parent's cleanup (atexit handlers, buffers it inherited)."""
    try:
        with os.fdopen(write_end, "wb") as fh:
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        os._exit(status)
