"""Memos for one build: the parts of the representation thousands of events share."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..catalog.catalog import Catalog
from ..catalog.represent import Representer
from ..model.records import Record


class CountingCatalog:
    """The catalog with term counts memoized for one build: the representation asks
    for them once per embedded term per event, and each answer scans the term's
    events, which made full builds quadratic."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._counts: dict[int, int] = {}

    def __getattr__(self, name: str):
        return getattr(self._catalog, name)

    def term_count(self, record: Record) -> int:
        count = self._counts.get(record.id)
        if count is None:
            count = self._counts[record.id] = self._catalog.term_count(record)
        return count


class BuildRepresenter(Representer):
    """The representation with the parts that 10,000 events share made once per build:
    their venues, organizers and terms are a few dozen records. The dicts are shared
    between bodies; nothing changes them in place (page JSON-LD is pruned into a copy
    before it is edited)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._memo: dict[tuple, Any] = {}

    def _once(self, key: tuple, make: Callable[[], Any]) -> Any:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = make()
        return found

    def url(self, record: Record) -> str:
        # An event page links its venue, organizers and terms (a term's URL climbs its
        # parents): the same few dozen URLs asked for 17 times an event. Events are
        # not kept: --watch swaps an edited event's record within one build's model.
        if record.collection == "events":
            return super().url(record)
        found = self._memo.get(("url", record.id))
        if found is None or found[0] is not record:
            found = self._memo[("url", record.id)] = (record, super().url(record))
        return found[1]

    def linked(self, collection: str, slugs: object) -> list[Record]:
        # Four lookups an event when planning (its view) and four more per
        # representation, over a few dozen venues, organizers and terms. Kept with the
        # catalog version they were read from: a write gives a new one (--watch).
        try:
            key = ("linked", collection, tuple(slugs) if type(slugs) is list else slugs)
            found = self._memo.get(key)
        except TypeError:  # not hashable: a malformed file, as the plain lookup takes it
            return super().linked(collection, slugs)
        view = self.catalog.view()
        if found is None or found[0] is not view:
            found = self._memo[key] = (view, super().linked(collection, slugs))
        return list(found[1])  # the caller's own list, as the plain lookup gives

    def venue(self, record: Record, single: bool = False) -> dict:
        return self._once(("venue", record.id, single),
                          lambda: super(BuildRepresenter, self).venue(record, single))

    def organizer(self, record: Record, single: bool = False) -> dict:
        return self._once(("organizer", record.id, single),
                          lambda: super(BuildRepresenter, self).organizer(record, single))

    def venue_json_ld(self, record: Record) -> dict:
        return self._once(("venue_ld", record.id),
                          lambda: super(BuildRepresenter, self).venue_json_ld(record))

    def organizer_json_ld(self, record: Record) -> dict:
        return self._once(("organizer_ld", record.id),
                          lambda: super(BuildRepresenter, self).organizer_json_ld(record))

    # An event's JSON-LD place and organizers: the venue's and organizers' JSON-LD with
    # the empty members dropped and their page's URL, made for every event (a tenth of
    # a single representation); a few dozen records, made once each.
    def _place_ld(self, venue: Record) -> dict:
        return self._once(("place_ld", venue.id),
                          lambda: super(BuildRepresenter, self)._place_ld(venue))

    def _organizer_ld(self, organizer: Record) -> dict:
        return self._once(("organizer_ld_in_event", organizer.id),
                          lambda: super(BuildRepresenter, self)._organizer_ld(organizer))

    def _embedded_terms(self, collection: str, slugs: object) -> list[dict]:
        key = tuple(slugs) if isinstance(slugs, list) else slugs
        return self._once(("terms", collection, key),
                          lambda: super(BuildRepresenter, self)._embedded_terms(
                              collection, slugs))


RECENT_LIMIT = 2048  # events' representations kept (tens of KB each)


class Recent(OrderedDict):
    """A dict that keeps only its `limit` most recently used entries.

    A build asks for an event's representation from its page, its .ics and its JSON
    files, which are rendered one after another (Builder._render_and_write: outputs by first
    record): keeping every event's for the whole build grew the builder and each
    render worker by tens of KB per event (3.7 GiB at 100,000 events). An entry
    dropped is made again, with the same content, if a later output asks for it.
    """

    def __init__(self, limit: int | None = None,
                 dropped: Callable[[Any], object] | None = None) -> None:
        super().__init__()
        self.limit = limit or RECENT_LIMIT
        self.dropped = dropped  # told of each value the limit pushes out

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        if found is not default:
            self.move_to_end(key)
        return found

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        if len(self) > self.limit:
            _, value = self.popitem(last=False)
            if self.dropped is not None:
                self.dropped(value)
