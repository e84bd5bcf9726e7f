"""The month view's grid: weeks of seven days, each day with the events it holds."""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass, field

from .model import EventView, SiteModel

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass
class Slot:
    event: EventView
    role: str  # "single", "start", "middle" or "end" of a multi-day event


@dataclass
class Cell:
    day: dt.date
    in_month: bool
    today: bool
    slots: list[Slot] = field(default_factory=list)


def _role(event: EventView, day: dt.date) -> str:
    if not event.multi_day:
        return "single"
    if day == event.first_day:
        return "start"
    return "end" if day == event.last_day else "middle"


def month_grid(model: SiteModel, first: dt.date) -> list[list[Cell]]:
    """Weeks (Monday first) covering the month that starts on `first`."""
    weeks = calendar.Calendar(firstweekday=0).monthdatescalendar(first.year, first.month)
    return [[Cell(day, day.month == first.month, day == model.today,
                  [Slot(e, _role(e, day)) for e in model.by_day.get(day, ())])
             for day in week] for week in weeks]


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
