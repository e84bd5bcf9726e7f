"""The calendar's settings (`calendar.yaml`): their defaults and the rules a value must
follow. Read from the tree by `content.ContentTree.settings`; checked by `check` and the
builder; used by recurrence, the site and the interface."""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

from . import dates
from .clock import Clock

DEFAULT_SETTINGS: dict = {
    "title": "Events Calendar",
    "description": "",
    "url": "",
    "timezone": "UTC",
    "per_page": 10,
    "max_per_page": 50,
    "currency_symbol": "$",
    "currency_position": "prefix",
    "currency_code": "USD",
    "feed_past_days": 30,  # iCalendar feeds keep events that ended this many days ago
    "feed_refresh_minutes": 60,  # how often subscribed calendar apps fetch a feed again
    # The schema.org type of every event's performers (docs/content-format.md).
    "performer_type": "Person",
    "recurrence_horizon_days": 730,  # endless recurrence rules are expanded this far
    # WordPress's general settings, as `/wp-json/wp/v2/settings` answers them (its week
    # start and language are `week_start` and `locale` below).
    "email": "",
    "date_format": "F j, Y",
    "time_format": "g:i a",
    # The plugin's "End of day cutoff": an event ending before this time of the next
    # day is drawn on its first day alone (a party until 1 am with "01:00").
    "multiday_cutoff": "00:00",
    "week_start": "",  # a day's name; empty: from the locale (Sunday for en_US)
    # The site's language and regional formats (docs/i18n.md); `build --locale` overrides.
    "locale": "en_US",
}
PERFORMER_TYPES = ("Person", "PerformingGroup")
# Settings that must be whole numbers, with the smallest allowed: `check` reports any
# other value with its line, and a build uses the default instead (setting_number).
# Whole-number settings and the range each must fall in. A recurrence horizon has an
# upper bound so that an endless rule cannot be expanded for centuries.
WHOLE_NUMBER_SETTINGS = {"feed_past_days": (0, None), "feed_refresh_minutes": (1, None),
                         "recurrence_horizon_days": (1, 36500)}


def setting_number(settings: dict, key: str) -> tuple[int, str | None]:
    """A whole-number setting: (the value to use, what is wrong with calendar.yaml's).
    An absent key is the default; a bad one is reported and the default used."""
    value = settings.get(key, DEFAULT_SETTINGS[key])
    least, most = WHOLE_NUMBER_SETTINGS[key]
    if (isinstance(value, int) and not isinstance(value, bool) and value >= least
            and (most is None or value <= most)):
        return value, None
    bounds = f"from {least} to {most}" if most is not None else f"of {least} or more"
    return DEFAULT_SETTINGS[key], f"{key} must be a whole number {bounds}, not {value!r}"


WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                 "sunday")
CUTOFF_LATEST_MINUTES = 12 * 60  # the plugin offers the hours of the morning


def week_start(settings: dict) -> int:
    """The first day of the week, 0 (Monday) to 6 (Sunday), as Python's weekday():
    `week_start` when it names a day, else WordPress's `start_of_week` (0 is Sunday)
    when calendar.yaml gives it, else the locale's first day (CLDR)."""
    value = str(settings.get("week_start") or "").strip().lower()
    if value in WEEKDAY_NAMES:
        return WEEKDAY_NAMES.index(value)
    wordpress = settings.get("start_of_week")
    if isinstance(wordpress, int) and not isinstance(wordpress, bool) and 0 <= wordpress <= 6:
        return (wordpress - 1) % 7
    return _locale_week_start(str(settings.get("locale") or DEFAULT_SETTINGS["locale"]))


@lru_cache(maxsize=64)
def _locale_week_start(tag: str) -> int:
    """CLDR's first day of the week for the locale (through Babel): Sunday for en_US,
    Monday for de_DE, Saturday for ar_EG; an unknown locale is en_US."""
    from babel import Locale, UnknownLocaleError  # here only: settings stay light
    try:
        return Locale.parse(tag.replace("-", "_")).first_week_day
    except (UnknownLocaleError, ValueError, TypeError):
        return Locale.parse(DEFAULT_SETTINGS["locale"]).first_week_day


def multiday_cutoff(settings: dict) -> tuple[dt.timedelta, str | None]:
    """The end-of-day cutoff: (the time after midnight that still belongs to the day
    before, what is wrong with calendar.yaml's value). "HH:MM" as written; YAML reads
    an unquoted `1:30` as the number 90 (base 60), which is taken as minutes."""
    value = settings.get("multiday_cutoff", DEFAULT_SETTINGS["multiday_cutoff"])
    minutes = None
    if isinstance(value, int) and not isinstance(value, bool):
        minutes = value
    elif isinstance(value, str) and (found := _CLOCK.fullmatch(value.strip())):
        hours, mins = int(found[1]), int(found[2])
        minutes = hours * 60 + mins if mins < 60 else None
    if minutes is not None and 0 <= minutes < CUTOFF_LATEST_MINUTES:
        return dt.timedelta(minutes=minutes), None
    return dt.timedelta(0), (f"multiday_cutoff must be a time from 00:00 to 11:59 "
                             f"(\"HH:MM\"), not {value!r}")


def setting_problems(settings: dict) -> list[tuple[str, str]]:
    """(key, what is wrong) for each setting of calendar.yaml that is not allowed; the
    site uses the default instead."""
    found = [(key, problem) for key in WHOLE_NUMBER_SETTINGS
             if key in settings and (problem := setting_number(settings, key)[1])]
    if "multiday_cutoff" in settings and (problem := multiday_cutoff(settings)[1]):
        found.append(("multiday_cutoff", problem))
    day = settings.get("week_start")
    if day and str(day).strip().lower() not in WEEKDAY_NAMES:
        problem = f"week_start must name a day (monday ... sunday), not {day!r}"
        found.append(("week_start", problem))
    if "locale" in settings and (problem := locale_problem(settings["locale"])):
        found.append(("locale", problem))
    return found


def locale_problem(tag: object) -> str | None:
    """What is wrong with a locale's name (None when CLDR knows it)."""
    # Babel only here: `check` and every reader of settings stay light until asked.
    from babel import Locale, UnknownLocaleError
    try:
        Locale.parse(str(tag).replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return f"unknown locale {tag!r} (a language and region such as de_DE or fr_FR)"
    return None


_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")


def site_zone_name(settings: dict) -> str:
    return str(settings.get("timezone") or "UTC")


def site_now(clock: Clock, settings: dict) -> dt.datetime:
    """Now as a naive datetime in the calendar's timezone."""
    return dates.from_utc(clock().astimezone(dt.UTC).replace(tzinfo=None),
                          dates.zone(site_zone_name(settings)))


def recurrence_horizon(settings: dict, today: dt.date) -> dt.datetime:
    """The last wall time endless rules are expanded to."""
    # a bad value: `check` reports it
    days = dt.timedelta(days=setting_number(settings, "recurrence_horizon_days")[0])
    if today > (dates.MAX_KEPT - days).date():  # a series starting in the year 9998
        return dates.MAX_KEPT
    return dt.datetime.combine(today + days, dt.time(23, 59, 59))
