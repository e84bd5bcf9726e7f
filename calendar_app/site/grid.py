"""The month view's grid: weeks of seven days, each day with the events it holds.

An event is drawn as one bar per week row it covers, from the first of its days in
that row across the others (wrapping at week ends), in a lane: a line of the cells
that the bar keeps on each of its days, so bars never overlap (lanes down to the
lowest bar keep one line's height; below them a title may take more). A day shows at most
`MAX_LANES` lanes; the events that find no free lane are counted in its "+N more".
The week starts on the calendar's `week_start` (model/settings.py).
Lanes are given day by day: the bars already running keep theirs, then the day's new
bars (longest first) and its one-day events (in the lists' order) take the lowest
free ones. Every lane of a day holds one of that day's events, so a day with at most
`MAX_LANES` events shows them all; a bar crowded out of a day gets a lane on a later
one and starts there, marked as continued.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..model.settings import week_start
from .i18n import Regional
from .model import EventView, SiteModel

MAX_LANES = 3


@dataclass
class Bar:
    """An event's piece in one week row: drawn in its first cell, across `span` days."""
    event: EventView
    span: int
    starts: bool  # the piece holds the event's first day (its start time is shown)
    ends: bool  # the piece holds the event's last day


@dataclass
class Lane:
    """One line of a cell: a bar that begins here, one passing from an earlier day of the
    week (the cell keeps the line free for it), or nothing (keeps lower lanes level)."""
    bar: Bar | None = None
    through: EventView | None = None


@dataclass
class Cell:
    day: dt.date
    in_month: bool
    today: bool
    count: int = 0  # events on the day
    lanes: list[Lane] = field(default_factory=list)
    # Lanes above this one keep one line's height, so that a bar across this day stays
    # level with its other days; those below, and every lane of a day no bar crosses,
    # may wrap a one-day event's title.
    level: int = 0

    @property
    def more(self) -> int:
        """Events of the day that are in no lane (the "+N more" link)."""
        return self.count - sum(1 for lane in self.lanes if lane.bar or lane.through)


@dataclass
class AgendaItem:
    """An event once, with its days, for the month as a list (narrow screens)."""
    event: EventView
    first: str  # "Dec 12" ("Sat, Dec 5" for a one-day event)
    last: str | None  # "Dec 20", None for a one-day event


def month_grid(model: SiteModel, first: dt.date) -> list[list[Cell]]:
    """Weeks (from the calendar's first weekday) covering the month starting on `first`."""
    return [week_row(model, week, first.month) for week in _weeks(first, model.settings)]


def grid_days(first: dt.date, settings: dict) -> tuple[dt.date, dt.date]:
    """The first and last day the grid of the month starting on `first` shows."""
    weeks = _weeks(first, settings)
    return weeks[0][0], weeks[-1][-1]


def weekdays(model: SiteModel) -> list[tuple[str, str]]:
    """The days' (full, short) names in the language and order of the calendar's week."""
    return model.regional.weekdays(week_start(model.settings))


def week_of(day: dt.date, settings: dict) -> dt.date:
    """The first day of the calendar's week holding `day`."""
    return day - dt.timedelta(days=(day.weekday() - week_start(settings)) % 7)


def _weeks(first: dt.date, settings: dict) -> list[list[dt.date]]:
    return calendar.Calendar(firstweekday=week_start(settings)).monthdatescalendar(
        first.year, first.month)


def week_row(model: SiteModel, days: list[dt.date], month: int | None,
             events_of: Callable[[dt.date], Sequence[EventView]] | None = None) -> list[Cell]:
    """One week row of cells; `events_of(day)` the day's events (all of them unless
    given); `month` the month shown, None when every day belongs (the week view)."""
    held: list[tuple[Bar, int] | None] = [None] * MAX_LANES  # bar, its last column
    cells = []
    for column, day in enumerate(days):
        events = events_of(day) if events_of else model.by_day.get(day, ())
        cell = Cell(day, month is None or day.month == month, day == model.today,
                    len(events))
        lanes = [Lane() for _ in range(MAX_LANES)]
        running = set()
        for lane, holder in enumerate(held):
            if holder is not None and holder[1] < column:
                held[lane] = holder = None
            if holder is not None:
                lanes[lane].through = holder[0].event
                running.add(holder[0].event.id)
        week_end = days[-1]
        new = [e for e in events if e.id not in running]
        # Bars first, the longest (in this row) first; then one-day events as listed.
        new.sort(key=lambda e: -(min(e.last_day, week_end) - day).days if e.multi_day else 1)
        for event in new:
            free = next((i for i, h in enumerate(held) if h is None), None)
            if free is None:
                break  # the rest are behind "+N more"
            last = min(event.last_day, week_end)
            bar = Bar(event, (last - day).days + 1, starts=day == event.first_day,
                      ends=last == event.last_day)
            lanes[free].bar = bar
            held[free] = (bar, column + bar.span - 1)
        while lanes and lanes[-1].bar is None and lanes[-1].through is None:
            lanes.pop()
        cell.lanes = lanes
        cell.level = max((i + 1 for i, lane in enumerate(lanes)
                          if lane.through or lane.bar and lane.bar.span > 1), default=0)
        cells.append(cell)
    return cells


def month_agenda(model: SiteModel, first: dt.date) -> list[AgendaItem]:
    """The events on the month's days, each once, in the lists' order."""
    days = (add_months(first, 1) - first).days
    found = {e.id: e for i in range(days)
             for e in model.by_day.get(first + dt.timedelta(days=i), ())}
    return [AgendaItem(e, *day_span(e, model.regional))
            for e in sorted(found.values(), key=lambda e: (e.start_utc, e.end_utc, e.id))]


def day_span(event: EventView, regional: Regional) -> tuple[str, str | None]:
    """("Dec 12", "Dec 20"), years named when they differ; ("Sat, Dec 5", None)."""
    start, end = event.first_day, event.last_day
    if start == end:
        return regional.short_date(start), None
    years = start.year != end.year
    return regional.day_month(start, years), regional.day_month(end, years)


def add_months(first: dt.date, months: int) -> dt.date:
    index = first.year * 12 + first.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def months_between(low: dt.date, high: dt.date) -> list[dt.date]:
    out = []
    current = low
    while current <= high:
        out.append(current)
        current = add_months(current, 1)
    return out
