"""Which worker process renders each feed of a build (store/parallel.py runs them;
the other outputs are taken by whichever process is free, `parallel.run_pulled`)."""

from __future__ import annotations

from collections.abc import Callable

from .plan import Output


def balanced(items: list[tuple[Output, str]],
             workers: int) -> Callable[[tuple[Output, str], int], int]:
    """Feeds dealt out by size (their dependencies), largest first, each to the
    process with the least so far: the one feed of every upcoming event is a seventh
    of the work, the others (per venue, organizer, term) share the rest."""
    load = [0] * workers
    process: dict[str, int] = {}
    for output, _ in sorted(items, key=lambda item: -len(item[0].deps)):
        process[output.path] = chosen = load.index(min(load))
        load[chosen] += len(output.deps)
    return lambda item, _workers: process[item[0].path]
