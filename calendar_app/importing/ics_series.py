"""VEVENTs as events: dates, and a recurring VEVENT with its overrides as one series.

A series is the VEVENT without RECURRENCE-ID (its RRULEs, RDATEs, EXDATEs) plus the
VEVENTs sharing its UID with a RECURRENCE-ID: each becomes a `changes` entry keyed by
the rule date it replaces (docs/recurring-events.md), or a cancelled one. The block is
checked by model/recurrence.py exactly as a file's would be; what it refuses (rules
repeating more than daily, BYHOUR...) leaves the event a single date, with a problem.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import icalendar

from ..model import dates, recurrence
from .batch import Incoming
from .ics_reader import (
    Moment,
    Reader,
    all_of,
    categories_of,
    event_fields,
    id_wish,
    source_id_of,
    text_of,
)
from .ics_text import Block, first, items_of, value_of

_SECOND = dt.timedelta(seconds=1)
_LOCAL_UNTIL_TIME = dt.time(23, 59, 59)


def read_events(reader: Reader, pairs: list[tuple[icalendar.Component, Block]]) -> None:
    """Every VEVENT of the file, grouped by UID, into the reader's batch."""

    groups: dict[str, list[tuple[icalendar.Component, Block]]] = {}
    for component, block in pairs:
        groups.setdefault(source_id_of(component, block), []).append((component, block))
    for uid, items in groups.items():
        masters = _latest([i for i in items if "RECURRENCE-ID" not in i[0]], lambda c: "")
        overrides = _latest([i for i in items if "RECURRENCE-ID" in i[0]], _rid_text)
        for number, (component, block) in enumerate(masters):
            source_id = uid if number == 0 else f"{uid}#{number + 1}"
            if number:
                reader.problem(f"UID {uid[:80]!r} again (first at line {masters[0][1].begin}"
                               f"): imported as a separate event", block.begin, source_id)
            event(reader, component, block, source_id, overrides if number == 0 else [])
        if not masters:  # an invitation to one date of a series kept elsewhere
            for component, block in overrides:
                event(reader, component, block, f"{uid}/{_rid_text(component)}", [])


def _latest(items: list[tuple[icalendar.Component, Block]],
            key: Callable[[icalendar.Component], object]) -> list[tuple[icalendar.Component,
                                                                      Block]]:
    """Of the versions of one VEVENT (same UID and RECURRENCE-ID, different SEQUENCE: a
    producer that keeps history), the latest; versions of equal SEQUENCE all stay."""
    newest: dict[object, int] = {}
    for component, _ in items:
        newest[key(component)] = max(newest.get(key(component), 0), _sequence(component))
    return [(c, b) for c, b in items if _sequence(c) == newest[key(c)]]


def _rid_text(component: icalendar.Component) -> str:
    prop = first(component.get("RECURRENCE-ID"))
    try:
        return prop.to_ical().decode(errors="replace")  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - a broken value: its text is all there is
        return str(prop)


def _sequence(component: icalendar.Component) -> int:
    try:
        return int(str(component.get("SEQUENCE") or 0))
    except ValueError:
        return 0


def end_of(reader: Reader, component: icalendar.Component, block: Block,
           start: dt.datetime, zone: str | None, all_day: bool,
           source_id: str) -> dt.datetime:
    """DTEND, else DTSTART + DURATION, else the start (all-day: its last day 23:59:59,
    as the interface stores a whole day)."""
    dtend, duration = component.get("DTEND"), component.get("DURATION")
    until, length = value_of(dtend), value_of(duration)
    end = start
    if isinstance(until, dt.date):
        end = reader.local(until, zone)
        if all_day:
            end -= _SECOND  # DTEND of a whole day is the next day's start
    elif isinstance(length, dt.timedelta):
        try:
            end = start + length - (_SECOND if all_day else dt.timedelta(0))
        except OverflowError:
            end = dt.datetime.max
    elif all_day:
        end = start + dt.timedelta(days=1) - _SECOND
    if end < start:
        if not all_day or end < start - _SECOND:
            reader.problem("the end is before the start: the event ends at its start",
                           block.line("DTEND" if dtend is not None else "DURATION"), source_id)
        end = start
    if all_day:
        end = dt.datetime.combine(end.date(), _LOCAL_UNTIL_TIME)
    return end


