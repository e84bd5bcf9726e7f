"""The site's language and regional formats: message catalogs and CLDR data (Babel).

Catalogs are `locales/<language>/LC_MESSAGES/messages.po` in this package (a folder
`<language>_<TERRITORY>` wins over `<language>` when both exist). They are read as .po
at run time (Babel's `read_po`), not compiled to .mo: an editable install from a fresh
clone (`pip install -e .`) runs no build step, so compiled files would be missing or
stale there; reading a catalog takes a few milliseconds, once per process.

English is the language the messages are written in: it needs no catalog.
"""

from __future__ import annotations

import datetime as dt
import gettext
import io
import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from ..model import cost as costs
from ..model.settings import DEFAULT_SETTINGS

LOCALES = Path(__file__).resolve().parent / "locales"
SOURCE_LANGUAGE = "en"


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; translated where shown."""
    return message


def N_plural(singular: str, plural: str) -> tuple[str, str]:
    """Marks a counted message (extracted with the keyword `N_plural:1,2`)."""
    return singular, plural


def site_locale(settings: dict, override: str | None = None) -> str:
    """The locale a build uses: `build --locale`, else calendar.yaml's `locale`."""
    return str(override or settings.get("locale") or DEFAULT_SETTINGS["locale"])


@lru_cache(maxsize=64)
def _locale(tag: str):
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(tag.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return Locale.parse(DEFAULT_SETTINGS["locale"])


def languages() -> list[str]:
    """The catalogs this package has (folder names under locales/)."""
    return sorted(p.parent.parent.name for p in LOCALES.glob("*/LC_MESSAGES/messages.po"))


@lru_cache(maxsize=16)
def translations(tag: str) -> gettext.NullTranslations:
    """The catalog for a locale: its own folder (de_AT), else its language's (de);
    none (the English messages) when there is neither."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import Translations
    locale = _locale(tag)
    for name in (str(locale), locale.language):
        path = LOCALES / name / "LC_MESSAGES" / "messages.po"
        if name != SOURCE_LANGUAGE and path.exists():
            with path.open("rb") as source:
                catalog = read_po(source, locale=locale)
            compiled = io.BytesIO()
            write_mo(compiled, catalog)
            compiled.seek(0)
            return Translations(compiled)
    return gettext.NullTranslations()


class Regional:
    """Words and formats of one locale, as the pages and feeds show them."""

    def __init__(self, tag: str) -> None:
        self.locale = _locale(tag)
        self.tag = str(self.locale)
        self.translations = translations(self.tag)
        # BCP 47, for <html lang> and the browser's Intl formats.
        self.lang = self.tag.replace("_", "-")
        self.dir = "rtl" if self.locale.text_direction == "rtl" else "ltr"
        # Arrows to the previous and next month or day: backwards is to the right in
        # a right-to-left language.
        self.back, self.forward = ("\u2192", "\u2190") if self.dir == "rtl" else ("\u2190",
                                                                                 "\u2192")
        self.english = self.locale.language == SOURCE_LANGUAGE
        self._days: dict[tuple[str, dt.date], str] = {}
        self._times: dict[tuple[int, int], str] = {}
        self._zones: dict[str, str] = {}

    def gettext(self, message: str) -> str:
        return self.translations.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.translations.ngettext(singular, plural, n)

    def plural_forms(self, singular: str, plural: str) -> dict[str, str]:
        """The message for each of the language's CLDR plural categories ("one",
        "few", "other"...), chosen by the catalog's own rule for a number of that
        category: what a script needs to count with the browser's Intl.PluralRules."""
        rule = self.locale.plural_form
        found: dict[str, str] = {}
        for n in (*range(200), 1000000):
            found.setdefault(rule(n), self.ngettext(singular, plural, n))
        return found

    # -- dates and times -----------------------------------------------------------
    def _day(self, skeleton: str, day: dt.date) -> str:
        # A build formats the same few thousand days 100,000 times.
        key = (skeleton, day)
        found = self._days.get(key)
        if found is None:
            from babel.dates import format_date, format_skeleton
            found = self._days[key] = (format_date(day, "full", locale=self.locale)
                                       if skeleton == "full" else
                                       format_skeleton(skeleton, day, locale=self.locale))
        return found

    def long_date(self, day: dt.date | dt.datetime) -> str:
        """"Friday, December 11, 2026"; "Freitag, 11. Dezember 2026"."""
        return self._day("full", dt.date(day.year, day.month, day.day))

    def short_date(self, day: dt.date | dt.datetime) -> str:
        """"Sat, Dec 5"; "Sa., 5. Dez."."""
        return self._day("MMMEd", dt.date(day.year, day.month, day.day))

    def day_month(self, day: dt.date, year: bool = False) -> str:
        """"Dec 12" ("Dec 12, 2026" with the year)."""
        return self._day("yMMMd" if year else "MMMd", day)

    def month_name(self, day: dt.date) -> str:
        """"December 2026"; "diciembre de 2026"."""
        return self._day("yMMMM", dt.date(day.year, day.month, 1))

    def month_abbr(self, month: int) -> str:
        """"Dec": a month alone, as a date badge or a month menu shows it."""
        return self.locale.months["stand-alone"]["abbreviated"][month]

    def weekdays(self, first: int) -> list[tuple[str, str]]:
        """(full, short) names of the days of a week starting on `first` (0 = Monday)."""
        wide = self.locale.days["stand-alone"]["wide"]
        short = self.locale.days["stand-alone"]["abbreviated"]
        return [(wide[(first + i) % 7], short[(first + i) % 7]) for i in range(7)]

    def clock(self, moment: dt.datetime) -> str:
        """"8:00 pm" (English keeps WordPress's default `g:i a`); "20:00"."""
        key = (moment.hour, moment.minute)
        found = self._times.get(key)
        if found is None:
            from babel.dates import format_time
            found = format_time(dt.time(moment.hour, moment.minute), "short",
                                locale=self.locale)
            if self.english:
                found = found.replace("\u202f", " ").replace("AM", "am").replace("PM", "pm")
            self._times[key] = found
        return found

    def zone_name(self, tzname: str, year: int) -> str:
        """"Pacific Time"; "Nordamerikanische Westküstenzeit" (CLDR's generic name)."""
        from . import zonenames
        if self.english:
            return zonenames.zone_name(tzname, year)
        found = self._zones.get(tzname)
        if found is None:
            from babel.dates import get_timezone, get_timezone_name
            try:
                found = get_timezone_name(get_timezone(tzname), "long", locale=self.locale,
                                          zone_variant="generic")
            except LookupError:
                found = zonenames.zone_name(tzname, year)
            self._zones[tzname] = found
        return found

    # -- numbers -------------------------------------------------------------------
    def cost(self, stored: object, code: str, symbol: str, position: str,
             foreign: str = "") -> str:
        """An event's cost as HTML text. English pages keep the plugin's display (the
        calendar's symbol and its side, spec 2.4); other languages write amounts as
        CLDR has them for the locale and the event's currency: "8 €", "1.200,50 $"."""
        if self.english:
            return costs.format_cost(stored, symbol, position, foreign)
        found = costs.price_range(stored)
        if found is None:
            return costs.format_cost(stored, symbol, position, foreign)  # text only
        low, high = (self.amount(Decimal(v), code) for v in found)
        return low if low == high else f"{low} \u2013 {high}"

    def amount(self, value: Decimal, code: str) -> str:
        from babel.numbers import format_currency
        from markupsafe import escape
        if value == 0:
            return str(escape(self.gettext("Free")))
        pattern = self.locale.currency_formats["standard"].pattern
        if value == value.to_integral_value():
            pattern = re.sub(r"0\.0+", "0", pattern)  # "8 €", not "8,00 €"
        return str(escape(format_currency(value, code or "USD", pattern, locale=self.locale,
                                          currency_digits=False)))
