"""The event columns: every event of a catalog version as numpy columns, sorted by
(local start, publication date, id), rebuilt lazily when the version moves. Date
windows, ordering, counts and every id/flag filter of `GET /events` come from here: a
window is a bisect plus a vectorised mask, so totals are exact and a page costs the same
at 1k or 100k events. Plain numpy: the builder's list snapshots use it too."""

from __future__ import annotations

import bisect
import datetime as dt
import math
from collections.abc import Iterable, Sequence

import numpy as np

from ..model.resources import STATUSES
from . import occurrences
from .version import CatalogVersion

_EPOCH = dt.datetime(1970, 1, 1)
_SECOND = dt.timedelta(seconds=1)


def event_table(view: CatalogVersion, today: dt.date | None = None) -> EventTable:
    """The event columns of a catalog version, made once per version (and day, for
    the horizon of recurring events; without `today` they are left out)."""
    return view.derive(("event-table", today),  # type: ignore[return-value]
                       lambda: EventTable(view, today))


def _seconds(value: dt.datetime | None) -> int:
    return int((value - _EPOCH).total_seconds()) if value else 0


STATUS_CODES = {name: i for i, name in enumerate(STATUSES)}


class EventTable:
    """Every event as numpy columns, sorted by (local start, publication date, id)."""

    def __init__(self, catalog: CatalogVersion, today: dt.date | None = None) -> None:
        self.version = catalog.version
        events = catalog.all("events")
        # One tuple per event, then a column per field (zip in C, numpy conversions):
        # sorting Python row tuples took ~0.7 s at 100k events.
        rows = [(d["start_date"], d.get("date") or d.get("modified") or _EPOCH, d["id"],
                 d["end_date"], STATUS_CODES.get(d.get("status", "publish"), 0),
                 bool(d.get("hide_from_listings")), bool(d.get("featured")),
                 int(d.get("author") or 0), d.get("venue") or "", d["id"])
                for d in (r.data for r in events) if "recurrence" not in d]
        # A recurring event is listed as its occurrences (docs/recurring-events.md): a
        # row each, with the occurrence's id and dates; `series` keeps the event's id
        # for the filters that name records (terms, venues, search, include). Built here,
        # not through `occurrences.of`: this runs inside the version's `derive` lock.
        for item in occurrences.Occurrences(catalog, today).listed() if today else ():
            d, occ = item.series.data, item.occurrence
            rows.append((occ.start, d.get("date") or d.get("modified") or _EPOCH, item.id,
                         occ.end, STATUS_CODES.get(d.get("status", "publish"), 0),
                         bool(d.get("hide_from_listings")), bool(d.get("featured")),
                         int(d.get("author") or 0),
                         occ.overrides.get("venue") or d.get("venue") or "", d["id"]))
        n = len(rows)
        cols = list(zip(*rows)) if rows else [()] * 10
        start = _column_seconds(cols[0])
        pubdate = _column_seconds(cols[1])
        ids = np.fromiter(cols[2], np.int64, n)
        order = np.lexsort((ids, pubdate, start))  # last key first: start, date, id
        self.start = start[order]
        self.pubdate = pubdate[order]
        self.ids = ids[order]
        self.series = np.fromiter(cols[9], np.int64, n)[order]
        self.recurring = bool(n) and not np.array_equal(self.series, self.ids)
        # Rows by series id, for the filters naming records (one record, many rows).
        self._by_series = np.argsort(self.series, kind="stable")
        self._series_sorted = self.series[self._by_series]
        self.end = _column_seconds(cols[3])[order]
        self.status = np.fromiter(cols[4], np.int8, n)[order]
        self.hidden = np.fromiter(cols[5], np.bool_, n)[order]
        self.featured = np.fromiter(cols[6], np.bool_, n)[order]
        self.author = np.fromiter(cols[7], np.int64, n)[order]
        coords: dict[str, tuple[float, float]] = {}
        for v in catalog.all("venues"):
            lat, lng = v.data.get("geo_lat"), v.data.get("geo_lng")
            coords[v.slug] = (float(lat) if lat is not None else math.nan,
                              float(lng) if lng is not None else math.nan)
        nowhere = (math.nan, math.nan)
        where = [coords.get(slug, nowhere) for slug in cols[8]]
        self.lat = np.fromiter((w[0] for w in where), np.float64, n)[order]
        self.lng = np.fromiter((w[1] for w in where), np.float64, n)[order]
        self.start_list = self.start.tolist()  # bisect on a list beats numpy for one value
        by_id = np.argsort(self.ids)
        self._sorted_ids = self.ids[by_id]
        self._id_pos = by_id
        # Ids are small dense integers: a row per possible id makes `positions` one
        # gather instead of a binary search per id (~2 ms for 100k ids at 100k events).
        top = int(self._sorted_ids[-1]) if n else -1
        self._row_of: np.ndarray | None = None
        if n and self._sorted_ids[0] >= 0 and top < 4 * n + 4096:
            self._row_of = np.full(top + 1, -1, np.int64)
            self._row_of[self.ids] = np.arange(n)

    def __len__(self) -> int:
        return len(self.ids)

    def positions(self, ids: Iterable[int]) -> np.ndarray:
        """Row positions of these event ids (unknown ids dropped)."""
        wanted = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, np.int64)
        if not len(wanted) or not len(self.ids):
            return np.empty(0, np.int64)
        if self._row_of is not None:
            row_of = self._row_of
            inside = wanted[(wanted >= 0) & (wanted < len(row_of))]
            rows = row_of[inside]
            return rows[rows >= 0]
        at = np.searchsorted(self._sorted_ids, wanted)
        at = np.clip(at, 0, len(self._sorted_ids) - 1)
        hit = self._sorted_ids[at] == wanted
        return self._id_pos[at[hit]]

    def mask_of(self, ids: Iterable[int]) -> np.ndarray:
        """Rows of these record ids: all occurrences of a recurring event, and the
        occurrences named by their own id."""
        mask = np.zeros(len(self.ids), np.bool_)
        if not self.recurring:
            mask[self.positions(ids)] = True
            return mask
        wanted = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, np.int64)
        lo = np.searchsorted(self._series_sorted, wanted, "left")
        hi = np.searchsorted(self._series_sorted, wanted, "right")
        counts = hi - lo
        total = int(counts.sum())
        if total:
            # The concatenated ranges lo[i]..hi[i], without a Python loop.
            starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
            mask[self._by_series[np.arange(total) + starts]] = True
        mask[self.positions(wanted)] = True
        return mask

    def rows_of_series(self, series_id: int) -> np.ndarray:
        lo = np.searchsorted(self._series_sorted, series_id, "left")
        hi = np.searchsorted(self._series_sorted, series_id, "right")
        return self._by_series[lo:hi]

    def first_starting_at(self, seconds: int) -> int:
        return bisect.bisect_left(self.start_list, seconds)


def seconds(value: dt.datetime) -> int:
    return _seconds(value)


def _column_seconds(values: Sequence[dt.datetime]) -> np.ndarray:
    """Seconds since 1970 of naive datetimes, as `_seconds`. Integer division of the
    timedelta: 5x faster than numpy's own conversion of datetime objects."""
    return np.fromiter(((v - _EPOCH) // _SECOND for v in values), np.int64, len(values))