_NOT_IMPORTED = "the event is not imported"
_FIRST_ONLY = "the repetition is not imported: only the first date is"


def _dates_kept(reader: Reader, block: Block, source_id: str,
                *values: tuple[str, dt.datetime], then: str = _NOT_IMPORTED) -> bool:
    for name, when in values:
        if not dates.representable(when):
            reader.problem(f"{name} {when.date().isoformat()} is outside the dates the "
                           f"calendar keeps "
                           f"({dates.KEPT_RANGE}): {then}", block.line(name), source_id)
            return False
    return True


def event(reader: Reader, component: icalendar.Component, block: Block, source_id: str,
          overrides: list[tuple[icalendar.Component, Block]]) -> None:
    """One event (a series when it recurs) into the batch."""

    repeats = bool(component.get("RDATE")) or any(
        r.to_ical().strip() for r in _list(component.get("RRULE")))
    moment = reader.start(component.get("DTSTART"), block, repeats)
    if moment is None:
        reader.problem("no readable DTSTART: the event is not imported", block.line("DTSTART"),
                       source_id)
        return
    end = end_of(reader, component, block, moment.local, moment.zone, moment.all_day,
                 source_id)
    if not _dates_kept(reader, block, source_id, ("DTSTART", moment.local), ("DTEND", end)):
        return
    fields: dict = {"start_date": moment.local, "end_date": end}
    if moment.all_day:
        fields["all_day"] = True
    if moment.zone and moment.zone != reader.calendar_zone:
        fields["timezone"] = moment.zone
    fields.update(event_fields(reader, component, block, source_id))
    wished = id_wish(reader, source_id)
    if wished is not None:
        fields["id"] = wished
    if repeats or overrides:
        found = series(reader, component, block, moment, end, fields, overrides, source_id)
        if found:
            fields["recurrence"] = found
    fields = reader.checked("events", fields, block.begin, source_id)
    reader.batch.records.append(Incoming("events", source_id, fields, block.begin))


# ------------------------------------------------------------------------- series
def _rules(reader: Reader, component: icalendar.Component, moment: Moment,
           zone: dt.tzinfo) -> list[str]:
    """The RRULEs as our files hold them: UNTIL a wall time of the event's zone (RFC
    5545 writes it in UTC beside a zoned start), the end of its day when a date is
    given beside a timed start."""
    texts = []
    for prop in _list(component.get("RRULE")):
        if not prop.to_ical().strip():  # an empty RRULE (seen in the wild): no rule
            continue
        parts = []
        for part in prop.to_ical().decode(errors="replace").split(";"):
            key, _, value = part.partition("=")
            if key.upper() == "UNTIL" and value:
                value = _until(reader, value, moment, zone)
            parts.append(f"{key.upper()}={value}" if value else part)
        texts.append(";".join(parts))
    return texts


def _until(reader: Reader, value: str, moment: Moment, zone: dt.tzinfo) -> str:
    try:
        if len(value) == 8:
            day = dt.datetime.strptime(value, "%Y%m%d")
            return value if moment.all_day else f"{day:%Y%m%d}T235959"
        when = dt.datetime.strptime(value.rstrip("Zz"), "%Y%m%dT%H%M%S")
    except ValueError:
        return value  # parse_rule says what is wrong with it
    if value[-1:] in "Zz" and moment.zone != "UTC":
        try:
            when = dates.from_utc(when, zone)
        except dates.DateError:
            return value
    return f"{when:%Y%m%d}" if moment.all_day else f"{when:%Y%m%dT%H%M%S}"


def _on(reader: Reader, value: dt.date, moment: Moment) -> dt.datetime:
    """A date of the series as a wall time of its zone; beside an all-day start, the
    day a date-time names where it was written (Exchange writes RECURRENCE-ID of an
    all-day date as its midnight in the user's zone)."""
    if moment.all_day:
        return dt.datetime(value.year, value.month, value.day)
    return reader.local(value, moment.zone)


