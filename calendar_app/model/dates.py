"""Dates and timezones: parsing client input, converting between local and UTC.

Everything here is pure. Stored and returned datetimes are *naive* wall-clock values;
the timezone travels next to them (as a name in the record). "Now" is always passed in
by the caller, so there is exactly one clock in the app and tests can fix it.

`parse_datetime` understands the subset of PHP `strtotime` syntax that clients of the
plugin actually send (absolute dates in the common layouts, times, Unix timestamps and
relative phrases such as "next wednesday 4pm"). Two deliberate deviations from the
plugin (spec 4.3, open point 7.5): an explicit offset or `Z` in the text and a numeric
timestamp are treated as instants and converted into the target zone instead of being
reinterpreted as local wall time.
"""

from __future__ import annotations

import math
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from .date_words import END, MONTH, MONTH_NAMES, ORD, UNIT, UNITS, WEEKDAY, WEEKDAYS, year2

__all__ = [
    "DateError",
    "abbreviation",
    "details",
    "fmt",
    "from_utc",
    "in_dst_gap",
    "offset_iso",
    "parse_datetime",
    "parse_file_time",
    "representable",
    "to_utc",
    "zone",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Longer input is never a date a client meant to send; refusing it early keeps the
# regex scanner cheap on hostile input.
_MAX_INPUT = 120


class DateError(ValueError):
    """A date, time or timezone the calendar cannot understand."""


# --------------------------------------------------------------------------- zones

# WordPress "manual offset" zones: UTC+5, UTC-3.5, UTC+5.75 (and we also take +5:30).
_OFFSET_NAME = re.compile(r"UTC([+-])(\d{1,2})(?:\.(\d{1,2})|:(\d{2}))?", re.ASCII)
# Shape of an IANA key; checked before touching zoneinfo so path tricks never reach it.
_IANA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+){0,3}", re.ASCII)


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    # The tz database's own list: rejects directories ("America"), "posixrules" and
    # anything else that merely happens to be a file under the zoneinfo path.
    return frozenset(zoneinfo.available_timezones())


def is_offset_name(name: str) -> bool:
    """True for WordPress offset zone names such as ``UTC+5`` or ``UTC-3.5``."""
    return isinstance(name, str) and _OFFSET_NAME.fullmatch(name) is not None


@lru_cache(maxsize=512)
def zone(name: str) -> tzinfo:
    """The tzinfo for an IANA name, ``UTC``, or a WordPress offset name (``UTC+5.5``)."""
    if not isinstance(name, str) or not name:
        raise DateError("empty timezone")
    if name == "UTC":
        return UTC
    m = _OFFSET_NAME.fullmatch(name)
    if m:
        sign, hours, frac, mins = m.groups()
        minutes = int(hours) * 60
        if frac is not None:
            # WordPress writes fractions of an hour: .5 -> 30 min, .75 -> 45 min.
            minutes += round(int(frac) / 10 ** len(frac) * 60)
        elif mins is not None:
            if int(mins) >= 60:
                raise DateError(f"invalid timezone offset: {name}")
            minutes += int(mins)
        if minutes > 14 * 60:
            raise DateError(f"invalid timezone offset: {name}")
        delta = timedelta(minutes=-minutes if sign == "-" else minutes)
        # Named after the input so tzname() echoes what the editor chose.
        return timezone(delta, name)
    if len(name) > 64 or not _IANA_NAME.fullmatch(name) or name not in _known_zones():
        raise DateError(f"unknown timezone: {name[:64]}")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise DateError(f"unknown timezone: {name}") from exc


# ---------------------------------------------------------------- the range kept

# The wall times the calendar keeps: years 1000 to 9998. WordPress dates (MySQL
# DATETIME) start at 1000; ending a year before Python's datetime.max leaves room for
# what is computed from a date without overflowing: its UTC form (offsets are under a
# day, so it stays within a day of this range), the next month's grid, an all-day end,
# feed windows. One rule on the wall time, so a file reads the same whatever the
# calendar's timezone.
MIN_KEPT = datetime(1000, 1, 1)
MAX_KEPT = datetime(9998, 12, 31, 23, 59, 59)
KEPT_RANGE = "years 1000 to 9998"


def representable(local: datetime) -> bool:
    """True when the calendar can keep (and serve, list, build) this naive wall time."""
    return MIN_KEPT <= local.replace(tzinfo=None) <= MAX_KEPT


