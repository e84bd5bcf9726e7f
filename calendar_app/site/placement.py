"""Which worker process renders each output of a build (store/parallel.py runs them)."""

from __future__ import annotations

from collections.abc import Callable

from .plan import Output


def place(item: tuple[Output, str], workers: int) -> int:
    """The process that renders an output. Outputs go by the first record they show,
    so an event's page, `.ics` and JSON snapshots are made in the same process (one
    Markdown conversion per description, thanks to markup's cache)."""
    output = item[0]
    if output.kind == "json-list":
        return 0  # with the single snapshots of the same events
    return (output.deps[0] if output.deps else hash(output.path)) % workers


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
