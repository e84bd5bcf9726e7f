"""Tests for calendar_app.model.cost (spec 2.4 and 4.4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.model.cost import (
    cost_details,
    cost_values,
    currency,
    foreign_symbol,
    format_cost,
    price_range,
)

DASH = "\u2013"


# The spec's examples, with the site defaults `$` / prefix.
@pytest.mark.parametrize(
    ("stored", "shown", "symbol", "position", "values"),
    [
        ("25", "$25", "", "", ["25"]),
        ("20$", "20$", "$", "postfix", ["20"]),
        (["0$", "20$", "30$"], f"Free {DASH} 30$", "$", "postfix", ["0", "20", "30"]),
        ("5 - 15", f"$5 {DASH} $15", "", "", ["5", "15"]),
        ("Free", "Free", "", "", ["free"]),
    ],
)
def test_spec_examples(
    stored: object, shown: str, symbol: str, position: str, values: list[str]
) -> None:
    assert format_cost(stored, "$", "prefix") == shown
    assert cost_details(stored) == {
        "currency_symbol": symbol,
        "currency_code": "",
        "currency_position": position,
        "values": values,
    }


def test_default_symbol_postfix() -> None:
    assert format_cost("15", "EUR", "postfix") == "15EUR"
    assert format_cost("5 - 15", "EUR", "postfix") == f"5EUR {DASH} 15EUR"


def test_parsed_symbol_beats_default() -> None:
    assert format_cost("$20", "EUR", "postfix") == "$20"
    assert format_cost("20 EUR", "$", "prefix") == "20EUR"


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("$20", ("$", "prefix")),
        ("20$", ("$", "postfix")),
        ("20 EUR", ("EUR", "postfix")),
        ("€ 20", ("€", "prefix")),
        ("$5 - $15", ("$", "prefix")),
        ("$5 $10", ("$", "prefix")),
        ("5€, 10€", ("€", "postfix")),
        (["$5", "$10"], ("$", "prefix")),
        ("20 kr", ("kr", "postfix")),
        ("$5 - 15", ("", "")),  # one amount without a symbol: ambiguous
        ("$5 - 15€", ("", "")),
        (["5$", "$10"], ("", "")),
        ("25", ("", "")),
        ("Free", ("", "")),
        ("20 tickets", ("", "")),  # a word is not a currency
        (None, ("", "")),
    ],
)
def test_currency(stored: object, expected: tuple[str, str]) -> None:
    assert currency(stored) == expected


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("10-20", ["10", "20"]),
        ("5, 10", ["5", "10"]),
        ("12.50", ["12.50"]),
        ("1,000", ["1,000"]),
        ("1,000.50 - 999", ["999", "1,000.50"]),
        (["20", "5", "10", "5"], ["5", "10", "20"]),
        (["5", "5.00"], ["5"]),
        ([30, 7.5, 12.0], ["7.5", "12", "30"]),
        (["Donation", "Pay what you want", "Donation"], ["donation", "pay-what-you-want"]),
        (["Free", "20"], ["20", "free"]),
        (None, []),
        ("", []),
        ([], []),
        ([None, True, "  "], []),
    ],
)
def test_cost_values(stored: object, expected: list[str]) -> None:
    assert cost_values(stored) == expected


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, ""),
        ("", ""),
        ([], ""),
        ("0", "Free"),
        ("0.00", "Free"),
        ("Donation", "Donation"),
        (["Donation", "Raffle"], "Donation, Raffle"),
        (["Free", "20"], f"Free {DASH} $20"),
        ("10-20", f"$10 {DASH} $20"),
        ("12.50", "$12.50"),
        (["5", "5.00"], "$5"),
        (25, "$25"),
        ("Tickets 20 at the door", "$20"),
        ("Tom & Jerry's <b>", "Tom &amp; Jerry&#039;s &lt;b&gt;"),
        ("$20 USD", "$20"),
        ("1,000 - 2,500", f"$1,000 {DASH} $2,500"),
    ],
)
def test_format_cost(stored: object, expected: str) -> None:
    assert format_cost(stored, "$", "prefix") == expected


def test_cost_details_key_order_and_code() -> None:
    got = cost_details("$20", "USD")
    assert list(got) == ["currency_symbol", "currency_code", "currency_position", "values"]
    assert got["currency_code"] == "USD"


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, None),
        ("", None),
        ("Donation", None),
        ("Free", ("0", "0")),
        (["0$", "20$"], ("0", "20")),
        ("5 - 15", ("5", "15")),
        ("$12.50 - $20", ("12.50", "20")),
        (["Free", "20"], ("0", "20")),
        ("$1,200 - $950", ("950", "1200")),  # schema.org numbers: no thousands separator
        ("CA$25", ("25", "25")),
    ],
)
def test_price_range(stored: object, expected: tuple[str, str] | None) -> None:
    assert price_range(stored) == expected


_COST_TEXT = st.one_of(
    st.text(max_size=30),
    st.lists(st.sampled_from(["$", "€", "EUR", " ", "-", ",", ".", "5", "10", "0", "Free"])).map(
        "".join
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_COST_TEXT, st.lists(_COST_TEXT, max_size=4)))
def test_cost_functions_never_fail(stored: object) -> None:
    shown = format_cost(stored, "$", "prefix")
    assert "<" not in shown and ">" not in shown
    values = cost_values(stored)
    assert all(isinstance(v, str) and v for v in values)
    assert len(values) == len(set(values))
    assert currency(stored)[1] in ("", "prefix", "postfix")
    prices = price_range(stored)
    assert prices is None or all(p[0].isdigit() and "," not in p for p in prices)


# -- the site's cost in the event's own currency ---------------------------------------
@pytest.mark.parametrize(("code", "calendar", "symbol"), [
    ("CAD", "USD", "CA$"), ("cad", "usd", "CA$"), ("USD", "CAD", "US$"), ("EUR", "USD", "\u20ac"),
    ("USD", "USD", ""), ("USD", "", ""), ("", "USD", ""), ("CAD", None, "CA$"),
    ("SEK", "USD", "SEK\u00a0"),
])
def test_foreign_symbol(code: str, calendar: str | None, symbol: str) -> None:
    assert foreign_symbol(code, calendar) == symbol


@pytest.mark.parametrize(("stored", "shown"), [
    ("25", "CA$25"),
    ("$25", "CA$25"),  # the typed "$" is the Canadian one
    ("25$", "25CA$"),
    ("5 - 15", f"CA$5 {DASH} CA$15"),
    ("25 CAD", "25CAD"),  # unambiguous as typed
    ("\u20ac25", "\u20ac25"),  # another currency typed on purpose
    ("Free", "Free"),
])
def test_format_cost_in_a_foreign_currency(stored: str, shown: str) -> None:
    assert format_cost(stored, "$", "prefix", "CA$") == shown
    assert format_cost(stored, "\u20ac", "postfix", "CA$") == shown  # the calendar's side too
