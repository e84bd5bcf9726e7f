"""Tests for calendar_app.model.slugs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.model.slugs import RESERVED, is_safe_slug, sanitize_title, unique_slug


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Summer Fête & BBQ!", "summer-fete-bbq"),
        ("Jazz Night #1", "jazz-night-1"),
        ("Ann's River Clean-Up", "anns-river-clean-up"),
        ("  Hello   World  ", "hello-world"),
        ("<strong>Bold</strong> move", "bold-move"),
        ("Rock &amp; Roll &#8211; Live", "rock-roll-live"),
        ("Straße Ærø Øresund Łódź Œuvre", "strasse-aero-oresund-lodz-oeuvre"),
        ("Crème brûlée à la carte", "creme-brulee-a-la-carte"),
        ("v1.2/beta", "v1-2-beta"),
        ("snake_case stays", "snake_case-stays"),
        ("---dashes---everywhere---", "dashes-everywhere"),
        ("Meet\u2013up \u2014 now", "meet-up-now"),
        ("ﬁve ① ＡＢＣ", "five-1-abc"),
        ("Концерт 2026", "2026"),
        ("Концерт", ""),
        ("🎉", ""),
        ("", ""),
        ("a < b", "a-b"),
    ],
)
def test_sanitize_title(title: str, slug: str) -> None:
    assert sanitize_title(title) == slug


def test_sanitize_title_truncates_to_200() -> None:
    slug = sanitize_title("word " * 100)
    assert len(slug) <= 200
    assert not slug.endswith("-")
    assert sanitize_title("a" * 250) == "a" * 200


def test_reserved_words() -> None:
    assert {"feed", "rdf", "rss", "rss2", "atom", "embed"} == RESERVED


def test_unique_slug() -> None:
    taken = {"summer-fete-bbq", "summer-fete-bbq-2", "jazz"}
    assert unique_slug("new-one", taken.__contains__) == "new-one"
    assert unique_slug("jazz", taken.__contains__) == "jazz-2"
    assert unique_slug("summer-fete-bbq", taken.__contains__) == "summer-fete-bbq-3"
    assert unique_slug("feed", lambda s: False) == "feed-2"
    assert unique_slug("embed", {"embed-2"}.__contains__) == "embed-3"


def test_unique_slug_keeps_length_limit() -> None:
    base = "a" * 199 + "b"
    got = unique_slug(base, {base}.__contains__)
    assert got == "a" * 198 + "-2"
    assert len(got) <= 200


def test_unique_slug_rejects_empty_base() -> None:
    with pytest.raises(ValueError):
        unique_slug("", lambda s: False)


@pytest.mark.parametrize(
    "slug",
    ["jazz-night", "a", "2026", "under_score", "v1.2", "x" * 200, "file.yaml"],
)
def test_safe_slugs(slug: str) -> None:
    assert is_safe_slug(slug)


@pytest.mark.parametrize(
    "slug",
    [
        "",
        "x" * 201,
        "..",
        "a..b",
        ".hidden",
        "../etc/passwd",
        "a/b",
        "a\\b",
        "nul\x00byte",
        "tab\there",
        "new\nline",
        "trailing\n",
        "with space",
        "Upper",
        "fête",
        "%2e%2e",
        None,
        42,
    ],
)
def test_unsafe_slugs(slug: object) -> None:
    assert not is_safe_slug(slug)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_sanitize_title_is_safe_and_idempotent(text: str) -> None:
    slug = sanitize_title(text)
    assert slug == "" or is_safe_slug(slug)
    assert "." not in slug
    assert sanitize_title(slug) == slug


@settings(max_examples=200, deadline=None)
@given(
    base=st.text(alphabet="abc-", min_size=1, max_size=8).filter(lambda s: s.strip("-")),
    taken=st.sets(st.text(alphabet="abc-23", min_size=1, max_size=10), max_size=20),
)
def test_unique_slug_never_returns_a_taken_slug(base: str, taken: set[str]) -> None:
    taken = taken | {base, f"{base}-2"}
    slug = unique_slug(base, taken.__contains__)
    assert slug not in taken
    assert slug not in RESERVED
    assert slug.startswith(base)
