"""The occurrences of recurring events as the interface shows them.

Events Calendar Pro gives every occurrence of a recurring event its own post id (a
"provisional" id: a large base plus the occurrence's number) and answers it like a
post whose dates are the occurrence's. Here an occurrence id is
`OCCURRENCE_BASE + series id * SLOTS + number`, the number counting the rule's dates
from the first (excluded and cancelled dates keep theirs), so an id stays the same
while the series is edited, and says which series it belongs to without a lookup.

Expansion is cached on the record: a record that did not change between catalog
versions is the same object, so its occurrences are reused; only changed files, a new
day (the horizon moves) and a new calendar timezone expand again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ..model import dates, recurrence
from ..model.ids import MAX_JSON_ID, OCCURRENCE_BASE
from ..model.ids import OCCURRENCE_SLOTS as SLOTS  # recurrence.MAX_OCCURRENCES is below
from ..model.records import Record
from ..model.settings import recurrence_horizon
from .version import CatalogVersion


def occurrence_id(series_id: int, number: int) -> int:
    """At most MAX_JSON_ID: record ids end at ids.MAX_ID, which is made so."""
    return OCCURRENCE_BASE + series_id * SLOTS + number


def split_id(value: int) -> tuple[int, int] | None:
    """(series id, number) of an occurrence id, None for another id."""
    if not OCCURRENCE_BASE < value <= MAX_JSON_ID:
        return None
    return divmod(value - OCCURRENCE_BASE, SLOTS)


@dataclass(frozen=True)
class Listed:
    """One occurrence that lists show: not excluded, not cancelled, within the horizon."""

    id: int
    series: Record
    occurrence: recurrence.Occurrence


def expanded(record: Record, settings: dict, today: dt.date) -> tuple[recurrence.Occurrence,
                                                                      ...]:
    """Every occurrence of a recurring event up to the horizon (cancelled included): the
    horizon days after today, or after the series' start when that is later."""
    block = record.data.get("recurrence")
    if not block:
        return ()
    # Counted from the series' first date when that is later: a series starting past
    # today's horizon is listed from its start, as a single event on that day is.
    until = recurrence_horizon(settings, max(today, record.data["start_date"].date()))
    zone_name = str(record.get("timezone") or settings.get("timezone") or "UTC")
    cached = record.expansion
    if cached is not None and cached[0] == until and cached[1] == zone_name:
        return cached[2]
    found = tuple(recurrence.expand(block, record.data["start_date"], record.data["end_date"],
                                    until, dates.zone(zone_name)))
    record.expansion = (until, zone_name, found)  # one assignment: safe across threads
    return found


def numbered(record: Record, settings: dict, today: dt.date) -> list[Listed]:
    """The listed occurrences of a series with their ids."""
    out = []
    for occ in expanded(record, settings, today):
        if not occ.cancelled:
            out.append(Listed(occurrence_id(record.id, occ.number), record, occ))
    return out


class Occurrences:
    """The occurrences of one catalog version at one horizon."""

    def __init__(self, view: CatalogVersion, today: dt.date) -> None:
        self.view = view
        self.today = today
        self.series = [r for r in view.all("events") if r.data.get("recurrence")]
        self._records: dict[int, Record] = {}

    def listed(self) -> list[Listed]:
        settings = self.view.settings
        return [item for r in self.series for item in numbered(r, settings, self.today)]

    def get(self, value: int) -> Record | None:
        """The occurrence with this id as a record of its own (None if there is none)."""
        found = self._records.get(value)
        if found is not None:
            return found
        parts = split_id(value)
        series = self.view.get(parts[0], "events") if parts else None
        if series is None or not series.data.get("recurrence"):
            return None
        for item in numbered(series, self.view.settings, self.today):
            if item.id == value:
                record = as_record(item)
                if len(self._records) > 10_000:
                    self._records.clear()
                self._records[value] = record
                return record
        return None


def of(view: CatalogVersion, today: dt.date) -> Occurrences:
    return view.derive(("occurrences", today), lambda: Occurrences(view, today))  # type: ignore[return-value]


def as_record(item: Listed) -> Record:
    """An occurrence as a record: the series' fields, the occurrence's id and dates and
    its changed fields; `series_id` and `original_start` say where it comes from."""
    occ = item.occurrence
    data = dict(item.series.data)
    data.update(occ.overrides)
    data.update(id=item.id, start_date=occ.start, end_date=occ.end,
                series_id=item.series.id, original_start=occ.original)
    return Record("events", data, item.series.path)


def series_id(record: Record) -> int:
    """The id of the series a record belongs to (its own id for a single event)."""
    return int(record.data.get("series_id") or record.id)
