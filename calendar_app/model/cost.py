"""Event cost: parsing what editors typed and formatting it like the plugin (spec 2.4, 4.4).

A stored cost is exactly what the editor or client gave: None, a string, a number, or
a list of those. Everything shown to clients is derived here on read, so nothing is
lost by normalising too early.

Number syntax: digits, "," only as a thousands separator when followed by exactly three
digits ("1,000"), "." as the decimal point. That is the plugin's default locale setup;
it also makes "5,10" read as the list 5 and 10 rather than a European 5.10.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from .slugs import sanitize_title

__all__ = ["cost_details", "cost_values", "currency", "foreign_symbol", "format_cost",
           "price_range"]

# Digits spelled [0-9]: other Unicode digits are not amounts anyone types for a price.
_NUM = r"[0-9]+(?:,[0-9]{3}(?![0-9]))*(?:\.[0-9]+)?"
# A currency marker sits right next to an amount (one optional space). Separators of
# ranges and lists never count as part of it.
_MARK = r"[^\s0-9,;:/()\[\]+~\-\u2013\u2014.]+"
# A trailing marker that runs straight into the next amount ("$5 $10") belongs to it.
_AMOUNT = re.compile(rf"(?P<pre>{_MARK})?\s?(?P<num>{_NUM})(?:\s?(?P<post>{_MARK})(?!\s?[0-9]))?")
# Lower-case symbols in real use that are neither ISO codes nor Unicode currency signs.
_WORD_SYMBOLS = frozenset({"kr", "kr.", "zł", "kč", "ft", "lei", "rs", "rs.", "rp", "lv"})
_EN_DASH = "\u2013"
# How English text names a currency next to another one's amounts (Unicode CLDR's "en"
# symbols, with its US$ for the dollar): only the currencies a calendar is likely to
# meet; any other code is shown as the code itself ("SEK 25").
CURRENCY_SYMBOLS = {
    "USD": "US$", "CAD": "CA$", "AUD": "A$", "NZD": "NZ$", "MXN": "MX$", "HKD": "HK$",
    "TWD": "NT$", "BRL": "R$", "EUR": "\u20ac", "GBP": "\u00a3", "JPY": "\u00a5",
    "CNY": "CN\u00a5", "INR": "\u20b9", "KRW": "\u20a9", "ILS": "\u20aa", "VND": "\u20ab",
    "PHP": "\u20b1", "XAF": "FCFA", "XOF": "F\u202fCFA",
}
# The plugin's default currency code, for a calendar that names none.
DEFAULT_CODE = "USD"


@dataclass(frozen=True)
class _Amount:
    text: str  # as written, thousands separators included
    value: Decimal
    symbol: str
    position: str


def _stored_strings(stored: object) -> list[str]:
    """Flatten a stored cost into its non-empty string values."""
    items: Iterable[object]
    if stored is None:
        return []
    items = stored if isinstance(stored, list | tuple) else [stored]
    out: list[str] = []
    for item in items:
        if isinstance(item, bool) or item is None:
            continue  # YAML booleans are not costs
        if isinstance(item, int):
            out.append(str(item))
        elif isinstance(item, float) and math.isfinite(item):
            # PHP prints 12.0 as "12"; keep that so values look as typed.
            out.append(str(int(item)) if item.is_integer() else repr(item))
        elif isinstance(item, str) and item.strip():
            out.append(item.strip())
    return out


def _is_symbol(mark: str | None) -> bool:
    if not mark:
        return False
    if any(unicodedata.category(ch) == "Sc" for ch in mark):
        return len(mark) <= 5  # "$", "€", "US$", "R$"
    if len(mark) == 3 and mark.isascii() and mark.isalpha() and mark.isupper():
        return True  # ISO 4217 code: EUR, CHF
    return mark.lower() in _WORD_SYMBOLS


def _amounts(text: str) -> list[_Amount]:
    found = []
    for m in _AMOUNT.finditer(text):
        pre, post = m.group("pre"), m.group("post")
        symbol, position = "", ""
        # A marker on both sides ("$20 USD") is read as the leading one.
        if _is_symbol(pre):
            symbol, position = pre or "", "prefix"
        elif _is_symbol(post):
            symbol, position = post or "", "postfix"
        number = m.group("num")
        found.append(_Amount(number, Decimal(number.replace(",", "")), symbol, position))
    return found


def _parse(stored: object) -> tuple[tuple[_Amount, ...], tuple[str, ...]]:
    """Numeric amounts (input order) and purely textual values (as typed)."""
    if isinstance(stored, str):
        return _parse_text(stored)  # a representation parses its cost four times
    return _parse_values(_stored_strings(stored))


@lru_cache(maxsize=4096)
def _parse_text(stored: str) -> tuple[tuple[_Amount, ...], tuple[str, ...]]:
    return _parse_values(_stored_strings(stored))


def _parse_values(values: list[str]) -> tuple[tuple[_Amount, ...], tuple[str, ...]]:
    amounts: list[_Amount] = []
    texts: list[str] = []
    for value in values:
        found = _amounts(value)
        if found:
            amounts.extend(found)
        else:
            texts.append(value)
    return tuple(amounts), tuple(texts)


def _sorted_unique(amounts: Iterable[_Amount]) -> list[_Amount]:
    seen: dict[Decimal, _Amount] = {}
    for amount in amounts:
        seen.setdefault(amount.value, amount)  # "5" and "5.00" count once; first wins
    return sorted(seen.values(), key=lambda a: a.value)


def cost_values(stored: object) -> list[str]:
    """``cost_details.values``: numbers as written, ascending; then slugified texts."""
    amounts, texts = _parse(stored)
    values = [a.text for a in _sorted_unique(amounts)]
    for text in texts:
        slug = sanitize_title(text)
        if slug and slug not in values:
            values.append(slug)
    return values


def currency(stored: object) -> tuple[str, str]:
    """``(symbol, position)`` found in the input, or ``("", "")``.

    Only when every amount carries the same symbol on the same side (spec 4.4): "$5 - 15"
    or "5 - 15 EUR" are ambiguous and give nothing.
    """
    amounts, _ = _parse(stored)
    marks = {(a.symbol, a.position) for a in amounts}
    if len(marks) == 1:
        symbol, position = marks.pop()
        return symbol, position
    return "", ""


def _esc_html(text: str) -> str:
    # WordPress esc_html: the five special characters, single quote as &#039;.
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#039;")
    )


def _is_free_text(text: str) -> bool:
    return sanitize_title(text) == "free"


def foreign_symbol(code: object, calendar_code: object) -> str:
    """The symbol that names an event's currency (ISO 4217 `code`) on a calendar whose
    currency is `calendar_code` (``"CA$"`` for CAD on a USD calendar); ``""`` when they
    are the same or the event names none: then the calendar's own symbol is right."""
    code = str(code or "").strip().upper()
    if not code or code == (str(calendar_code or "").strip().upper() or DEFAULT_CODE):
        return ""
    return CURRENCY_SYMBOLS.get(code, code + "\u00a0")


