"""The words of strtotime-style date text: month and weekday names, units, and the
regex pieces that match them (dates.py's scanner is built from these)."""

from __future__ import annotations

MONTH_NAMES = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
    "july": 7, "august": 8, "september": 9, "october": 10, "november": 11,
    "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
    "aug": 8, "sept": 9, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
    "saturday": 5, "sunday": 6, "mon": 0, "tues": 1, "tue": 1, "wed": 2,
    "thurs": 3, "thur": 3, "thu": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
# (months, seconds) per unit; months and days are calendar arithmetic, the rest elapsed.
UNITS = {
    "sec": (0, 1), "second": (0, 1), "min": (0, 60), "minute": (0, 60),
    "hour": (0, 3600), "hr": (0, 3600), "day": (0, 86400), "week": (0, 7 * 86400),
    "fortnight": (0, 14 * 86400), "month": (1, 0), "year": (12, 0),
}  # fmt: skip


def _alt(words: object) -> str:
    # Longest first so "sept" wins over "sep" and "monday" over "mon".
    return "|".join(sorted(words, key=len, reverse=True))  # type: ignore[arg-type]


MONTH = rf"({_alt(MONTH_NAMES)})\.?(?![a-z])"
WEEKDAY = rf"({_alt(WEEKDAYS)})(?![a-z])\.?"
UNIT = rf"({_alt(UNITS)})s?(?![a-z])"
END = r"(?![a-z0-9])"
ORD = r"(?:st|nd|rd|th)?"


def year2(text: str | None) -> int | None:
    if text is None:
        return None
    year = int(text)
    if len(text) == 2:
        # PHP's two-digit year window: 00-69 -> 2000s, 70-99 -> 1900s.
        year += 2000 if year < 70 else 1900
    return year
