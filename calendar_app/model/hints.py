"""Suggestions for what an editor probably meant: a key's usual short form, a time
zone's city without its region. Shared by the loader's messages and `check`."""

from __future__ import annotations

import difflib
import functools
import zoneinfo
from collections.abc import Iterable

# Names editors reach for, by the file key they mean (file keys: `organizers`); a key is suggested only where the
# resource has it (`name` means the title of an event, not of a venue).
SHORT_FORMS: dict[str, tuple[str, ...]] = {
    "start_date": ("start", "starts", "begin", "begins", "from", "start_time", "date_start",
                   "startdate", "dtstart"),
    "end_date": ("end", "ends", "until", "to", "end_time", "date_end", "enddate", "dtend"),
    "timezone": ("tz", "zone", "time_zone", "timezone_name"),
    "all_day": ("allday", "all-day", "whole_day"),
    "venue": ("location", "place", "where"),
    "organizers": ("organiser", "organisers", "host", "hosts"),
    "categories": ("category", "cat", "cats"),
    "tags": ("tag", "keywords"),
    "website": ("url", "link", "web", "homepage"),
    "cost": ("price", "fee", "fees", "admission"),
    "image": ("photo", "picture", "image_url", "thumbnail"),
    "title": ("name", "summary", "heading"),
    "description": ("body", "content", "details", "text"),
    "geo_lat": ("lat", "latitude"),
    "geo_lng": ("lng", "lon", "long", "longitude"),
    "zip": ("postcode", "postal_code", "zipcode", "zip_code", "plz"),
    "email": ("mail", "e-mail", "e_mail"),
    "phone": ("telephone", "tel"),
}
_MEANT = {short: key for key, shorts in SHORT_FORMS.items() for short in shorts}


def key_meant(word: str, keys: Iterable[str]) -> str | None:
    """The key among `keys` an unknown key most likely stands for, or None."""
    keys = list(keys)
    meant = _MEANT.get(word.lower().strip())
    if meant in keys:
        return meant
    close = difflib.get_close_matches(word, keys, n=1, cutoff=0.6)
    return close[0] if close else None


@functools.cache
def _zones_by_city() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in sorted(zoneinfo.available_timezones()):
        if "/" in name and not name.startswith(("Etc/", "SystemV/", "posix/", "right/")):
            found.setdefault(name.rsplit("/", 1)[1].lower(), name)
    return found


def zone_meant(text: str) -> str | None:
    """`Berlin` → `Europe/Berlin`, `new york` → `America/New_York`, or None."""
    city = text.strip().replace(" ", "_").lower()
    if not city or len(city) > 64:
        return None
    zones = _zones_by_city()
    if city in zones:
        return zones[city]
    close = difflib.get_close_matches(city, list(zones), n=1, cutoff=0.8)
    return zones[close[0]] if close else None
