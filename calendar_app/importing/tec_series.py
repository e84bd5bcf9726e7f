"""A plugin site's recurring series (Events Calendar Pro) as one series here.

Pro lists each occurrence as an event of its own (a child post, or since its custom
tables a "provisional post" with an id of its own), every one with the series' slug,
fields and links and its own dates. WordPress gives no two other posts one slug, so
events listed with one slug are one series. It becomes one event: the first
occurrence's fields, and a `recurrence:` block that gives exactly the listed dates,
never more, never fewer:

- a rule (`FREQ=...;COUNT=n`: every n days or weeks, the same day or weekday of every
  n months, every n years) when expanding it gives the listed starts and nothing else;
- else the other starts as `rdate`.

An occurrence whose length, title, description, excerpt, cost or website differs is a
`changes` entry of its date. What a change cannot hold here (another venue, other
organizers or terms, another status) is reported, naming the date; the date is kept
with the series' values. Its source id is `series:<slug>`: Pro renumbers provisional
ids when a series is edited, the slug stays.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from ..model import dates, recurrence
from .batch import Batch, Incoming, Problem

_CHANGES = ("title", "description", "excerpt", "cost", "website")
# The series' own: a date that differs in one of these is reported, not kept.
_SERIES_ONLY = ("venue", "organizer", "categories", "tags", "status", "all_day", "timezone",
                "featured", "sticky", "hide_from_listings", "online_url", "image")
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def add_series(batch: Batch, items: list[dict], event: Callable[[dict], Incoming]) -> None:
    """Events of `items` (no series of ours: no `series_id`) into `batch`, those sharing
    a slug as one series each; `event` turns a listed item into an Incoming."""
    groups: dict[object, list[dict]] = {}
    for item in items:
        groups.setdefault(item.get("slug") or ("id", item.get("id")), []).append(item)
    for slug, group in groups.items():
        records = [event(item) for item in group]
        dated = [r for r in records if isinstance(r.fields.get("start_date"), dt.datetime)]
        if len(dated) < 2 or not isinstance(slug, str):
            batch.records += records
            continue
        # Without a readable start a date is no occurrence: on its own, for the
        # importer to report, never dropped.
        batch.records += [r for r in records if r not in dated]
        batch.records.append(series(batch, slug, dated))


def series(batch: Batch, slug: str, occurrences: list[Incoming]) -> Incoming:
    """One event for the occurrences of a series (at least two with a start_date,
    any order)."""
    dated = sorted(occurrences, key=lambda o: (o.fields["start_date"], str(o.source_id)))
    first = dated[0].fields
    start, end = first["start_date"], first.get("end_date") or first["start_date"]
    starts = sorted({o.fields["start_date"] for o in dated})
    block: dict = {}
    rule = exact_rule(starts, end - start)
    if rule:
        block["rrule"] = rule
    else:
        block["rdate"] = starts[1:]
    changes = {}
    for other in dated[1:]:
        change = _change(batch, slug, first, other.fields, end - start)
        if change and dates.fmt(other.fields["start_date"]) not in changes:
            changes[dates.fmt(other.fields["start_date"])] = change
    if changes:
        block["changes"] = changes
    return Incoming("events", f"series:{slug}", {**first, "recurrence": block})


def _change(batch: Batch, slug: str, first: dict, fields: dict,
            duration: dt.timedelta) -> dict:
    """The `changes` entry of one occurrence (empty when it is as the series)."""
    when = dates.fmt(fields["start_date"])
    change: dict = {}
    end = fields.get("end_date") or fields["start_date"]
    if end - fields["start_date"] != duration and end >= fields["start_date"]:
        change["end_date"] = end
    for name in _CHANGES:
        if fields.get(name) != first.get(name):
            if fields.get(name) is None:
                batch.problems.append(Problem(
                    f"{slug} on {when}: no {name} on that date; the series' is kept"))
            else:
                change[name] = fields[name]
    for name in _SERIES_ONLY:
        if fields.get(name) != first.get(name):
            batch.problems.append(Problem(
                f"{slug} on {when}: another {name} than the series' first date; one date "
                f"cannot have its own {name} here, the series' is kept"))
    return change


def exact_rule(starts: list[dt.datetime], duration: dt.timedelta) -> str | None:
    """An RRULE giving exactly `starts` (sorted, distinct wall times), None if none of
    the simple ones does. Each candidate is checked by expanding it."""
    if len(starts) < 2:
        return None
    first, second = starts[0], starts[1]
    candidates = []
    gap = second - first
    if gap.seconds == 0 and gap.days % 7 == 0:
        candidates.append(("WEEKLY", gap.days // 7, ""))
    if gap.seconds == 0:
        candidates.append(("DAILY", gap.days, ""))
    months = (second.year - first.year) * 12 + second.month - first.month
    if months > 0:
        if months % 12 == 0:
            candidates.append(("YEARLY", months // 12, ""))
        candidates.append(("MONTHLY", months, ""))
        weekday = _WEEKDAYS[first.weekday()]
        last = (first + dt.timedelta(days=7)).month != first.month
        candidates.append(("MONTHLY", months, f";BYDAY={(first.day - 1) // 7 + 1}{weekday}"))
        if last:
            candidates.append(("MONTHLY", months, f";BYDAY=-1{weekday}"))
    for freq, interval, by in candidates:
        rule = f"FREQ={freq}{f';INTERVAL={interval}' if interval > 1 else ''}{by}" \
               f";COUNT={len(starts)}"
        try:
            block = recurrence.normalize({"rrule": rule})
            got = [o.start for o in recurrence.expand(block, first, first + duration,
                                                      starts[-1])]
        except recurrence.RecurrenceError:
            continue
        if got == starts:
            return rule
    return None
