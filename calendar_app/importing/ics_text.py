"""The raw text of an iCalendar file: its size, its encoding, its structure, its lines.

The `icalendar` package parses values but says nothing of where they were; this scan
finds where each VEVENT begins and each of its properties, so every problem can name
its line, and refuses what is no calendar or is cut short before `icalendar` sees it
(a truncated feed must not look like a feed whose later events were deleted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A feed of 5,000 events is about 5 MB; far beyond that it is no calendar feed (or a
# decade of someone's meetings), and parsing it would take the better part of a minute.
MAX_BYTES = 20 * 1024 * 1024
# Components nest two deep in practice (VCALENDAR > VEVENT > VALARM); deeper nesting is
# hostile and would recurse in the parser.
MAX_DEPTH = 8
_LINE_BREAK = re.compile(r"\r\n|\n|\r")
# A fold followed by UTF-8 continuation bytes: the producer folded at 75 octets inside a
# character (RFC 5545 says not to; some do). Moved after the character, the line
# numbers stay and unfolding gives the same text.
_FOLD_IN_CHARACTER = re.compile(rb"(\r\n|\n|\r)([ \t])([\x80-\xbf]+)")
_NAME = re.compile(r"[A-Za-z0-9-]+")
# What no one here reads, cut before the `icalendar` package parses it (its parsing is
# most of an import's time; in a Google or Outlook feed a third of the lines are
# these): the producer's bookkeeping (ics_reader._BOOKKEEPING but SEQUENCE, which
# tells versions apart), its X- properties but those read, and alarms. A property's
# folded lines go with it; the line numbers of problems come from the text as given.
_UNREAD_PROPERTY = re.compile(
    r"^(?:DTSTAMP|CREATED|LAST-MODIFIED|TRANSP|PRIORITY|COLOR|X-(?!WR-|LIC-LOCATION|"
    r"GOOGLE-CONFERENCE|APPLE-STRUCTURED-LOCATION)[A-Za-z0-9-]*)[;:].*\n(?:[ \t].*\n)*",
    re.MULTILINE | re.IGNORECASE)
_ALARM = re.compile(r"^BEGIN:VALARM\r?\n.*?^END:VALARM[ \t]*\r?\n",
                    re.MULTILINE | re.IGNORECASE | re.DOTALL)


class IcsError(ValueError):
    """An iCalendar input that cannot be read at all. The message names the source and,
    when there is one, the line."""

    def __init__(self, origin: str, message: str, line: int | None = None) -> None:
        self.origin = origin
        self.reason = message
        self.line = line
        where = f"{origin}, line {line}" if line else origin
        super().__init__(f"{where}: {message}")


@dataclass
class Block:
    """Where one VEVENT is in the text: its BEGIN line and each property's first line."""

    begin: int
    properties: dict[str, int] = field(default_factory=dict)

    def line(self, name: str) -> int:
        return self.properties.get(name.upper(), self.begin)


def decode(data: bytes, origin: str) -> tuple[str, str]:
    """The text of the file and a note ("" or why it was read as Windows-1252)."""
    if len(data) > MAX_BYTES:
        raise IcsError(origin, f"the file is {len(data) / 2**20:.1f} MB; iCalendar files of "
                               f"more than {MAX_BYTES // 2**20} MB are not read")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    data = _FOLD_IN_CHARACTER.sub(rb"\3\1\2", data)
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        # RFC 5545 says UTF-8; older Outlook exports are Windows-1252
        return data.decode("cp1252", errors="replace"), (
            f"not UTF-8 (first at line {line}): read as Windows-1252")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Unfolded content lines (RFC 5545 3.1), each with the number of its first line."""
    out: list[tuple[int, str]] = []
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if line[:1] in (" ", "\t") and out:
            out[-1] = (out[-1][0], out[-1][1] + line[1:])
        elif line.strip():
            out.append((number, line))
    return out


@dataclass
class Layout:
    """Where things are in the text: each VEVENT, the calendar's own properties, and
    the other components a calendar holds (to-dos, journal entries...)."""

    vevents: list[Block] = field(default_factory=list)
    calendar: Block = field(default_factory=lambda: Block(1))
    others: list[tuple[str, int]] = field(default_factory=list)


# Components a calendar holds that are no events, and no part of one.
_NOT_EVENTS = ("VTODO", "VJOURNAL", "VFREEBUSY", "VAVAILABILITY")


def scan(text: str, origin: str) -> Layout:
    """The VEVENTs of the text in order, and the rest of its layout. Raises IcsError
    for text that is not iCalendar, components that do not close (a truncated file)
    or nest too deep."""
    lines = _logical_lines(text)
    if not lines or lines[0][1].strip().upper() != "BEGIN:VCALENDAR":
        start = lines[0][1][:40] if lines else ""
        raise IcsError(origin, f"not an iCalendar file: it starts with {start!r}, not "
                               "BEGIN:VCALENDAR", lines[0][0] if lines else None)
    layout = Layout()
    blocks = layout.vevents
    stack: list[tuple[str, int]] = []
    for number, line in lines:
        name, _, value = line.partition(":")
        name = name.split(";", 1)[0].strip().upper()
        kind = value.strip().upper()
        if name == "BEGIN":
            if not _NAME.fullmatch(kind):
                raise IcsError(origin, f"BEGIN without a component name: {line[:40]!r}",
                               number)
            if len(stack) >= MAX_DEPTH:
                raise IcsError(origin, f"components nested more than {MAX_DEPTH} deep",
                               number)
            stack.append((kind, number))
            if kind == "VEVENT":
                blocks.append(Block(number))
            elif kind in _NOT_EVENTS and len(stack) == 2:
                layout.others.append((kind, number))
        elif name == "END":
            if not stack or stack[-1][0] != kind:
                opened = f"BEGIN:{stack[-1][0]} of line {stack[-1][1]}" if stack else \
                    "nothing"
                raise IcsError(origin, f"END:{kind} closes {opened}: the file is damaged",
                               number)
            stack.pop()
            if not stack:
                continue
        elif not stack:
            raise IcsError(origin, f"{line[:40]!r} is outside any component", number)
        elif stack[-1][0] == "VEVENT" and blocks:
            blocks[-1].properties.setdefault(name, number)
        elif len(stack) == 1:
            layout.calendar.properties.setdefault(name, number)
    if stack:
        kind, number = stack[-1]
        raise IcsError(origin, f"the file is truncated: BEGIN:{kind} of line {number} "
                               "is never closed", number)
    return layout


def without_unread(text: str) -> str:
    """The text for the parser: properties and alarms no one reads here taken out."""
    return _UNREAD_PROPERTY.sub("", _ALARM.sub("", text))


def value_of(prop: object) -> object:
    """A property's value (`dt` of dates, durations, periods), None when it is missing
    or broken: icalendar keeps an unreadable value as vBroken, which raises when
    asked; the problem is reported from the component's errors."""
    if isinstance(prop, list):  # the property given twice: the first counts
        prop = prop[0] if prop else None
    if prop is None:
        return None
    try:
        return prop.dt  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - vBroken raises its own error type
        return None


def items_of(prop: object) -> list:
    """The values of a list property (RDATE, EXDATE), none when it is broken."""
    try:
        return list(prop.dts)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - vBroken raises its own error type
        return []


def first(prop: object) -> object:
    """A property given once, or the first of several."""
    return (prop[0] if prop else None) if isinstance(prop, list) else prop
