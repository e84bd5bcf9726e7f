"""Recurring events: the `recurrence:` block of an event file, and its occurrences.

The block holds RFC 5545 rules (`rrule:` text, one or a list) or one readable rule
(`every:`, `on:`, `until:`/`count:`), extra dates (`rdate:`), excluded dates
(`exdate:`) and per-occurrence changes keyed by the original start (`changes:`).
All dates are naive wall-clock times in the event's zone: rules are expanded on wall
times and only then placed in the zone (dates.to_utc), so a weekly 19:00 class stays
at 19:00 across DST changes. python-dateutil does the RFC 5545 arithmetic.

`normalize` checks the block's shape and returns its canonical form (what a record
holds, what `fmt` writes); `validate` checks it against the event's start (every
exception and change must name an occurrence); `expand` lists the occurrences up to a
horizon. docs/recurring-events.md explains the choices.
"""

from __future__ import annotations

import datetime as dt
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from dateutil import rrule as du

from . import dates
from .rule_errors import RecurrenceError

# Keys of the block, in file order.
KEYS = ("rrule", "every", "on", "until", "count", "rdate", "exdate", "changes")
_READABLE = ("every", "on", "until", "count")
# What a change may set for one occurrence (interface field names).
CHANGE_KEYS = ("cancelled", "start_date", "end_date", "title", "venue", "excerpt",
               "description", "cost", "website")
# Above this, a series is cut short (and `check` says so): a daily rule over the
# default two-year horizon has 731.
MAX_OCCURRENCES = 5000
_FURTHEST = dt.timedelta(days=36525)  # exceptions this far after the start are refused
# The Gregorian calendar (leap years, weekdays, week numbers) repeats every 400 years:
# a rule moved by whole cycles gives the same dates moved by as much.
_CYCLE_YEARS = 400

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
_ORDINAL_WORDS = {v: k for k, v in _ORDINALS.items()}
_UNITS = {"day": "DAILY", "week": "WEEKLY", "month": "MONTHLY", "year": "YEARLY"}
_FREQ_UNITS = {v: k for k, v in _UNITS.items()}
# Sub-daily rules make no sense for a calendar of events and would flood the lists.
_FREQS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")
# Rule parts RFC 5545 allows with some frequencies only (see _walk for BYSETPOS).
_PART_FREQS = {"byweekno": ("YEARLY",), "byyearday": ("YEARLY",),
               "bymonthday": ("DAILY", "MONTHLY", "YEARLY"), "bysetpos": ("MONTHLY", "YEARLY")}
_EVERY = re.compile(r"(?:(\d+)\s+)?(day|week|month|year)s?")
_NTH_DAY = re.compile(r"(first|second|third|fourth|fifth|last)\s+(\w+)")
_UNTIL_UTC = re.compile(r"(UNTIL=)(\d{8}T\d{6})Z", re.IGNORECASE)



@dataclass(frozen=True)
class Occurrence:
    number: int  # place among the rule's dates, excluded ones counted (stable ids)
    original: dt.datetime  # the start the rule gives: the key of changes
    start: dt.datetime
    end: dt.datetime
    overrides: dict = field(default_factory=dict)  # changed fields of this one date
    cancelled: bool = False


