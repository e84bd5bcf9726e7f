"""One catalog version: an immutable, complete state of the records, their lookups by id,
slug and link, and the settings. `Catalog` (catalog.py) builds and publishes them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..model.records import Record
from ..model.resources import RESOURCES


class CatalogVersion:
    """One complete state of the catalog: records, lookups, links and settings.

    A published version is never changed. A request takes one (`Catalog.pin`) and
    reads it from start to end; a change builds the next version beside it (the maps
    copied, the records shared) and publishes it in one assignment, so no reader ever
    sees a change half applied. What is derived from a version (term counts, the
    event columns, finished list bodies) lives on it (`derive`) and goes with it.
    """

    def __init__(self, version: int, records: dict[int, Record],
                 slugs: dict[str, dict[str, int]], paths: dict[str, int],
                 backlinks: dict[tuple[str, str], set[int]], settings: dict) -> None:
        self.version = version
        self.records = records
        self.slugs = slugs
        self.paths = paths
        # (collection, slug) -> ids of records linking to it (events, child categories)
        self.backlinks = backlinks
        self.settings = settings
        self._derived: dict[object, object] = {}
        self._derive_lock = threading.Lock()

    @classmethod
    def empty(cls, settings: dict) -> CatalogVersion:
        return cls(0, {}, {name: {} for name in RESOURCES}, {}, {}, settings)

    def successor(self) -> CatalogVersion:
        """A working copy for the next version. Link sets are shared until changed
        (`Catalog._links`); ~15 ms at 100,000 events, well under a git commit."""
        return CatalogVersion(self.version + 1, dict(self.records),
                              {c: dict(m) for c, m in self.slugs.items()}, dict(self.paths),
                              dict(self.backlinks), self.settings)

    def derive(self, key: object, build: Callable[[], object]) -> object:
        """What `build` makes from this version, made once."""
        try:
            return self._derived[key]
        except KeyError:
            pass
        with self._derive_lock:
            if key not in self._derived:
                self._derived[key] = build()
            return self._derived[key]

    # -- lookups ---------------------------------------------------------------
    def get(self, record_id: int, collection: str | None = None) -> Record | None:
        record = self.records.get(record_id)
        if record is None or (collection and record.collection != collection):
            return None
        return record

    def by_slug(self, collection: str, slug: str) -> Record | None:
        record_id = self.slugs[collection].get(slug)
        return None if record_id is None else self.records.get(record_id)

    def all(self, collection: str) -> list[Record]:
        return [self.records[i] for i in self.slugs[collection].values()]

    def linked(self, collection: str, slug: str) -> list[Record]:
        """Records (events, or child categories) that link to this record."""
        return [self.records[i] for i in sorted(self.backlinks.get((collection, slug), ()))
                if i in self.records]

    def resolve(self, collection: str, slugs: object) -> list[Record]:
        """The existing records named by a slug or list of slugs, in the given order."""
        items = slugs if isinstance(slugs, list) else [slugs] if slugs else []
        found = (self.by_slug(collection, s) for s in items)
        return [r for r in found if r is not None]

    def term_count(self, record: Record) -> int:
        """Published events carrying a term (the plugin's `count`), memoized: every
        embedded term of every listed event asks for it. One set intersection in C per
        term: walking a term's events in Python took ~35 ms a term at 100,000 events,
        the tail of a fresh worker's first date windows."""
        counts: dict = self.derive("term-counts", dict)  # type: ignore[assignment]
        key = (record.collection, record.slug)
        count = counts.get(key)
        if count is None:
            linked = self.backlinks.get(key)
            count = counts[key] = len(linked & self.published_events()) if linked else 0
        return count

    def published_events(self) -> frozenset[int]:
        """Ids of the published events of this version."""
        return self.derive("published-events", lambda: frozenset(  # type: ignore[return-value]
            r.id for r in self.all("events") if r.status == "publish"))

    def warm(self) -> None:
        """Make ahead what every list asks for first: the term counts. In a preloaded
        server's master, before forking, so workers share them instead of each
        making its own on its first requests."""
        for collection in ("categories", "tags"):
            for term in self.all(collection):
                self.term_count(term)