# ---------------------------------------------------------------- local <-> UTC


def to_utc(local: datetime, tz: tzinfo) -> datetime:
    """Naive UTC for a naive wall time in `tz`.

    Ambiguous and nonexistent wall times use fold=0 (the offset in force before the
    transition), which is also what PHP does, so results are deterministic.
    """
    try:
        aware = local.replace(tzinfo=tz, fold=0).astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise DateError("date out of range") from exc
    return aware.replace(tzinfo=None)


def from_utc(utc: datetime, tz: tzinfo) -> datetime:
    """Naive wall time in `tz` for a naive UTC datetime."""
    try:
        local = utc.replace(tzinfo=UTC).astimezone(tz)
    except (OverflowError, ValueError) as exc:
        raise DateError("date out of range") from exc
    # Drop fold too: stored wall times are plain naive values.
    return local.replace(tzinfo=None, fold=0)


def in_dst_gap(local: datetime, tz: tzinfo) -> bool:
    """True when the wall time does not exist in `tz` (skipped by a DST change)."""
    try:
        back = from_utc(to_utc(local, tz), tz)
    except DateError:
        return False
    return back != local.replace(tzinfo=None)


def abbreviation(local: datetime, tz: tzinfo, name: str) -> str:
    """Zone abbreviation at `local`, like PHP's ``T`` format (EST, CET, +03, UTC+5)."""
    if is_offset_name(name):
        # PHP prints offset zones by their offset; the plugin repeats the stored name.
        return name
    try:
        abbr = local.replace(tzinfo=tz, fold=0).tzname()
    except (OverflowError, ValueError):
        abbr = None
    return abbr or ""


def offset_iso(local: datetime, tz: tzinfo) -> str:
    """ISO 8601 with offset, e.g. ``2026-11-22T09:00:00+00:00`` (JSON-LD dates)."""
    return iso_with_offset(fmt(local), local.replace(tzinfo=tz, fold=0).utcoffset()
                           or timedelta(0))


