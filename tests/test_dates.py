"""Tests for calendar_app.model.dates (parsing, zones, local/UTC conversion, formatting)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.model.dates import (
    DateError,
    abbreviation,
    details,
    fmt,
    from_utc,
    in_dst_gap,
    offset_iso,
    parse_datetime,
    parse_file_time,
    to_utc,
    zone,
)

# Saturday 21 November 2026, 09:30:15 in New York (EST, UTC-5).
NOW = datetime(2026, 11, 21, 14, 30, 15, tzinfo=UTC)
NY = zone("America/New_York")


def parse(value: object, tz_name: str = "America/New_York") -> str:
    return fmt(parse_datetime(value, zone(tz_name), NOW))


# ---------------------------------------------------------------- zone()


@pytest.mark.parametrize(
    ("name", "offset"),
    [
        ("UTC", timedelta(0)),
        ("UTC+0", timedelta(0)),
        ("UTC-5", timedelta(hours=-5)),
        ("UTC+5.5", timedelta(hours=5, minutes=30)),
        ("UTC+5:30", timedelta(hours=5, minutes=30)),
        ("UTC+5.75", timedelta(hours=5, minutes=45)),
        ("UTC-3.5", timedelta(hours=-3, minutes=-30)),
        ("UTC+14", timedelta(hours=14)),
    ],
)
def test_zone_fixed_offsets(name: str, offset: timedelta) -> None:
    assert zone(name).utcoffset(datetime(2026, 1, 1)) == offset


def test_zone_iana_names_and_cache() -> None:
    assert zone("America/New_York") is zone("America/New_York")
    assert zone("Europe/Berlin").utcoffset(datetime(2026, 7, 1)) == timedelta(hours=2)
    assert zone("Asia/Kolkata").utcoffset(datetime(2026, 7, 1)) == timedelta(hours=5, minutes=30)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Mars/Olympus_Mons",
        "America",
        "../../etc/passwd",
        "/etc/localtime",
        "Europe/../UTC",
        "America/New_York\x00",
        "utc+5",
        "UTC+15",
        "UTC+5:75",
        "UTC+",
        "New York",
        "x" * 300,
    ],
)
def test_zone_rejects_unknown_names(name: str) -> None:
    with pytest.raises(DateError):
        zone(name)


# ---------------------------------------------------------- parse_datetime()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-11 19:30:00", "2026-12-11 19:30:00"),
        ("2026-12-11 19:30", "2026-12-11 19:30:00"),
        ("2026-12-11", "2026-12-11 00:00:00"),
        ("2026-12-11T19:30", "2026-12-11 19:30:00"),
        ("2026-12-11T19:30:00.250", "2026-12-11 19:30:00"),
        ("2026/12/11", "2026-12-11 00:00:00"),
        ("12/11/2026", "2026-12-11 00:00:00"),
        ("11-12-2026", "2026-12-11 00:00:00"),
        ("11.12.2026", "2026-12-11 00:00:00"),
        ("December 11, 2026", "2026-12-11 00:00:00"),
        ("11 December 2026 7:30pm", "2026-12-11 19:30:00"),
        ("Dec 11 2026 19:30", "2026-12-11 19:30:00"),
        ("Friday, December 11th 2026 7:30 p.m.", "2026-12-11 19:30:00"),
        ("december 2026", "2026-12-01 00:00:00"),
        ("2026-3-7 9:05", "2026-03-07 09:05:00"),
        ("  2026-12-11 19:30  ", "2026-12-11 19:30:00"),
        ("0001-01-01 00:00:00", "0001-01-01 00:00:00"),
        ("9999-12-31 23:59:59", "9999-12-31 23:59:59"),
    ],
)
def test_parse_absolute(text: str, expected: str) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Explicit offsets are converted into the target zone (deliberate deviation).
        ("2026-12-11T19:30:00Z", "2026-12-11 14:30:00"),
        ("2026-12-11 19:30:00+02:00", "2026-12-11 12:30:00"),
        ("2026-12-11T19:30:00+0200", "2026-12-11 12:30:00"),
        ("2026-12-11T19:30:00-05:00", "2026-12-11 19:30:00"),
        ("2026-12-11 19:30 UTC", "2026-12-11 14:30:00"),
        # Timestamps are instants too.
        ("1735722000", "2025-01-01 04:00:00"),
        ("@1735722000", "2025-01-01 04:00:00"),
        ("0", "1969-12-31 19:00:00"),
    ],
)
def test_parse_instants_are_converted(text: str, expected: str) -> None:
    assert parse(text) == expected


def test_parse_timestamp_in_utc_zone() -> None:
    assert parse("1735722000", "UTC") == "2025-01-01 09:00:00"
    assert parse("2026-12-11T19:30:00+02:00", "UTC+5.5") == "2026-12-11 23:00:00"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", "2026-11-21 09:30:15"),
        ("NOW", "2026-11-21 09:30:15"),
        ("today", "2026-11-21 00:00:00"),
        ("midnight", "2026-11-21 00:00:00"),
        ("noon", "2026-11-21 12:00:00"),
        ("tomorrow", "2026-11-22 00:00:00"),
        ("yesterday", "2026-11-20 00:00:00"),
        ("tomorrow 9am", "2026-11-22 09:00:00"),
        ("  Tomorrow  9AM ", "2026-11-22 09:00:00"),
        ("tomorrow at 9:15 am", "2026-11-22 09:15:00"),
        ("yesterday 23:59", "2026-11-20 23:59:00"),
        ("today 14:30", "2026-11-21 14:30:00"),
        ("9am tomorrow", "2026-11-22 00:00:00"),  # strtotime: the keyword resets the time
        ("next wednesday 4pm", "2026-11-25 16:00:00"),
        ("last monday", "2026-11-16 00:00:00"),
        ("monday", "2026-11-23 00:00:00"),
        ("saturday", "2026-11-21 00:00:00"),  # today is Saturday: stays today
        ("next saturday", "2026-11-28 00:00:00"),
        ("last saturday", "2026-11-14 00:00:00"),
        ("this friday", "2026-11-27 00:00:00"),
        ("+5 days 11am", "2026-11-26 11:00:00"),
        ("-1 week", "2026-11-14 09:30:15"),
        ("+2 hours", "2026-11-21 11:30:15"),
        ("+90 minutes", "2026-11-21 11:00:15"),
        ("+1 month", "2026-12-21 09:30:15"),
        ("+1 year", "2027-11-21 09:30:15"),
        ("1 day ago", "2026-11-20 09:30:15"),
        ("2 weeks ago", "2026-11-07 09:30:15"),
        ("next week", "2026-11-28 09:30:15"),
        ("last month", "2026-10-21 09:30:15"),
        ("+1 week 2 days", "2026-11-30 09:30:15"),
        ("2026-12-11 +1 day", "2026-12-12 00:00:00"),
    ],
)
def test_parse_relative(text: str, expected: str) -> None:
    assert parse(text) == expected


def test_relative_is_resolved_in_the_target_zone() -> None:
    # 14:30 UTC is already Sunday 00:30 in Kiritimati (UTC+14).
    assert parse("today", "Pacific/Kiritimati") == "2026-11-22 00:00:00"
    assert parse("tomorrow", "UTC-5") == "2026-11-22 00:00:00"


def test_month_arithmetic_overflows_like_php() -> None:
    now = datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert fmt(parse_datetime("+1 month", UTC, now)) == "2026-03-03 12:00:00"


def test_hours_are_elapsed_time_across_dst() -> None:
    # 2026-03-08 01:30 EST + 1 hour = 03:30 EDT (02:30 does not exist).
    now = datetime(2026, 3, 8, 6, 30, tzinfo=UTC)
    assert fmt(parse_datetime("+1 hour", NY, now)) == "2026-03-08 03:30:00"
    assert fmt(parse_datetime("+1 day", NY, now)) == "2026-03-09 01:30:00"


def test_parse_non_string_values() -> None:
    assert parse_datetime(datetime(2026, 12, 11, 19, 30, 5, 999), NY, NOW) == datetime(
        2026, 12, 11, 19, 30, 5
    )
    aware = datetime(2026, 12, 12, 0, 30, tzinfo=UTC)
    assert parse_datetime(aware, NY, NOW) == datetime(2026, 12, 11, 19, 30)
    assert parse_datetime(date(2026, 12, 11), NY, NOW) == datetime(2026, 12, 11)
    assert parse_datetime(1735722000, UTC, NOW) == datetime(2025, 1, 1, 9)
    assert parse_datetime(1735722000.9, UTC, NOW) == datetime(2025, 1, 1, 9)


def test_naive_now_is_taken_as_utc() -> None:
    assert parse_datetime("now", NY, NOW.replace(tzinfo=None)) == datetime(2026, 11, 21, 9, 30, 15)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "before my birthday",
        "2026-02-30",
        "2026-13-01",
        "2026-12-11 24:00",
        "2026-12-11 19:60",
        "0000-01-01",
        "10000-01-01",
        "13pm",
        "0am",
        "ago",
        "tomorrow tomorrow next",
        "2026-12-11 10:00 11:00",
        "2026-12-11 2026-12-12",
        "2026-12-11T19:30:00+25:00",
        "9999-12-31 23:59:59 -05:00",
        "+99999999 years",
        "999999999999999",
        "../../etc/passwd",
        "\x00",
        "next",
        "1 " * 80,
        None,
        True,
        [],
        float("nan"),
        float("inf"),
        10**20,
    ],
)
def test_parse_rejects(value: object) -> None:
    with pytest.raises(DateError):
        parse_datetime(value, NY, NOW)


def test_error_is_a_value_error_with_a_short_message() -> None:
    with pytest.raises(ValueError, match="unrecognised") as info:
        parse_datetime("before my birthday", NY, NOW)
    assert len(str(info.value)) < 60


def test_iso_fast_path_is_fast() -> None:
    start = time.perf_counter()
    for _ in range(2000):
        parse_datetime("2026-12-11 19:30:00", NY, NOW)
    assert time.perf_counter() - start < 1.0


_TOKENS = st.sampled_from(
    list("0123456789 -+:/.,@tz")
    + ["next ", "last ", "monday", "dec", "day", "days", "ago", "month", "hours", "now"]
    + ["tomorrow", "utc", "am", "pm", "9999", "0000", "2026-", "12:30", "\x00", "é"]
)
_ZONES = st.sampled_from(["UTC", "America/New_York", "UTC+14", "UTC-12", "Asia/Kathmandu"])


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(st.text(max_size=40), st.lists(_TOKENS, max_size=8).map("".join)),
    tz_name=_ZONES,
)
def test_parse_arbitrary_text_only_raises_date_error(text: str, tz_name: str) -> None:
    try:
        result = parse_datetime(text, zone(tz_name), NOW)
    except DateError:
        return
    assert isinstance(result, datetime)
    assert result.tzinfo is None
    assert result.microsecond == 0


@settings(max_examples=200, deadline=None)
@given(
    moment=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    tz_name=_ZONES,
)
def test_fmt_parse_round_trip(moment: datetime, tz_name: str) -> None:
    moment = moment.replace(microsecond=0)
    assert parse_datetime(fmt(moment), zone(tz_name), NOW) == moment


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**10), max_value=10**11))
def test_timestamp_round_trip(ts: int) -> None:
    local = parse_datetime(str(ts), UTC, NOW)
    assert local == datetime(1970, 1, 1) + timedelta(seconds=ts)


# ------------------------------------------------------ local <-> UTC, DST


def test_to_and_from_utc() -> None:
    local = datetime(2026, 12, 11, 19, 30)
    assert to_utc(local, NY) == datetime(2026, 12, 12, 0, 30)
    assert from_utc(datetime(2026, 12, 12, 0, 30), NY) == local
    assert to_utc(local, zone("UTC+5.5")) == datetime(2026, 12, 11, 14, 0)
    assert to_utc(datetime(2026, 6, 14, 9), NY) == datetime(2026, 6, 14, 13)


def test_dst_gap() -> None:
    gap = datetime(2026, 3, 8, 2, 30)  # clocks jump 02:00 -> 03:00 in New York
    assert in_dst_gap(gap, NY)
    assert not in_dst_gap(datetime(2026, 3, 8, 3, 30), NY)
    assert not in_dst_gap(datetime(2026, 3, 8, 1, 59), NY)
    assert not in_dst_gap(gap, zone("UTC-5"))
    assert in_dst_gap(datetime(2026, 3, 29, 2, 15), zone("Europe/Berlin"))
    # fold=0: the offset before the jump (EST), i.e. 07:30 UTC = 03:30 EDT.
    assert to_utc(gap, NY) == datetime(2026, 3, 8, 7, 30)


def test_ambiguous_time_uses_first_occurrence() -> None:
    ambiguous = datetime(2026, 11, 1, 1, 30)  # happens twice in New York
    assert not in_dst_gap(ambiguous, NY)
    assert to_utc(ambiguous, NY) == datetime(2026, 11, 1, 5, 30)  # EDT
    assert to_utc(ambiguous.replace(fold=1), NY) == datetime(2026, 11, 1, 5, 30)
    second = from_utc(datetime(2026, 11, 1, 6, 30), NY)
    assert second == ambiguous
    assert second.fold == 0
    assert abbreviation(ambiguous, NY, "America/New_York") == "EDT"


def test_to_utc_out_of_range() -> None:
    with pytest.raises(DateError):
        to_utc(datetime(1, 1, 1), zone("UTC+5"))
    with pytest.raises(DateError):
        from_utc(datetime(9999, 12, 31, 23), zone("UTC+5"))


# ------------------------------------------------------- names and formats


@pytest.mark.parametrize(
    ("local", "name", "expected"),
    [
        (datetime(2026, 1, 15, 12), "America/New_York", "EST"),
        (datetime(2026, 7, 15, 12), "America/New_York", "EDT"),
        (datetime(2026, 1, 15, 12), "Europe/Berlin", "CET"),
        (datetime(2026, 7, 15, 12), "Europe/Berlin", "CEST"),
        (datetime(2026, 7, 15, 12), "Europe/Istanbul", "+03"),
        (datetime(2026, 7, 15, 12), "UTC", "UTC"),
        (datetime(2026, 7, 15, 12), "UTC+0", "UTC+0"),
        (datetime(2026, 7, 15, 12), "UTC-5", "UTC-5"),
        (datetime(2026, 7, 15, 12), "UTC+5.5", "UTC+5.5"),
    ],
)
def test_abbreviation(local: datetime, name: str, expected: str) -> None:
    assert abbreviation(local, zone(name), name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("UTC", "2026-11-22T09:00:00+00:00"),
        ("America/New_York", "2026-11-22T09:00:00-05:00"),
        ("UTC+5.5", "2026-11-22T09:00:00+05:30"),
        ("Asia/Kathmandu", "2026-11-22T09:00:00+05:45"),
        ("UTC-3.5", "2026-11-22T09:00:00-03:30"),
    ],
)
def test_offset_iso(name: str, expected: str) -> None:
    assert offset_iso(datetime(2026, 11, 22, 9), zone(name)) == expected


def test_fmt_and_details() -> None:
    moment = datetime(2025, 6, 4, 9, 5, 7)
    assert fmt(moment) == "2025-06-04 09:05:07"
    assert fmt(datetime(999, 1, 2, 3, 4, 5)) == "0999-01-02 03:04:05"
    got = details(moment)
    assert got == {
        "year": "2025",
        "month": "06",
        "day": "04",
        "hour": "09",
        "minutes": "05",
        "seconds": "07",
    }
    assert list(got) == ["year", "month", "day", "hour", "minutes", "seconds"]


def test_fixed_offset_zone_equals_timezone() -> None:
    assert zone("UTC+5.5").utcoffset(None) == timezone(timedelta(hours=5, minutes=30)).utcoffset(
        None
    )


def test_parse_file_time_reads_a_files_dates_or_answers_none():
    parse = parse_file_time
    assert parse("2027-03-05") == datetime(2027, 3, 5)
    assert parse(" 2027-03-05 19:30 ") == datetime(2027, 3, 5, 19, 30)
    assert parse("2027-03-05T19:30:15") == datetime(2027, 3, 5, 19, 30, 15)
    for text in ("2027-02-30", "2027-03-05 25:00", "next friday", "2027-3-5", ""):
        assert parse(text) is None, text