def format_cost(stored: object, symbol: str, position: str, foreign: str = "") -> str:
    """The plugin's display string: ``"$5 – $15"``, ``"Free – 30$"``, ``"Donation"``.

    `symbol`/`position` are the calendar (or event) defaults, used when the input had
    no symbol of its own. The symbol goes after the amount only for ``"postfix"``.
    A textual "Free" next to amounts counts as zero; other text is ignored then.
    Several purely textual values are joined with ", ".

    `foreign` (the site's, never the API's): the event currency's `foreign_symbol`. It
    replaces the default and a typed symbol it ends with: "$25" of a CAD event on a
    USD calendar is "CA$25", as is "25" (before the amount whatever the calendar's
    position); a typed "25 CAD" stays as typed.
    """
    amounts, texts = _parse(stored)
    if not amounts:
        return _esc_html(", ".join(dict.fromkeys(texts)))
    parsed_symbol, parsed_position = currency(stored)
    if foreign and (not parsed_symbol or foreign.endswith(parsed_symbol)):
        # Before the amount, as English writes it, unless typed after it ("25$").
        parsed_symbol, parsed_position = foreign, parsed_position or "prefix"
    symbol = parsed_symbol or symbol
    position = parsed_position or position
    ordered = _sorted_unique(amounts)
    low, high = ordered[0], ordered[-1]
    if any(_is_free_text(t) for t in texts):
        low = _Amount("0", Decimal(0), "", "")

    def show(amount: _Amount) -> str:
        if amount.value == 0:
            return "Free"
        if position == "postfix":
            return amount.text + symbol
        return symbol + amount.text

    shown_low, shown_high = show(low), show(high)
    if low.value == high.value:
        return _esc_html(shown_low)
    return _esc_html(f"{shown_low} {_EN_DASH} {shown_high}")


def cost_details(stored: object, currency_code: str = "") -> dict[str, object]:
    """``cost_details`` object, keys in the plugin's order."""
    symbol, position = currency(stored)
    return {
        "currency_symbol": symbol,
        "currency_code": currency_code,
        "currency_position": position,
        "values": cost_values(stored),
    }


def price_range(stored: object) -> tuple[str, str] | None:
    """``(lowest, highest)`` price for schema.org offers, as plain numbers ("1200", not
    the "1,200" written); "0" for free. None when there is no cost or it is only text
    other than "Free" (schema.org wants a number, so the caller leaves offers out)."""
    amounts, texts = _parse(stored)
    values = sorted({a.value for a in amounts})
    if any(_is_free_text(t) for t in texts) and (not values or values[0] != 0):
        values.insert(0, Decimal(0))
    if not values:
        return None
    return _plain(values[0]), _plain(values[-1])


def _plain(value: Decimal) -> str:
    return "0" if value == 0 else format(value, "f")
