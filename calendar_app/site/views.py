"""The week view and the photo view (Events Calendar Pro's): static pages like the rest.

Week: `events/week/<first day>/`, one page per week from the week of the first event
(or today) to that of the last, and `events/week/` for the week of the build day.
All-day and multi-day events are bars on top (the month grid's lanes, grid.week_row);
the others are placed on the day's column of a time grid by their start and end,
side by side where they overlap. Photo: `events/photo/` (and `.../page/N/`), the
upcoming events as cards with their images, paginated like the lists.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from . import paths
from .grid import Cell, week_of, week_row, weekdays
from .model import EventView, SiteModel
from .pages import Nav, Pages, listing_deps
from .plan import Output

FIRST_HOUR, LAST_HOUR = 8, 18  # the time grid shows at least these hours
SHORTEST = 30  # minutes: a shorter event is drawn this tall, so its title fits
DAY_MINUTES = 24 * 60


@dataclass
class Slot:
    """A timed event on its day's column: where it is drawn, in percent of the column."""
    event: EventView
    top: float
    height: float
    left: float
    width: float
    clipped: bool  # it goes on past midnight (before the end-of-day cutoff)


@dataclass
class WeekDay:
    day: dt.date
    today: bool
    events: list[EventView]  # all of the day's, in the lists' order (narrow screens)
    slots: list[Slot]
    path: str | None  # the day's page, when it has events


@dataclass
class Week:
    first: dt.date
    bars: list[Cell]
    days: list[WeekDay]
    hours: list[int]  # the hours the time grid shows, each a row

    @property
    def events(self) -> list[EventView]:
        found = {e.id: e for d in self.days for e in d.events}
        return [found[i] for i in sorted(found)]


def on_top(event: EventView) -> bool:
    """All-day and multi-day events are bars above the time grid."""
    return event.all_day or event.multi_day


def week_layout(model: SiteModel, first: dt.date) -> Week:
    days = [first + dt.timedelta(days=i) for i in range(7)]
    timed = {d: [e for e in model.by_day.get(d, ()) if not on_top(e)] for d in days}
    spans = {d: [(e, *_minutes(e, d)) for e in timed[d]] for d in days}
    low = min([FIRST_HOUR * 60, *(s for d in days for _, s, _ in spans[d])])
    high = max([LAST_HOUR * 60, *(min(DAY_MINUTES, max(e, s + SHORTEST))
                                  for d in days for _, s, e in spans[d])])
    low, high = low // 60 * 60, min(DAY_MINUTES, -(-high // 60) * 60)
    bars = week_row(model, days, None, lambda d: [e for e in model.by_day.get(d, ())
                                                 if on_top(e)])
    return Week(first, bars, [
        WeekDay(d, d == model.today, list(model.by_day.get(d, ())),
                _slots(spans[d], low, high), paths.day(d) if d in model.by_day else None)
        for d in days], list(range(low // 60, high // 60)))


def _minutes(event: EventView, day: dt.date) -> tuple[int, int]:
    """Start and end as minutes after the day's midnight (the end may be past it)."""
    midnight = dt.datetime.combine(day, dt.time(0))
    start = max(0, int((event.start - midnight).total_seconds() // 60))
    return start, int((event.end - midnight).total_seconds() // 60)


def _slots(spans: list[tuple[EventView, int, int]], low: int, high: int) -> list[Slot]:
    """Each event in a column of its group of overlapping events, the group's width
    shared between its columns."""
    found: list[Slot] = []
    group: list[tuple[EventView, int, int, int]] = []
    ends: list[int] = []  # each column's last end in the group
    group_end = -1
    total = high - low

    def close() -> None:
        for event, start, end, column in group:
            found.append(Slot(event, round(100 * (start - low) / total, 3),
                              round(100 * (min(end, high) - start) / total, 3),
                              round(100 * column / len(ends), 3), round(100 / len(ends), 3),
                              end > DAY_MINUTES))

    for event, start, real_end in sorted(spans, key=lambda s: (s[1], -s[2], s[0].id)):
        end = max(real_end, start + SHORTEST)
        if group and start >= group_end:
            close()
            group, ends = [], []
        column = next((i for i, last in enumerate(ends) if last <= start), len(ends))
        if column == len(ends):
            ends.append(end)
        ends[column] = end
        group.append((event, start, real_end if real_end > DAY_MINUTES else end, column))
        group_end = max(group_end, end)
    if group:
        close()
    return found


def week_range(model: SiteModel) -> tuple[dt.date, dt.date]:
    """First days of the first and last week to render: all events and today."""
    days = [model.today] + ([model.event_days[0], model.event_days[-1]]
                            if model.event_days else [])
    return week_of(min(days), model.settings), week_of(max(days), model.settings)


def outputs(pages: Pages) -> Iterator[Output]:
    yield from week_pages(pages)
    yield from photo_pages(pages)


def week_pages(pages: Pages) -> Iterator[Output]:
    model = pages.model
    low, high = week_range(model)
    this_week = week_of(model.today, model.settings)
    first = low
    while first <= high:
        before = first - dt.timedelta(days=7)
        after = first + dt.timedelta(days=7)
        nav = (Nav(before, paths.week(before)) if first > low else None,
               Nav(after, paths.week(after)) if first < high else None)
        last = first + dt.timedelta(days=6)
        shown = sorted({e for i in range(7) for e in model.by_day.get(
            first + dt.timedelta(days=i), ())}, key=lambda e: e.id)
        today = model.today if first <= model.today <= last else None
        shape = f"week {first} {nav[0] is not None} {nav[1] is not None} {today} " \
                f"{[e.id for e in shown]}"
        targets = [paths.week(first)] + ([paths.page(paths.WEEK)] if first == this_week else [])
        for path in targets:
            yield Output(path, listing_deps(shown), shape,
                         _week(pages, path, first, nav))
        first = after


def _week(pages: Pages, path: str, first: dt.date, nav: tuple[Nav | None, Nav | None]):
    def render() -> bytes:
        model = pages.model
        week = week_layout(model, first)
        # A month that has a page: the first week may begin in the month before it.
        month = max(first.replace(day=1), model.month_range()[0])
        return pages.render(
            "week.html", path, week=week, weekdays=weekdays(model),
            site_tz=model.site_tz, section="week", prev_week=nav[0], next_week=nav[1],
            month_day=month, month_path=paths.month(month),
            canonical=pages.base_url + paths.folder(paths.week(first)))
    return render


def photo_pages(pages: Pages) -> Iterator[Output]:
    events = pages.model.upcoming
    for chunk, pagination in pages.paged(paths.PHOTO, events):
        path = paths.list_page(paths.PHOTO, pagination.number)
        yield Output(path, listing_deps(chunk),
                     f"photo {pagination.number}/{pagination.pages} {[e.id for e in chunk]} "
                     f"{pages.items_stamp(chunk)}",
                     lambda path=path, chunk=chunk, pagination=pagination: pages.render(
                         "photo.html", path, events=chunk, pagination=pagination,
                         section="photo"))
