"""What queries read from: a catalog, the clock, the read policy and a text search,
and nothing that writes. The list endpoints (`lists.answer`) take one; the server's is
made by the wiring (search from the Whoosh index), the builder's by `open_reader`
without an index, a journal or users, so a static build loads no server parts."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import clock as clocks
from ..model import settings
from ..model.records import Record
from ..store import firstseen
from ..store.content import ContentTree, GitError
from ..store.users import User
from . import policy
from .catalog import Catalog
from .eventtable import EventTable, event_table
from .version import CatalogVersion

log = logging.getLogger(__name__)
# (catalog version, search text) -> ids of the matching events, sorted.
EventSearch = Callable[[CatalogVersion, str], np.ndarray]


@dataclass(frozen=True)
class Reader:
    catalog: Catalog
    clock: clocks.Clock
    search_events: EventSearch
    may_read: Callable[[User | None, Record], bool] = policy.may_read

    @property
    def site_zone_name(self) -> str:
        return settings.site_zone_name(self.catalog.settings)

    def site_now(self) -> dt.datetime:
        return settings.site_now(self.clock, self.catalog.settings)

    def table(self, view: CatalogVersion) -> EventTable:
        """The event columns of `view`, recurring events expanded up to today's horizon."""
        return event_table(view, self.site_now().date())


def search_in_memory(view: CatalogVersion, text: str) -> np.ndarray:
    """Text search from the records alone, as the server answers before its index is
    built. The builder's: its snapshots never search, so Whoosh (whose query classes
    come with `index`) is imported only if one ever does."""
    from . import index

    return index.match_in_memory(view, "events", index.SearchTerms(text),
                                 index.EVENT_SEARCH_FIELDS)


def open_tree(content: Path, cache_dir: Path) -> ContentTree:
    """The content tree, with a write a crash interrupted finished first."""
    tree = ContentTree(content, cache_dir / "write.lock")
    try:
        recovered = tree.recover()
    except GitError as exc:
        # Nothing here can prove that no other git process holds the repository's lock,
        # so the operator decides. gunicorn prints a RuntimeError at start as one line.
        raise RuntimeError(f"a write interrupted by a crash cannot be finished in "
                           f"{tree.git_root}: {exc.advice}, then start again ({exc})") from exc
    if recovered:
        log.warning("finished a write interrupted by a crash: %s", recovered.splitlines()[0])
    return tree


def clock_at(now: dt.datetime | None) -> clocks.Clock:
    """A clock fixed at `now` when given (tests, builds of a given day), else the system's."""
    return clocks.fixed(now) if now else clocks.system_now


def open_reader(content: Path, cache_dir: Path, now: dt.datetime | None = None) -> Reader:
    """The builder's reader: the tree's records (through the start-up cache in
    `cache_dir`) and their first-seen dates; no index, journal, users or threads."""
    tree = open_tree(content, cache_dir)
    catalog = Catalog(tree)
    catalog.load(cache_dir / "catalog.pickle")
    firstseen.load(tree.root, cache_dir)  # `date` of records whose file gives none
    return Reader(catalog, clock_at(now), search_in_memory)
