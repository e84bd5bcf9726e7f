"""Time zones named by iCalendar producers, as IANA names the calendar keeps.

A TZID parameter holds whatever its producer calls the zone: an IANA name (Google,
Apple, Nextcloud, our own feeds), a Windows name (`W. Europe Standard Time`, Outlook
and Exchange), a "globally unique" path (`/mozilla.org/20050126_1/Europe/Berlin`),
or a display name Outlook made up (`(UTC+01:00) Amsterdam, Berlin, ...`) defined only
by the file's VTIMEZONE. Windows names are mapped with the Unicode CLDR windowsZones
table that the `icalendar` package ships (icalendar.timezone.windows_to_olson);
made-up names are matched by the offsets their VTIMEZONE gives over the event's year.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from functools import lru_cache

import icalendar
from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

from ..model import dates

# Names of UTC that producers write in TZID (Exchange: "tzone://Microsoft/Utc").
_UTC_NAMES = frozenset({"utc", "gmt", "z", "etc/utc", "etc/gmt", "tzone://microsoft/utc",
                        "coordinated universal time"})


def known(name: str) -> bool:
    """True for a zone name the calendar takes as it is (dates.zone)."""
    try:
        dates.zone(name)
    except dates.DateError:
        return False
    return True


def iana_name(tzid: str) -> str | None:
    """The IANA name (or "UTC") a TZID stands for by its name alone, None if unknown."""
    cleaned = tzid.strip().strip('"').strip()
    if cleaned.lower() in _UTC_NAMES:
        return "UTC"
    candidates = [cleaned, cleaned.strip("/")]
    if cleaned.startswith("/"):  # a globally unique TZID: the IANA name is its tail
        parts = cleaned.strip("/").split("/")
        candidates += ["/".join(parts[i:]) for i in range(1, len(parts))]
    for name in candidates:
        if name in WINDOWS_TO_OLSON:
            name = WINDOWS_TO_OLSON[name]
        if name and name != "UTC" and not dates.is_offset_name(name) and known(name):
            return name
    return None


@lru_cache(maxsize=1)
def _candidates() -> tuple[str, ...]:
    """Zones a made-up TZID is matched against: the CLDR table's first (what Windows
    itself would pick), then every other IANA zone."""
    first = [z for z in dict.fromkeys(WINDOWS_TO_OLSON.values()) if known(z)]
    rest = sorted(z for z in zoneinfo.available_timezones() if z not in first and "/" in z
                  and known(z))
    return tuple(first + rest)


def _samples(year: int) -> list[dt.datetime]:
    """Instants (UTC) spread over a year, two a month, to compare zones' offsets."""
    year = min(max(year, 1900), 2100)  # outside, zone rules are guesses anyway
    return [dt.datetime(year, month, day, 12, tzinfo=dt.UTC)
            for month in range(1, 13) for day in (1, 16)]


def _offsets(zone: dt.tzinfo, instants: list[dt.datetime]) -> tuple:
    return tuple(when.astimezone(zone).utcoffset() for when in instants)


def from_vtimezone(tzid: str, component: icalendar.Timezone, year: int) -> str | None:
    """The IANA zone whose offsets over `year` are the VTIMEZONE's, preferring one whose
    city the TZID names (`(UTC+01:00) Amsterdam, Berlin` -> Europe/Amsterdam)."""
    location = str(component.get("X-LIC-LOCATION") or "")
    if location and iana_name(location):
        return iana_name(location)
    try:
        defined = component.to_tz(lookup_tzid=False)
        instants = _samples(year)
        wanted = _offsets(defined, instants)
    except Exception:  # noqa: BLE001 - a broken VTIMEZONE: the caller reports the zone
        return None
    text = tzid.lower()
    matches = [name for name in _candidates()
               if _offsets(dates.zone(name), instants) == wanted]
    named = [m for m in matches if m.rsplit("/", 1)[-1].replace("_", " ").lower() in text]
    return (named or matches or [None])[0]
