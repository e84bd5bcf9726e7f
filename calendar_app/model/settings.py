"""The calendar's settings (`calendar.yaml`): their defaults and the rules a value must
follow. Read from the tree by `content.ContentTree.settings`; checked by `check` and the
builder; used by recurrence, the site and the interface."""

from __future__ import annotations

import datetime as dt

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
    # WordPress's general settings, as `/wp-json/wp/v2/settings` answers them.
    "email": "",
    "date_format": "F j, Y",
    "time_format": "g:i a",
    "start_of_week": 1,  # 0 = Sunday
    "language": "en_US",
}
PERFORMER_TYPES = ("Person", "PerformingGroup")
# Settings that must be whole numbers, with the smallest allowed: `check` reports any
# other value with its line, and a build uses the default instead (setting_number).
# Whole-number settings and the range each must fall in. A recurrence horizon has an
# upper bound so that an endless rule cannot be expanded for centuries.
WHOLE_NUMBER_SETTINGS = {"feed_past_days": (0, None), "feed_refresh_minutes": (1, None),
                         "recurrence_horizon_days": (1, 36500), "start_of_week": (0, 6)}


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


def site_zone_name(settings: dict) -> str:
    return str(settings.get("timezone") or "UTC")


def site_now(clock: Clock, settings: dict) -> dt.datetime:
    """Now as a naive datetime in the calendar's timezone."""
    return dates.from_utc(clock().astimezone(dt.UTC).replace(tzinfo=None),
                          dates.zone(site_zone_name(settings)))