def _list(value: object) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _moments(reader: Reader, component: icalendar.Component, name: str,
             moment: Moment) -> list[tuple[dt.datetime, dt.datetime | dt.timedelta | None]]:
    """RDATE or EXDATE values as wall times of the event's zone, with a PERIOD's end."""
    out = []
    for prop in _list(component.get(name)):
        for item in items_of(prop):
            value = value_of(item)
            end = None
            if isinstance(value, tuple):  # a PERIOD: start and end or duration
                value, end = value
                if isinstance(end, dt.datetime):
                    end = reader.local(end, moment.zone)
            if not isinstance(value, dt.date):
                continue
            when = _on(reader, value, moment)
            out.append((when, end))
    return out


def series(reader: Reader, component: icalendar.Component, block: Block, moment: Moment,
           end: dt.datetime, fields: dict, overrides: list, source_id: str) -> dict | None:
    """The `recurrence:` block, checked as a file's; None (with a problem) when the
    calendar cannot keep it: the event is then its first date only."""
    zone = dates.zone(moment.zone or reader.calendar_zone)
    start = moment.local
    rules = _rules(reader, component, moment, zone)
    rdates: dict[dt.datetime, None] = {}
    changes: dict[str, dict] = {}
    for when, period_end in _moments(reader, component, "RDATE", moment):
        if not _dates_kept(reader, block, source_id, ("RDATE", when), then=_FIRST_ONLY):
            return None
        if when != start:
            rdates[when] = None
        if isinstance(period_end, dt.timedelta):
            period_end = when + period_end
        if period_end is not None and period_end - when != end - start:
            changes[dates.fmt(when)] = {"end_date": period_end}
    exdates = [when for when, _ in _moments(reader, component, "EXDATE", moment)]
    stale: set[str] = set()
    for override, oblock in overrides:
        found = _change(reader, (component, override), oblock, moment, end, fields,
                        source_id)
        if found is not None:
            key, change = found
            changes[key] = {**changes.get(key, {}), **change}
            # an older copy of the whole series, kept for one date of an earlier rule
            if override.get("RRULE") and _sequence(override) < _sequence(component):
                stale.add(key)
    if not rules and not rdates:
        if changes:
            reader.problem("RECURRENCE-ID for an event that does not repeat: the changed "
                           "dates are not imported", overrides[0][1].begin, source_id)
        return None
    raw: dict = {}
    if rules:
        raw["rrule"] = rules if len(rules) > 1 else rules[0]
    if rdates:
        raw["rdate"] = sorted(rdates)
    try:
        found = recurrence.normalize(raw)
        for text in recurrence.rule_texts(found):
            recurrence.parse_rule(text, start, zone)
        return _finish(reader, block, found, (start, end, zone), exdates, changes, stale,
                       source_id)
    except recurrence.RecurrenceError as exc:
        reader.problem(f"the repetition cannot be kept ({exc.message}): only the first "
                       "date is imported", block.line("RRULE" if rules else "RDATE"),
                       source_id)
        return None


def _finish(reader: Reader, block: Block, found: dict,
            span: tuple[dt.datetime, dt.datetime, dt.tzinfo], exdates: list[dt.datetime],
            changes: dict[str, dict], stale: set[str], source_id: str) -> dict:
    """Exclusions and changes added where they name a date of the rules; a change of a
    date the rules do not give is an extra date (as `recurring-ical-events` lists it),
    unless it comes from an older version of the series."""
    start, end, zone = span
    asked = [w for w in exdates if w >= start] + [
        dt.datetime.fromisoformat(k) for k in changes]
    furthest = max(asked, default=start)
    given = {o.original for o in recurrence.expand(found, start, end, furthest, zone)}
    kept_out = []
    for when in sorted(set(exdates)):
        if when in given:
            kept_out.append(when)
        else:
            reader.problem(f"EXDATE {dates.fmt(when)} is no date of the repetition: "
                           "ignored", block.line("EXDATE"), source_id)
    extra = []
    for key in list(changes):
        when = dt.datetime.fromisoformat(key)
        if when in kept_out:
            reader.problem(f"RECURRENCE-ID {key} is also excluded (EXDATE): the date "
                           "stays out", block.line("EXDATE"), source_id)
            del changes[key]
        elif when < start:
            reader.problem(f"RECURRENCE-ID {key} is before the series starts: not "
                           "imported", block.begin, source_id)
            del changes[key]
        elif when not in given and key in stale:
            reader.problem(f"RECURRENCE-ID {key} belongs to an older version of the "
                           "repetition (a lower SEQUENCE): not imported", block.begin,
                           source_id)
            del changes[key]
        elif when not in given:
            extra.append(when)
    if extra:
        found["rdate"] = sorted({*found.get("rdate", ()), *extra})
    if kept_out:
        found["exdate"] = kept_out
    if changes:
        found["changes"] = changes
    found = recurrence.normalize(found)
    recurrence.validate(found, start, zone)
    return found


