"""The recurrence rule builder's form (the `recurrence` form control): the builder's
inputs for a `recurrence:` block, and the block a posted builder gives.

The builder writes the readable form of the block (`every`, `on`, `until`, `count`,
docs/recurring-events.md) with `rdate`, `exdate` and per-date `changes`; a block written
as RRULE text is shown and posted back as that text. Inputs are named
`<field>.<part>` (`recurrence.every`); per-date changes are parallel lists
(`recurrence.change_date`, `recurrence.change_action`, `recurrence.change_value`).
What the builder posts is checked by the Recurrence field type like any request value.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from . import dates
from .formats import digits
from .recurrence import WEEKDAYS

UNITS = ("day", "week", "month", "year")
ORDINALS = ("first", "second", "third", "fourth", "last")
ENDS = ("never", "until", "count")
ACTIONS = ("cancel", "move", "title")  # what a per-date change does
_EVERY = re.compile(r"(?:(\d+)\s+)?(day|week|month|year)s?")
_NTH = re.compile(r"(first|second|third|fourth|fifth|last)\s+(\w+)")
_WALL = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?)?")


def show(block: dict | None) -> dict[str, Any]:
    """The builder's input values for a block (None: not recurring)."""
    out: dict[str, Any] = {"kind": "none", "interval": "1", "unit": "week", "weekdays": [],
                           "nth": "", "nth_day": "", "monthday": "", "end": "never",
                           "until": "", "count": "", "rrule": "", "rdate": "",
                           "exdate": "", "changes": []}
    if not block:
        return out
    if "rrule" in block:
        rules = block["rrule"]
        out.update(kind="rrule", rrule="\n".join(rules if isinstance(rules, list) else [rules]))
    elif "every" in block:
        out["kind"] = "rule"
        found = _EVERY.fullmatch(str(block["every"]).strip().lower())
        if found:
            out.update(interval=found[1] or "1", unit=found[2])
        _show_on(block.get("on"), out)
        if block.get("until") is not None:
            until = block["until"]
            out.update(end="until", until=until.strftime("%Y-%m-%d")
                       if isinstance(until, dt.date) else str(until)[:10])
        elif block.get("count") is not None:
            out.update(end="count", count=str(block["count"]))
    else:
        out["kind"] = "dates"
    out["rdate"] = "\n".join(dates.fmt(d) for d in block.get("rdate", ()))
    out["exdate"] = "\n".join(dates.fmt(d) for d in block.get("exdate", ()))
    for when, change in block.get("changes", {}).items():
        if change.get("cancelled"):
            out["changes"].append((when, "cancel", ""))
        if change.get("start_date") is not None:
            out["changes"].append((when, "move", dates.fmt(change["start_date"])))
        if change.get("title") is not None:
            out["changes"].append((when, "title", str(change["title"])))
    return out


def reshow(form: Any, name: str) -> dict[str, Any]:
    """The builder's inputs as posted (a refused form is shown again as it was sent)."""
    out = show(None)
    for key in out:
        if key in ("weekdays", "changes"):
            continue
        value = form.get(f"{name}.{key}")
        if value is not None:
            out[key] = str(value)
    out["weekdays"] = [d for d in form.getlist(f"{name}.weekdays") if d in WEEKDAYS]
    rows = zip(form.getlist(f"{name}.change_date"), form.getlist(f"{name}.change_action"),
               form.getlist(f"{name}.change_value"), strict=False)
    out["changes"] = [(w, a, v) for w, a, v in rows if w.strip()]
    return out


def _show_on(on: object, out: dict[str, Any]) -> None:
    for item in on if isinstance(on, list) else [] if on is None else [on]:
        if isinstance(item, int):
            out["monthday"] = str(item)
            continue
        word = str(item).strip().lower()
        found = _NTH.fullmatch(word)
        if found:
            out["nth"], out["nth_day"] = found[1], found[2]
        elif word in WEEKDAYS:
            out["weekdays"].append(word)


def read(form: Any, name: str) -> object:
    """The block a posted builder gives: a dict for the Recurrence type to check, None
    (not recurring), or the raw RRULE text. Nothing here refuses: odd input goes
    through so that the type answers with the interface's message."""
    def one(part: str) -> str:
        return str(form.get(f"{name}.{part}") or "").strip()

    kind = one("kind")
    if kind in ("", "none"):
        return None
    block: dict[str, Any] = {}
    if kind == "rrule":
        rules = [line.strip() for line in one("rrule").splitlines() if line.strip()]
        block["rrule"] = rules[0] if len(rules) == 1 else rules
    elif kind == "rule":
        interval, unit = one("interval") or "1", one("unit") or "week"
        block["every"] = unit if interval == "1" else f"{interval} {unit}s"  # as people write
        on: list[Any] = [d for d in form.getlist(f"{name}.weekdays") if d]
        if one("nth") and one("nth_day"):
            on.append(f"{one('nth')} {one('nth_day')}")
        if one("monthday"):
            day = one("monthday")
            on.append(int(day) if digits(day.removeprefix("-")) and len(day) < 4 else day)
        if on:
            block["on"] = on[0] if len(on) == 1 else on
        if one("end") == "until":
            # A bare date means that whole day: written so, the file says it plainly.
            block["until"] = f"{one('until')} 23:59:59" if _WALL.fullmatch(one("until")) \
                and ":" not in one("until") else one("until")
        elif one("end") == "count":
            count = one("count")
            block["count"] = int(count) if digits(count) and len(count) < 7 else count
    for key in ("rdate", "exdate"):
        lines = [_wall(line) for line in one(key).splitlines() if line.strip()]
        if lines:
            block[key] = lines
    changes = _changes(form, name)
    if changes:
        block["changes"] = changes
    return block


def _changes(form: Any, name: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    rows = zip(form.getlist(f"{name}.change_date"), form.getlist(f"{name}.change_action"),
               form.getlist(f"{name}.change_value"), strict=False)
    for when, action, value in rows:
        when, value = _wall(when), value.strip()
        if not when:
            continue  # the empty row offered for a new change
        change = out.setdefault(when, {})
        if action == "cancel":
            change["cancelled"] = True
        elif action == "move":
            change["start_date"] = _wall(value)
        elif action == "title":
            change["title"] = value
        else:
            change[str(action)[:40]] = value  # refused by the type with its message
    return out


def _wall(text: str) -> str:
    """A date-time input's or a typed line's wall time as the files write it."""
    text = text.strip()
    found = _WALL.fullmatch(text)
    if not found or not found[2]:
        return text
    return f"{found[1]} {found[2]}{found[3] or ':00'}"
