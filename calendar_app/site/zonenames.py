"""Readable names of timezones for pages: "Pacific Time", not "America/Los_Angeles".

The tz database has no such names, only abbreviations ("PST"/"PDT"); the names below
are Unicode CLDR's English generic names, looked up by those abbreviations, which the
zones of one region share (America/Vancouver and America/Los_Angeles are both PST/PDT).
Where an abbreviation means two regions (CST: Chicago and Shanghai; IST: Dublin,
Jerusalem and Kolkata) the pair of abbreviations or the name's first part decides. A
zone none of these know (tzdata writes "+03" for many) reads "Istanbul time".
A dozen lines of data instead of Babel: 33 MB installed for the same answers here,
and its fallbacks read worse ("Unknown Region (UTC) Time").
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

from ..model import dates

# Names of single zones the abbreviations below would name wrongly.
_BY_ZONE = {"America/Havana": "Cuba Time", "Cuba": "Cuba Time", "Asia/Taipei": "Taipei Time",
            "ROC": "Taipei Time", "Asia/Manila": "Philippine Time"}
# (standard, daylight) abbreviations: tzdata gives Dublin negative daylight time.
_BY_PAIR = {("GMT", "BST"): "British Time", ("IST", "GMT"): "Irish Time",
            ("IST", "IDT"): "Israel Time"}
# (first part of the zone's name, standard abbreviation).
_BY_AREA = {("Asia", "CST"): "China Standard Time", ("PRC", "CST"): "China Standard Time",
            ("Asia", "IST"): "India Standard Time"}
_BY_ABBREVIATION = {
    "PST": "Pacific Time", "MST": "Mountain Time", "CST": "Central Time",
    "EST": "Eastern Time", "AST": "Atlantic Time", "NST": "Newfoundland Time",
    "AKST": "Alaska Time", "HST": "Hawaii-Aleutian Time", "SST": "Samoa Time",
    "ChST": "Chamorro Standard Time", "GMT": "Greenwich Mean Time",
    "UTC": "Coordinated Universal Time", "WET": "Western European Time",
    "CET": "Central European Time", "MET": "Central European Time",
    "EET": "Eastern European Time", "MSK": "Moscow Time", "WAT": "West Africa Time",
    "CAT": "Central Africa Time", "EAT": "East Africa Time",
    "SAST": "South Africa Standard Time", "PKT": "Pakistan Standard Time",
    "WIB": "Western Indonesia Time", "WITA": "Central Indonesia Time",
    "WIT": "Eastern Indonesia Time", "HKT": "Hong Kong Time", "JST": "Japan Standard Time",
    "KST": "Korea Standard Time", "AWST": "Australian Western Time",
    "ACST": "Australian Central Time", "AEST": "Australian Eastern Time",
    "NZST": "New Zealand Time",
}


@lru_cache(maxsize=256)
def zone_name(tzname: str, year: int) -> str:
    """The generic English name of a zone as it was in `year` (zones change regions)."""
    if dates.is_offset_name(tzname):
        return tzname  # WordPress's "UTC+5.5": already what a reader understands
    found = _BY_ZONE.get(tzname)
    if found:
        return found
    standard, daylight = _abbreviations(dates.zone(tzname), year)
    area = tzname.partition("/")[0]
    found = (_BY_PAIR.get((standard, daylight)) or _BY_AREA.get((area, standard))
             or _BY_ABBREVIATION.get(standard))
    if found:
        return found
    if area == "Etc" or "/" not in tzname:
        return f"UTC{standard}" if standard[:1] in "+-" else tzname
    return tzname.rpartition("/")[2].replace("_", " ") + " time"


def _abbreviations(zone: dt.tzinfo, year: int) -> tuple[str, str]:
    """(standard, daylight) abbreviations in `year`, the same twice without DST."""
    year = min(max(year, 1900), 9998)
    moments = [dt.datetime(year, 1, 15, 12, tzinfo=zone), dt.datetime(year, 7, 15, 12, tzinfo=zone)]
    moments.sort(key=lambda m: bool(m.dst()))  # standard time first
    return moments[0].tzname() or "", moments[1].tzname() or ""