def iso_with_offset(text: str, offset: timedelta) -> str:
    """`offset_iso` of a wall time from its `fmt` text and its UTC offset, when both are
    known: `local - to_utc(local, tz)` is the offset `offset_iso` finds (fold=0 both)."""
    total = int(offset.total_seconds())
    sign = "-" if total < 0 else "+"
    # Whole minutes only, as PHP's "c" format (historic LMT offsets carry seconds).
    hours, minutes = divmod(abs(total) // 60, 60)
    return f"{text.replace(' ', 'T')}{sign}{hours:02d}:{minutes:02d}"


def fmt(dt: datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS``, the only date format the API emits."""
    # Manual formatting: strftime("%Y") does not zero-pad years < 1000 on glibc.
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d} {dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    )


def fmt_details(dt: datetime) -> tuple[str, dict[str, str]]:
    """`fmt(dt)` and `details(dt)` from one formatting: the details are slices of the
    text (its year always has four digits)."""
    text = fmt(dt)
    return text, {"year": text[:4], "month": text[5:7], "day": text[8:10],
                  "hour": text[11:13], "minutes": text[14:16], "seconds": text[17:19]}


def details(dt: datetime) -> dict[str, str]:
    """The ``*_date_details`` object: zero-padded strings, keys in the plugin's order."""
    return {
        "year": f"{dt.year:04d}",
        "month": f"{dt.month:02d}",
        "day": f"{dt.day:02d}",
        "hour": f"{dt.hour:02d}",
        "minutes": f"{dt.minute:02d}",
        "seconds": f"{dt.second:02d}",
    }


# --------------------------------------------------------------------- parsing
_FILE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?")


def parse_file_time(text: str) -> datetime | None:
    """A record file's date as text ("2027-03-05", "2027-03-05 19:30[:00]", or with a
    T) as a naive datetime; None when it is not one, or not a real day and time."""
    match = _FILE_TIME.fullmatch(text.strip())
    if match is None:
        return None
    try:
        return datetime(*(int(g or 0) for g in match.groups()))
    except ValueError:
        return None


def parse_datetime(value: object, tz: tzinfo, now: datetime) -> datetime:
    """Naive wall-clock datetime in `tz` for a client-supplied date.

    `value` may be a datetime (naive = already local, aware = converted), a date
    (midnight), an int/float Unix timestamp or text (see module docstring). `now` is
    an aware datetime; relative phrases are resolved against it, seen in `tz`.
    The result never carries microseconds (the API works in whole seconds).
    Raises DateError, and only DateError, for anything it cannot understand.
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return _instant_to_local(value, tz)
        return value.replace(microsecond=0, fold=0)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, bool):
        # bool is an int subclass; True is not a timestamp anyone meant.
        raise DateError("not a date")
    if isinstance(value, int | float):
        return _from_timestamp(value, tz)
    if not isinstance(value, str):
        raise DateError("not a date")
    try:
        return _parse_text(value, tz, now)
    except DateError:
        raise
    except (ValueError, OverflowError, ArithmeticError) as exc:
        raise DateError("date out of range") from exc


def refuse_epoch_text(value: object, now: datetime) -> None:
    """Raise DateError for text that names 1970-01-01 00:00:00 UTC, as the plugin
    refuses it: its validator asks PHP's `strtotime` (in UTC, as WordPress runs PHP)
    and takes the resulting 0 for "not a time". Numeric timestamps, 0 included, pass."""
    if not isinstance(value, str) or re.fullmatch(r"\s*[+-]?\d+(\.\d+)?\s*", value):
        return
    try:
        utc = parse_datetime(value, UTC, now)
    except DateError:
        return  # refused anyway, with the parser's own reason
    if utc == datetime(1970, 1, 1):
        raise DateError("1970-01-01 00:00:00 UTC (the Unix epoch) is not accepted as a date")


def _instant_to_local(value: datetime, tz: tzinfo) -> datetime:
    try:
        local = value.astimezone(tz)
    except (OverflowError, ValueError) as exc:
        raise DateError("date out of range") from exc
    return local.replace(tzinfo=None, microsecond=0, fold=0)


def _from_timestamp(value: float, tz: tzinfo) -> datetime:
    if isinstance(value, float) and not math.isfinite(value):
        raise DateError("not a date")
    try:
        instant = _EPOCH + timedelta(seconds=math.floor(value))
    except (OverflowError, ValueError) as exc:
        raise DateError("timestamp out of range") from exc
    return _instant_to_local(instant, tz)


# ISO-like text is what almost every client sends: one compiled regex, no scanner.
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?"
    r" ?(z|utc|gmt|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)
_TIMESTAMP = re.compile(r"@?([+-]?\d{1,15})(?:\.\d{1,9})?", re.ASCII)
_SPACES = re.compile(r"\s+")


@dataclass
class _Parts:
    """What the scanner found; resolved against "now" once everything is read."""

    date: tuple[int | None, int, int] | None = None
    time: tuple[int, int, int] | None = None
    time_explicit: bool = False
    offset: timedelta | None = None
    weekday: tuple[int, str] | None = None
    months: int = 0
    days: int = 0
    seconds: int = 0
    relative_seen: list[str] = field(default_factory=list)

    def set_date(self, year: int | None, month: int, day: int) -> None:
        if self.date is not None:
            raise DateError("two dates given")
        self.date = (year, month, day)

    def set_time(self, hour: int, minute: int, second: int) -> None:
        if self.time_explicit:
            raise DateError("two times given")
        if hour > 23 or minute > 59 or second > 59:
            raise DateError("time out of range")
        self.time = (hour, minute, second)
        self.time_explicit = True

    def reset_time(self, hour: int = 0) -> None:
        # today/tomorrow/weekday names set the clock but a later "9am" may override it,
        # as in strtotime ("tomorrow 9am" is 09:00, "9am tomorrow" is 00:00).
        self.time = (hour, 0, 0)
        self.time_explicit = False

    def set_offset(self, delta: timedelta) -> None:
        if self.offset is not None:
            raise DateError("two timezones given")
        if abs(delta) >= timedelta(hours=24):
            raise DateError("invalid offset")
        self.offset = delta


def _parse_text(text: str, tz: tzinfo, now: datetime) -> datetime:
    s = _SPACES.sub(" ", text.strip().lower())
    if not s:
        raise DateError("empty date")
    if len(s) > _MAX_INPUT:
        raise DateError("date text too long")

    m = _TIMESTAMP.fullmatch(s)
    if m:
        # The plugin's validator accepts any numeric string as a Unix timestamp.
        return _from_timestamp(int(m.group(1)), tz)

    parts = _Parts()
    m = _ISO.fullmatch(s)
    if m:
        y, mo, d, h, mi, sec, off = m.groups()
        parts.set_date(int(y), int(mo), int(d))
        if h is not None:
            parts.set_time(int(h), int(mi), int(sec or 0))
        if off is not None:
            parts.set_offset(_offset_delta(off))
    else:
        _scan(s, parts)
    return _resolve(parts, tz, now)


def _offset_delta(text: str) -> timedelta:
    if text in ("z", "utc", "gmt"):
        return timedelta(0)
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours = int(digits[:2]) if len(digits) > 2 else int(digits)
    minutes = int(digits[2:]) if len(digits) > 2 else 0
    if minutes > 59:
        raise DateError("invalid offset")
    return sign * timedelta(hours=hours, minutes=minutes)


# ---- the scanner for everything that is not plain ISO

Handler = Callable[[_Parts, re.Match[str]], None]


def _h_iso(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(int(m.group(1)), int(m.group(3)), int(m.group(4)))


def _h_us(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(year2(m.group(3)), int(m.group(1)), int(m.group(2)))


def _h_dmy(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(int(m.group(4)), int(m.group(3)), int(m.group(1)))


def _h_day_month(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(year2(m.group(3)), MONTH_NAMES[m.group(2)], int(m.group(1)))


def _h_month_day(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(year2(m.group(3)), MONTH_NAMES[m.group(1)], int(m.group(2)))


def _h_month_year(p: _Parts, m: re.Match[str]) -> None:
    p.set_date(int(m.group(2)), MONTH_NAMES[m.group(1)], 1)


def _twelve_hour(hour: int, meridiem: str) -> int:
    if not 1 <= hour <= 12:
        raise DateError("hour out of range")
    return hour % 12 + (12 if meridiem == "p" else 0)


def _h_clock(p: _Parts, m: re.Match[str]) -> None:
    hour, minute, second, meridiem = m.groups()
    h = int(hour)
    if meridiem:
        h = _twelve_hour(h, meridiem)
    p.set_time(h, int(minute), int(second or 0))


def _h_hour_ampm(p: _Parts, m: re.Match[str]) -> None:
    p.set_time(_twelve_hour(int(m.group(1)), m.group(2)), 0, 0)


def _h_keyword(p: _Parts, m: re.Match[str]) -> None:
    word = m.group(1)
    if word in ("today", "midnight"):
        p.reset_time()
    elif word == "noon":
        p.reset_time(12)
    elif word in ("tomorrow", "yesterday"):
        p.days += 1 if word == "tomorrow" else -1
        p.reset_time()
    # "now" changes nothing.


def _add_units(p: _Parts, amount: int, unit: str) -> None:
    months, seconds = UNITS[unit]
    p.months += amount * months
    if seconds and seconds % 86400 == 0:
        p.days += amount * (seconds // 86400)
    else:
        p.seconds += amount * seconds


def _h_relative(p: _Parts, m: re.Match[str]) -> None:
    sign, number, unit = m.groups()
    _add_units(p, -int(number) if sign == "-" else int(number), unit)
    p.relative_seen.append(unit)


_REL_WORDS = {"next": 1, "last": -1, "previous": -1, "this": 0}


def _h_reltext(p: _Parts, m: re.Match[str]) -> None:
    word, weekday, unit = m.groups()
    if weekday is not None:
        mode = {1: "after", -1: "before", 0: "onorafter"}[_REL_WORDS[word]]
        _set_weekday(p, WEEKDAYS[weekday], mode)
    else:
        _add_units(p, _REL_WORDS[word], unit)
        p.relative_seen.append(unit)


def _set_weekday(p: _Parts, weekday: int, mode: str) -> None:
    if p.weekday is not None:
        raise DateError("two weekdays given")
    p.weekday = (weekday, mode)
    p.reset_time()


def _h_weekday(p: _Parts, m: re.Match[str]) -> None:
    _set_weekday(p, WEEKDAYS[m.group(1)], "onorafter")


def _h_ago(p: _Parts, m: re.Match[str]) -> None:
    if not p.relative_seen:
        raise DateError("'ago' without an amount")
    # strtotime inverts every relative amount read so far.
    p.months, p.days, p.seconds = -p.months, -p.days, -p.seconds


def _h_zone_word(p: _Parts, m: re.Match[str]) -> None:
    p.set_offset(timedelta(0))


def _h_zone_offset(p: _Parts, m: re.Match[str]) -> None:
    p.set_offset(_offset_delta(m.group(0)))


def _h_filler(p: _Parts, m: re.Match[str]) -> None:
    pass


_TOKENS: list[tuple[re.Pattern[str], Handler]] = [
    (re.compile(p, re.ASCII), h)
    for p, h in [
        (r"(\d{4})([-/])(\d{1,2})\2(\d{1,2})" + END, _h_iso),
        (r"(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![0-9/])", _h_us),
        (r"(\d{1,2})([-.])(\d{1,2})\2(\d{4})" + END, _h_dmy),
        (rf"(\d{{1,2}}){ORD}[ -]?{MONTH}(?:[ ,.-]*(\d{{4}})(?![0-9:]))?", _h_day_month),
        (rf"{MONTH}[ -]?(\d{{1,2}}){ORD}(?![0-9:])(?:,? ?(\d{{4}})(?![0-9:]))?", _h_month_day),
        (rf"{MONTH}[ ,-]?(\d{{4}})(?![0-9:])", _h_month_year),
        (r"t?(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?: ?([ap])\.?m\.?)?" + END,
         _h_clock),
        (r"(\d{1,2}) ?([ap])\.?m\.?" + END, _h_hour_ampm),
        (r"(now|today|tomorrow|yesterday|midnight|noon)" + END, _h_keyword),
        (rf"([+-]?) ?(\d{{1,9}}) ?{UNIT}", _h_relative),
        (rf"(next|last|previous|this) (?:{WEEKDAY}|{UNIT})", _h_reltext),
        (WEEKDAY, _h_weekday),
        (r"ago" + END, _h_ago),
        (r"(z|utc|gmt)" + END, _h_zone_word),
        (r"[+-]\d{2}:?\d{2}(?![0-9])|[+-]\d{1,2}(?![0-9:])", _h_zone_offset),
        (r"(at|on|the)" + END, _h_filler),
    ]
]  # fmt: skip


def _scan(s: str, parts: _Parts) -> None:
    pos, end = 0, len(s)
    while pos < end:
        if s[pos] in " ,":
            pos += 1
            continue
        for regex, handler in _TOKENS:
            m = regex.match(s, pos)
            if m and m.end() > pos:
                handler(parts, m)
                pos = m.end()
                break
        else:
            raise DateError("unrecognised date")


def _add_months(local: datetime, months: int) -> datetime:
    # PHP arithmetic: Jan 31 + 1 month = Mar 3 (the day overflows into the next month).
    index = local.year * 12 + (local.month - 1) + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise DateError("date out of range")
    return local.replace(year=year, month=month + 1, day=1) + timedelta(days=local.day - 1)


def _move_to_weekday(local: datetime, weekday: int, mode: str) -> datetime:
    diff = (weekday - local.weekday()) % 7
    if mode == "after" and diff == 0:
        diff = 7
    elif mode == "before":
        diff = diff - 7 if diff else -7
    return local + timedelta(days=diff)


def _resolve(p: _Parts, tz: tzinfo, now: datetime) -> datetime:
    # Work in the zone the text was written in, then convert to the target zone.
    source = tz if p.offset is None else timezone(p.offset)
    base = _instant_to_local(now, source)
    year, month, day = base.year, base.month, base.day
    if p.date is not None:
        year = p.date[0] if p.date[0] is not None else year
        month, day = p.date[1], p.date[2]
        if not 1 <= year <= 9999:
            raise DateError("year out of range")
    if p.time is not None:
        hour, minute, second = p.time
    elif p.date is not None:
        hour = minute = second = 0  # a bare date means midnight, as in strtotime
    else:
        hour, minute, second = base.hour, base.minute, base.second
    try:
        local = datetime(year, month, day, hour, minute, second)
    except ValueError as exc:
        raise DateError("date out of range") from exc

    # strtotime's order: weekday first, then calendar units, then elapsed time.
    if p.weekday is not None:
        local = _move_to_weekday(local, *p.weekday)
    if p.months:
        local = _add_months(local, p.months)
    if p.days:
        local += timedelta(days=p.days)
    if p.seconds:
        # Hours and smaller are real elapsed time (PHP >= 8.1), so go through UTC.
        local = from_utc(to_utc(local, source) + timedelta(seconds=p.seconds), source)
    if p.offset is not None:
        local = from_utc(local - p.offset, tz)
    return local