# ------------------------------------------------------------------ the block
def _when(value: object, key: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return _kept(value.replace(tzinfo=None, microsecond=0), key, value)
    if isinstance(value, dt.date):
        return _kept(dt.datetime(value.year, value.month, value.day), key, value)
    if isinstance(value, str):
        parsed = dates.parse_file_time(value)
        if parsed is not None:
            return _kept(parsed, key, value)
    raise RecurrenceError("not-a-date", key, str(value), key=key, value=repr(value))


def _kept(when: dt.datetime, key: str, at: object) -> dt.datetime:
    """`when` if the calendar keeps such dates (the range of event dates)."""
    if not dates.representable(when):
        raise RecurrenceError("date-not-kept", key, str(at), key=key, date=dates.fmt(when),
                              range=dates.KEPT_RANGE)
    return when


def _dates(value: object, key: str) -> list[dt.datetime]:
    items = value if isinstance(value, list) else [value]
    return sorted(dict.fromkeys(_when(v, key) for v in items))


def _rule_texts(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    texts = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise RecurrenceError("rule-not-text", "rrule", str(item))
        text = item.strip()
        text = text[len("RRULE:"):] if text.upper().startswith("RRULE:") else text
        parse_rule(text, dt.datetime(2000, 1, 1))  # raises on bad text
        texts.append(text)
    return texts


def parse_rule(text: str, start: dt.datetime, zone: dt.tzinfo | None = None) -> du.rrule:
    """One RRULE on wall times from `start`. An UNTIL in UTC (`...Z`, as RFC 5545 wants
    with a zoned DTSTART) is turned into the zone's wall time first."""
    def local_until(match: re.Match) -> str:
        try:
            utc = dt.datetime.strptime(match.group(2), "%Y%m%dT%H%M%S")
        except ValueError:
            utc = None
        if utc is None or not dates.representable(utc):  # 9999-12-31 in UTC+14: overflow
            raise RecurrenceError("until-not-kept", "rrule", text, rule=repr(text),
                                  range=dates.KEPT_RANGE)
        local = dates.from_utc(utc, zone) if zone is not None else utc
        return match.group(1) + local.strftime("%Y%m%dT%H%M%S")

    plain = _UNTIL_UTC.sub(local_until, text)
    if "\n" in plain or "DTSTART" in plain.upper():
        raise RecurrenceError("rule-with-start", "rrule", text, rule=repr(text))
    try:
        rule = du.rrulestr(plain, dtstart=start, cache=False)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise _refused(text, str(exc)) from None
    if not isinstance(rule, du.rrule):
        raise RecurrenceError("many-rules", "rrule", text, rule=repr(text))
    freq = du.FREQNAMES[rule._freq]
    if freq not in _FREQS:
        raise RecurrenceError("frequency", "rrule", text, freq=freq)
    _refuse_parts(rule, text)
    if not _can_occur(rule):
        raise RecurrenceError("no-such-day", "rrule", text, rule=repr(text))
    return rule


# What dateutil says when it refuses a rule, and our message for it (its values read
# out of dateutil's words): a translated page then names the reason in its language.
# A reason not here is shown in dateutil's English inside "not-a-rule".
_DATEUTIL = (
    (re.compile(r"invalid '(?P<part>\w+)': (?P<value>.+)", re.DOTALL), "part-value"),
    (re.compile(r"invalid '(?P<part>\w+)': "), "part-empty"),
    (re.compile(r"unknown parameter '(?P<part>[^']+)'"), "unknown-part"),
    (re.compile(r"unknown parameter ''|unsupported property: "
                r"|(?:not enough|too many) values to unpack.*"),
     "not-pairs"),
    (re.compile(r".*missing 1 required positional argument: 'freq'"), "no-freq"),
    (re.compile(r"unsupported property: (?P<part>.+)", re.DOTALL), "property"),
    (re.compile(r"bysetpos must be between 1 and 366, or between -366 and -1"), "setpos"),
)


def _refused(text: str, reason: str) -> RecurrenceError:
    """Why dateutil refused the rule `text`, as one of our messages."""
    for pattern, name in _DATEUTIL:
        found = pattern.fullmatch(reason)
        if found:
            return RecurrenceError(name, "rrule", text, rule=repr(text), **found.groupdict())
    return RecurrenceError("not-a-rule", "rrule", text, rule=repr(text), reason=reason)


def _refuse_parts(rule: du.rrule, text: str) -> None:
    """Raises when a parsed rule cannot be used. dateutil takes all of these and then
    yields one date forever (INTERVAL=0), fails while expanding, or gives many
    occurrences a day."""
    given = rule._original_rule
    shown = repr(text)
    if rule._interval < 1:
        raise RecurrenceError("interval", "rrule", text, rule=shown)
    if rule._count is not None and rule._count < 1:
        raise RecurrenceError("count-part", "rrule", text, rule=shown)
    if any(given.get(part) is not None for part in ("byhour", "byminute", "bysecond")):
        raise RecurrenceError("time-parts", "rrule", text, rule=shown)
    if given.get("byeaster") is not None:
        raise RecurrenceError("easter", "rrule", text, rule=shown)
    # RFC 5545 (3.3.10) allows these parts with some frequencies only; dateutil takes
    # them with all, but walks DAILY and WEEKLY rules with them a day or week at a time.
    for part, freqs in _PART_FREQS.items():
        if given.get(part) and du.FREQNAMES[rule._freq] not in freqs:
            named = dict(zip(("freq", "other", "third"), freqs))
            raise RecurrenceError(("part-freq-1", "part-freq-2", "part-freq-3")[len(freqs) - 1],
                                  "rrule", text, rule=shown, part=part.upper(), **named)
    if any(not 1 <= m <= 12 for m in rule._bymonth or ()):
        raise RecurrenceError("month", "rrule", text, rule=shown)
    if rule._until is not None and not dates.representable(rule._until):
        raise RecurrenceError("until-outside", "rrule", text, rule=shown,
                              range=dates.KEPT_RANGE)


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _can_occur(rule: du.rrule) -> bool:
    """False for a month/day combination no year has (`BYMONTH=2;BYMONTHDAY=30`):
    dateutil would walk to the year 9999 looking for one (seconds per expansion)."""
    months = rule._original_rule.get("bymonth") or range(1, 13)
    days = rule._original_rule.get("bymonthday") or ()
    if not days:
        return True
    return any(abs(d) <= _MONTH_DAYS[m - 1] for m in months for d in days)


def _readable_rule(block: dict) -> str:
    """The RRULE text of the readable form."""
    every = block.get("every")
    match = _EVERY.fullmatch(str(every).strip().lower()) if every is not None else None
    if not match:
        raise RecurrenceError("every", "every", str(every), every=repr(every))
    interval = int(match.group(1) or 1)
    if interval < 1:
        raise RecurrenceError("every-zero", "every", str(every))
    parts = [f"FREQ={_UNITS[match.group(2)]}"] + ([f"INTERVAL={interval}"] if interval > 1
                                                  else [])
    on = block.get("on")
    if on is not None:
        days, monthdays = [], []
        for item in on if isinstance(on, list) else [on]:
            if isinstance(item, int) and not isinstance(item, bool) and 1 <= abs(item) <= 31:
                monthdays.append(str(item))
                continue
            word = str(item).strip().lower()
            nth = _NTH_DAY.fullmatch(word)
            day = nth.group(2) if nth else word
            if day not in WEEKDAYS:
                raise RecurrenceError("on", "on", str(item), item=repr(item))
            code = _DAY_CODES[WEEKDAYS.index(day)]
            days.append(f"{_ORDINALS[nth.group(1)]}{code}" if nth else code)
        if days:
            parts.append("BYDAY=" + ",".join(days))
        if monthdays:
            parts.append("BYMONTHDAY=" + ",".join(monthdays))
    if "until" in block and "count" in block:
        raise RecurrenceError("until-and-count", "count")
    if "until" in block:
        until = block["until"]
        end = _when(until, "until")
        if not isinstance(until, dt.datetime) and not (isinstance(until, str)
                                                       and ":" in until):
            end = end.replace(hour=23, minute=59, second=59)  # a bare date: that whole day
        parts.append("UNTIL=" + end.strftime("%Y%m%dT%H%M%S"))
    if "count" in block:
        count = block["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise RecurrenceError("count", "count", str(count), count=repr(count))
        parts.append(f"COUNT={count}")
    return ";".join(parts)


def normalize(value: object) -> dict:
    """The canonical block: known keys in file order, dates as datetimes, change keys
    as `YYYY-MM-DD HH:MM:SS` text. Raises RecurrenceError."""
    if isinstance(value, str):  # the shortest form: just the rule
        value = {"rrule": value}
    if not isinstance(value, dict):
        raise RecurrenceError("not-a-mapping")
    if True in value:  # YAML 1.1 reads a bare `on:` key as true
        value = {("on" if k is True else k): v for k, v in value.items()}
    unknown = [k for k in value if k not in KEYS]
    if unknown:
        raise RecurrenceError("unknown-key", str(unknown[0]), f"{unknown[0]}:",
                              key=repr(unknown[0]), known=", ".join(KEYS))
    readable = [k for k in _READABLE if k in value]
    if "rrule" in value and readable:
        raise RecurrenceError("rule-and-every", readable[0], f"{readable[0]}:",
                              key=readable[0])
    if "rrule" not in value and "every" not in value and readable:
        raise RecurrenceError("needs-every", readable[0], f"{readable[0]}:", key=readable[0])
    out: dict = {}
    if "rrule" in value:
        texts = _rule_texts(value["rrule"])
        out["rrule"] = texts if isinstance(value["rrule"], list) else texts[0]
    elif "every" in value:
        _readable_rule(value)  # raises on a bad readable rule
        for key in _READABLE:
            if key in value:
                item = value[key]
                out[key] = ([str(v) if not isinstance(v, int) else v for v in item]
                            if isinstance(item, list) else item)
        if "until" in out and isinstance(out["until"], str):
            out["until"] = _when(out["until"], "until")
    for key in ("rdate", "exdate"):
        if value.get(key) is not None:
            out[key] = _dates(value[key], key)
    if value.get("changes") is not None:
        out["changes"] = _changes(value["changes"])
    if not (out.get("rrule") or out.get("every") or out.get("rdate")):
        raise RecurrenceError("no-rule")
    return out


def _changes(value: object) -> dict:
    if not isinstance(value, dict):
        raise RecurrenceError("changes-not-a-mapping", "changes", "changes:")
    out: dict = {}
    for when, change in value.items():
        key = dates.fmt(_when(when, "changes"))
        if not isinstance(change, dict) or not change:
            raise RecurrenceError("change-not-fields", "changes", str(when), when=key)
        fields: dict = {}
        for name, item in change.items():
            if name not in CHANGE_KEYS:
                raise RecurrenceError("change-key", "changes", f"{name}:", when=key,
                                      name=repr(name), known=", ".join(CHANGE_KEYS))
            if name == "cancelled":
                if not isinstance(item, bool):
                    raise RecurrenceError("change-cancelled", "changes", f"{name}:",
                                          when=key)
            elif name in ("start_date", "end_date"):
                item = _when(item, "changes")
            elif item is None:
                raise RecurrenceError("change-empty", "changes", f"{name}:", when=key,
                                      name=name)
            # the other fields are the event's own: the Recurrence field type checks them
            fields[name] = item
        out[key] = fields
    return dict(sorted(out.items()))


def as_json(block: dict) -> dict:
    """The block as the interface shows it (and takes it back): dates as text."""
    def plain(value: object) -> object:
        if isinstance(value, dt.datetime):
            return dates.fmt(value)
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return plain(block)  # type: ignore[return-value]


# ---------------------------------------------------------------- occurrences
def rule_texts(block: dict) -> list[str]:
    """Every rule of the block as RRULE text (the readable form converted)."""
    if "rrule" in block:
        value = block["rrule"]
        return list(value) if isinstance(value, list) else [value]
    return [_readable_rule(block)] if "every" in block else []


def is_endless(block: dict, start: dt.datetime) -> bool:
    return any(parse_rule(t, start)._count is None and parse_rule(t, start)._until is None
               for t in rule_texts(block))


def _rule_dates(block: dict, start: dt.datetime, last: dt.datetime,
                zone: dt.tzinfo | None) -> Iterator[dt.datetime]:
    """The block's dates up to `last` in order, each once, excluded ones included: the
    start (RFC 5545: DTSTART is always the first instance), the rules' dates, `rdate`."""
    rules = [parse_rule(text, start, zone) for text in rule_texts(block)]
    if last < start:
        return
    extra = sorted({start, *block.get("rdate", ())})
    previous = None
    for when in heapq.merge(extra, *(_walk(rule, last) for rule in rules)):
        if when > last:
            return
        if when != previous:
            yield when
            previous = when


def _walk(rule: du.rrule, last: dt.datetime) -> Iterator[dt.datetime]:
    """The rule's dates up to `last`, in order, with dateutil's search bounded.

    dateutil looks for a rule's next date up to the year 9999, seconds for a rule that
    has no more (BYYEARDAY=366;BYMONTH=1). So the rule is moved forward by whole 400-year
    cycles, to where the year 9999 comes at most 400 years after `last`, and DAILY and
    WEEKLY rules are walked a year at a time (`_by_year`). The work is thus bounded by
    the days from the start to `last`, plus 400 yearly or 4,800 monthly steps."""
    shift = (dt.MAXYEAR - 1 - last.year) // _CYCLE_YEARS * _CYCLE_YEARS
    # dateutil stops at the first date past UNTIL: `last` is as good an end
    end = last if rule._until is None else min(rule._until, last)
    if rule._freq in (du.DAILY, du.WEEKLY):
        found = _by_year(rule, shift, _moved(end, shift))
    else:  # with a COUNT, dateutil wants no UNTIL (RFC 5545); `end` is checked below
        until = None if rule._count is not None else _moved(end, shift)
        found = iter(rule.replace(dtstart=_moved(rule._dtstart, shift), until=until))
    while True:
        try:
            when = _moved(next(found), -shift)
        except StopIteration:
            return
        except (ValueError, OverflowError):  # dateutil past the year 9999: after `last`
            return
        if when > end:
            return
        yield when


def _recurs(rule: du.rrule) -> bool:
    """True when the rule's pattern gives a date within 400 years after its start (its
    COUNT or UNTIL aside). BYWEEKNO=53;BYMONTH=6 never does: no June has a week 53."""
    start = rule._dtstart
    if start.year + _CYCLE_YEARS > dt.MAXYEAR - 1:
        return True  # no room to look; the walk is bounded anyway
    endless = rule.replace(count=None, until=None)
    return any(when > start for when in _walk(endless, _moved(start, _CYCLE_YEARS)))


def _moved(when: dt.datetime, years: int) -> dt.datetime:
    return when.replace(year=when.year + years)


def _by_year(rule: du.rrule, shift: int, until: dt.datetime) -> Iterator[dt.datetime]:
    """The dates of a DAILY or WEEKLY rule moved by `shift` years: the days a YEARLY rule
    with the same day filters gives, kept when they fall in one of the rule's periods
    (every INTERVAL days or weeks from the start's). dateutil takes one step per day or
    week; the YEARLY rule one per year."""
    start = _moved(rule._dtstart, shift)
    days = du.rrule(du.YEARLY, dtstart=start, wkst=rule._wkst, cache=False,
                    bymonth=rule._bymonth, byweekno=rule._byweekno,
                    byyearday=rule._byyearday,
                    bymonthday=(rule._bymonthday + rule._bynmonthday) or None,
                    # every weekday when none is given: no YEARLY default of one date
                    byweekday=rule._byweekday or range(7))
    weeks = rule._freq == du.WEEKLY
    first = _period(start, rule._wkst, weeks)
    count = rule._count
    for when in days:
        if when > until or count is not None and count < 1:
            return
        if (_period(when, rule._wkst, weeks) - first).days // (7 if weeks else 1) \
                % rule._interval:
            continue
        if count is not None:
            count -= 1
        yield when


def _period(when: dt.datetime, wkst: int, weeks: bool) -> dt.date:
    """The first day of the rule period holding `when`: its day, or its week's (WKST)."""
    day = when.date()
    return day - dt.timedelta(days=(day.weekday() - wkst) % 7) if weeks else day


def validate(block: dict, start: dt.datetime, zone: dt.tzinfo | None = None) -> None:
    """The rules expand, and every exclusion and change names an occurrence they give
    (the rules are walked once, to the furthest of these: a century after the start at
    most, so endless rules need no horizon)."""
    for text in rule_texts(block):
        if not _recurs(parse_rule(text, start, zone)):
            raise RecurrenceError("never", "rrule", text, rule=repr(text),
                                  years=_CYCLE_YEARS)
    excluded = set(block.get("exdate", ()))
    keys = {dt.datetime.fromisoformat(k) for k in block.get("changes", {})}
    # a series starting in the last century of the calendar: no overflow past 9999
    limit = start + _FURTHEST if start <= dates.MAX_KEPT - _FURTHEST else dates.MAX_KEPT
    asked = {w for w in excluded | keys if start <= w <= limit}
    furthest = max(asked, default=start)
    occurs = {w for w in _rule_dates(block, start, furthest, zone) if w in asked}
    for when in block.get("exdate", ()):
        if when not in occurs:
            raise RecurrenceError("exdate", "exdate", dates.fmt(when)[:10],
                                  date=dates.fmt(when))
    for key, change in block.get("changes", {}).items():
        when = dt.datetime.fromisoformat(key)
        if when not in occurs or when in excluded:
            raise RecurrenceError("change-no-occurrence", "changes", key[:10], when=key)
        moved_start = change.get("start_date")
        moved_end = change.get("end_date")
        if moved_end is not None and moved_end < (moved_start or when):
            raise RecurrenceError("change-end", "changes", key[:10], when=key)


def expand(block: dict, start: dt.datetime, end: dt.datetime, until: dt.datetime,
           zone: dt.tzinfo | None = None) -> list[Occurrence]:
    """Occurrences whose rule date is no later than `until` (the horizon, a wall
    time), in start order, cancelled ones included (flagged), excluded ones left out,
    at most MAX_OCCURRENCES."""
    duration = end - start
    changes = block.get("changes", {})
    excluded = set(block.get("exdate", ()))
    out = []
    for number, when in enumerate(_rule_dates(block, start, until, zone)):
        if number >= MAX_OCCURRENCES:
            break
        if when in excluded:
            continue
        change = changes.get(dates.fmt(when), {})
        begin = change.get("start_date", when)
        # an event lasting centuries, repeated: its later ends would pass the year 9999
        finish = change.get("end_date", begin + duration if begin <= dates.MAX_KEPT - duration
                            else dates.MAX_KEPT)
        overrides = {k: v for k, v in change.items()
                     if k not in ("cancelled", "start_date", "end_date")}
        out.append(Occurrence(number, when, begin, finish, overrides,
                              bool(change.get("cancelled"))))
    out.sort(key=lambda o: (o.start, o.original))
    return out


def taken_out(block: dict | None) -> set[dt.datetime]:
    """Rule dates taken out: excluded or cancelled."""
    if not block:
        return set()
    cancelled = {dt.datetime.fromisoformat(k) for k, c in block.get("changes", {}).items()
                 if c.get("cancelled")}
    return set(block.get("exdate", ())) | cancelled


def changed(block: dict, start: dt.datetime, end: dt.datetime) -> list[Occurrence]:
    """The occurrences a `changes` entry moves or alters (cancelled ones left out)."""
    keys = [k for k, c in block.get("changes", {}).items() if not c.get("cancelled")]
    if not keys:
        return []
    last = max(dt.datetime.fromisoformat(k) for k in keys)
    wanted = set(keys)
    return [o for o in expand(block, start, end, last)
            if not o.cancelled and dates.fmt(o.original) in wanted]
