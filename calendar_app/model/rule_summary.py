"""Recurrence rules in English words, for the commands (`diff`'s notes): a rule's
parts (`rule_parts`, which editing/rule_words.py puts in the editor's language) and
the change of an event's repetition."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dateutil import rrule as du

from .recurrence import (
    _FREQ_UNITS,
    _ORDINAL_WORDS,
    WEEKDAYS,
    expand,
    parse_rule,
    rule_texts,
    taken_out,
)


@dataclass(frozen=True)
class RuleParts:
    """What a rule says, for putting it in words (here in English, for the commands;
    editing/rule_words.py in the editor's language)."""
    unit: str  # day | week | month | year
    interval: int
    days: tuple[tuple[int, int], ...]  # (weekday, 0 = Monday; n-th in the month, 0 = every)
    monthdays: tuple[int, ...]
    count: int | None
    until: dt.date | None


def rule_parts(text: str, start: dt.datetime) -> RuleParts:
    rule = parse_rule(text, start)
    original = rule._original_rule
    return RuleParts(
        _FREQ_UNITS[du.FREQNAMES[rule._freq]], rule._interval,
        tuple((d.weekday, d.n or 0) for d in original.get("byweekday") or ()),
        tuple(original.get("bymonthday") or ()), rule._count or None,
        rule._until.date() if rule._until else None)


def describe_rule(text: str, start: dt.datetime) -> str:
    """'every Tuesday 19:00', 'every 2 weeks on Monday, Thursday 09:30, 10 times'."""
    parts = rule_parts(text, start)
    unit, interval = parts.unit, parts.interval
    words = []
    names = [(f"{_ORDINAL_WORDS.get(n, str(n))} " if n else "")
             + WEEKDAYS[day].capitalize() for day, n in parts.days]
    if unit == "week" and interval == 1 and names:
        words.append(f"every {', '.join(names)}")
    else:
        words.append(f"every {interval} {unit}s" if interval > 1 else f"every {unit}")
        if names:
            words.append(f"on the {', '.join(names)}" if any(n for _d, n in parts.days)
                         else f"on {', '.join(names)}")
    if parts.monthdays:
        words.append("on day " + ", ".join(str(d) for d in parts.monthdays))
    words.append(start.strftime("%H:%M"))
    phrase = " ".join(words)
    if parts.count:
        phrase += f", {parts.count} times"
    if parts.until:
        phrase += f", until {parts.until.isoformat()}"
    return phrase


def describe(block: dict, start: dt.datetime) -> str:
    """The block's rules in words; extra dates are counted."""
    parts = [describe_rule(t, start) for t in rule_texts(block)]
    if block.get("rdate"):
        n = len(block["rdate"])
        parts.append(f"{n} extra date{'s' if n != 1 else ''}")
    return "; ".join(parts) or "once"


def _starts(block: dict | None, start: dt.datetime, end: dt.datetime,
            until: dt.datetime) -> set[dt.datetime]:
    if not block:
        return {start}
    return {o.start for o in expand(block, start, end, until) if not o.cancelled}


def differences(old: tuple[dict | None, dt.datetime, dt.datetime],
                new: tuple[dict | None, dt.datetime, dt.datetime],
                until: dt.datetime) -> list[str]:
    """A change of an event's repetition in words, for review: 'every Tuesday 19:00 →
    every Wednesday 19:00', 'cancelled on 2027-03-02', '3 occurrences removed'.
    Each side is (block or None, start, end); occurrences are counted to `until`."""
    (old_block, old_start, old_end), (new_block, new_start, new_end) = old, new
    if not old_block and not new_block:
        return []
    notes = []
    before = describe(old_block, old_start) if old_block else "once"
    after = describe(new_block, new_start) if new_block else "once"
    if before != after:
        notes.append(f"{before} → {after}")
    old_off, new_off = taken_out(old_block), taken_out(new_block)
    notes += [f"cancelled on {d:%Y-%m-%d}" for d in sorted(new_off - old_off)]
    notes += [f"reinstated on {d:%Y-%m-%d}" for d in sorted(old_off - new_off)]
    was = _starts(old_block, old_start, old_end, until)
    now = _starts(new_block, new_start, new_end, until)
    removed = len(was - now - new_off)  # a cancellation is already said
    added = len(now - was - old_off)
    for count, verb in ((removed, "removed"), (added, "added")):
        if count:
            notes.append(f"{count} occurrence{'s' if count != 1 else ''} {verb}")
    return notes