def _change(reader: Reader, pair: tuple[icalendar.Component, icalendar.Component],
            oblock: Block, moment: Moment, end: dt.datetime, fields: dict,
            source_id: str) -> tuple[str, dict] | None:
    """The `changes` entry an override makes (None when it changes nothing)."""

    master, override = pair

    rid = first(override.get("RECURRENCE-ID"))
    original = value_of(rid)
    when = _on(reader, original, moment) if isinstance(original, dt.date) else None
    if when is None or not dates.representable(when):
        reader.problem("RECURRENCE-ID is not a date the calendar keeps: the changed date is "
                       "not imported", oblock.line("RECURRENCE-ID"), source_id)
        return None
    key = dates.fmt(when)
    if str(rid.params.get("RANGE") or "").upper() == "THISANDFUTURE":
        reader.problem(f"RECURRENCE-ID {key} with RANGE=THISANDFUTURE: applied to that "
                       "date only", oblock.line("RECURRENCE-ID"), source_id)
    if str(override.get("STATUS") or "").upper() == "CANCELLED":
        return key, {"cancelled": True}
    change: dict = {}
    start_prop = override.get("DTSTART")
    moved = value_of(start_prop)
    if isinstance(moved, dt.date) and moment.all_day != (
            not isinstance(moved, dt.datetime)):
        reader.problem(f"RECURRENCE-ID {key}: the date is made "
                       f"{'timed' if moment.all_day else 'all-day'} at its source; the dates "
                       f"of a series here are all {'all-day' if moment.all_day else 'timed'}",
                       oblock.line("DTSTART"), source_id)
    begin = _on(reader, moved, moment) if isinstance(moved, dt.date) else when
    finish = end_of(reader, override, oblock, begin, moment.zone, moment.all_day, source_id)
    if not _dates_kept(reader, oblock, source_id, ("DTSTART", begin), ("DTEND", finish),
                       then="the changed date is not imported"):
        return None
    if begin != when:
        change["start_date"] = begin
    if finish - begin != end - moment.local:
        change["end_date"] = finish
    for name, field in (("SUMMARY", "title"), ("DESCRIPTION", "description"),
                        ("URL", "website")):
        value = text_of(override, name)
        if value and value != fields.get(field) and not (name == "URL" and (
                reader.own or reader.plugin)):
            change[field] = value
    _series_only(reader, master, override, oblock, key, source_id)
    _place_of_one_date(reader, (master, override), oblock, key, source_id)
    change = reader.checked("events", change, oblock.begin, source_id)
    return (key, change) if change else None


def _series_only(reader: Reader, master: icalendar.Component,
                 override: icalendar.Component, oblock: Block, key: str,
                 source_id: str) -> None:
    """Organizers and categories belong to the series here: one date's are reported."""

    def organizers(component: icalendar.Component) -> list[str]:
        return [str(p).strip().lower() for p in all_of(component, "ORGANIZER")]

    for name, read in (("CATEGORIES", categories_of), ("ORGANIZER", organizers)):
        mine = read(override)
        if mine and mine != read(master):
            reader.problem(f"RECURRENCE-ID {key}: {name} of one date cannot differ from "
                           "the series'; the series' are kept", oblock.line(name), source_id)


def _place_of_one_date(reader: Reader, pair: tuple[icalendar.Component,
                                                    icalendar.Component],
                       oblock: Block, key: str, source_id: str) -> None:
    """One date at another place is reported, not kept: a `changes` entry names its
    venue by slug, and the importer resolves links of the event's own fields only (a
    Ref left in a change would be written into the file as text)."""

    master, override = pair
    place = " ".join(text_of(override, "LOCATION").split())
    if place and place != " ".join(text_of(master, "LOCATION").split()):
        reader.problem(f"RECURRENCE-ID {key}: LOCATION {place[:80]!r} differs from the "
                       "series'; the series' venue is kept for that date",
                       oblock.line("LOCATION"), source_id)
