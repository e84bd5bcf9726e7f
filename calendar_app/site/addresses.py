"""A venue's postal address in the order its country writes it: "12043 Berlin" in
Germany, "Riverside, CA 92501" in the US, the postcode on a line of its own in the UK.

CLDR (and so Babel) has no address formats. These are the formats of Google's
libaddressinput data (the facts: which field comes where, with what between), for
the countries a calendar in our languages is likely to list; any other country gets
the US order, which is what every page showed before. The venue's `country` is
matched against the countries' codes and their names in our languages (CLDR through
Babel); a venue without one is in the calendar's locale's country.
"""

from __future__ import annotations

import re
from functools import lru_cache

# %A street, %C city, %S state or province, %Z postal code, %n a new line.
FORMATS = {
    "US": "%A%n%C, %S %Z", "CA": "%A%n%C %S %Z", "AU": "%A%n%C %S %Z",
    "GB": "%A%n%C%n%Z", "IE": "%A%n%C%n%S%n%Z", "IN": "%A%n%C %Z%n%S",
    "DE": "%A%n%Z %C", "AT": "%A%n%Z %C", "CH": "%A%n%Z %C", "LI": "%A%n%Z %C",
    "FR": "%A%n%Z %C", "BE": "%A%n%Z %C", "LU": "%A%n%Z %C", "MC": "%A%n%Z %C",
    "NL": "%A%n%Z %C", "DK": "%A%n%Z %C", "NO": "%A%n%Z %C", "SE": "%A%n%Z %C",
    "FI": "%A%n%Z %C", "PL": "%A%n%Z %C", "PT": "%A%n%Z %C", "MA": "%A%n%Z %C",
    "DZ": "%A%n%Z %C", "TN": "%A%n%Z %C",
    "ES": "%A%n%Z %C %S", "IT": "%A%n%Z %C %S", "MX": "%A%n%Z %C, %S",
    "AR": "%A%n%Z %C%n%S", "CL": "%A%n%Z %C%n%S", "CO": "%A%n%C, %S, %Z",
    "BR": "%A%n%C-%S%n%Z",
    "IL": "%A%n%C %Z", "SA": "%A%n%C %Z", "EG": "%A%n%C%n%S%n%Z", "AE": "%A%n%S",
    "JO": "%A%n%C %Z", "LB": "%A%n%C %Z",
}
DEFAULT_FORMAT = FORMATS["US"]
# Languages whose country names are recognised (ours), and names people write often.
NAME_LANGUAGES = ("en", "de", "fr", "es", "ar", "he")
ALIASES = {"usa": "US", "u.s.a.": "US", "u.s.": "US", "uk": "GB", "england": "GB",
           "scotland": "GB", "wales": "GB"}
_FIELD = re.compile(r"(%[ACSZ])")


@lru_cache(maxsize=1)
def _country_codes() -> dict[str, str]:
    from babel import Locale
    found: dict[str, str] = {}
    for language in NAME_LANGUAGES:
        for code, name in Locale.parse(language).territories.items():
            if code.isalpha():  # not the numeric regions ("150": Europe)
                found.setdefault(name.casefold(), code)
    found.update({code.casefold(): code for code in FORMATS})
    found.update(ALIASES)
    return found


def country_code(country: object, default: str | None = None) -> str | None:
    """"DE" for "Germany", "Deutschland", "Allemagne", "de"; `default` when unknown."""
    if not country:
        return default
    return _country_codes().get(str(country).strip().casefold(), default)


def postal_lines(street: str, city: str, region: str, postcode: str,
                 country_code: str | None) -> list[str]:
    """The lines of an address below the name, without the country's. A part the
    country's format has no place for (a German state) is kept, on a line of its own."""
    values = {"A": street, "C": city, "S": region, "Z": postcode}
    form = FORMATS.get(country_code or "", DEFAULT_FORMAT)
    lines = [line for template in form.split("%n") if (line := _line(template, values))]
    lines += [value.strip() for key, value in values.items()
              if f"%{key}" not in form and value.strip()]
    return lines


def _line(template: str, values: dict[str, str]) -> str:
    """One line: what stands between two fields is kept only when both are there (the
    text right before the next field present: "Riverside 92501" without a state)."""
    out, between = "", ""
    for index, part in enumerate(_FIELD.split(template)):
        if index % 2 == 0:
            between = part or between if out else ""
            continue
        value = values[part[1]].strip()
        if value:
            out += (between if out else "") + value
            between = ""
    return out
