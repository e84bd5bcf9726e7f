"""The fast canonical writer (store/fastyaml.py) writes byte for byte what PyYAML's
emitter writes (yamlfile.slow_dump), or declines; and records read back the same."""

from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.store import fastyaml, yamlfile

TRICKY = ["yes", "No", "ON", "off", "y", "n", "null", "Null", "~", "", " ", "true", "1",
          "-1", "1.5", "1e3", "1.0e+3", ".inf", "-.inf", ".NaN", "0x1F", "0o17", "017",
          "1_000", "1:30", "190:20:30", "2026-01-01", "2026-01-01 10:00:00",
          "2026-01-01T10:00:00Z", "---", "...", "--- a", "... b", "- a", "-a", "? x",
          "?x", ": x", ":x", "a: b", "a:b", "a:", "a #b", "a#b", "#a", "@x", "%x", "`x",
          "!x", "&x", "*x", "|", ">", "'", "'a'", '"', '"a"', "[a]", "{a}", "a, b",
          "=", "<<", "a\n", "a\n\n", "\na", " a\nb", "a \nb", "a\n b", "a\n\n\n", "\n",
          "\n\n", "a\nb ", "é", "中文", "🎉", "\u2028", "\x85", "\ufeff", "\U0010ffff",
          "\U0010fffe", "\t", "a\tb", "\x07", "\r\n", "\ud7ff", "\ue000", "\ufffd"]
ALPHABET = st.sampled_from(list("ab ' \"#:-?[]{},&*!|>%@`\n\t~.01éü中🎉\u00a0\u2028\x85"
                                "\ufeff\U0010ffff\x7f\x9f\r"))
TEXTS = st.one_of(
    st.sampled_from(TRICKY),
    st.text(ALPHABET, max_size=30),
    st.lists(st.sampled_from(TRICKY), max_size=4).map("".join),
    st.lists(st.sampled_from(TRICKY), max_size=4).map(" ".join),
    # Long lines around the width (4096) where the emitter folds at a space.
    st.tuples(st.integers(3900, 4200), st.sampled_from(["ab cd ", "x", "é ", "a'b "])).map(
        lambda t: (t[1] * (t[0] // len(t[1]) + 1))[: t[0]]),
)
SCALARS = st.one_of(
    TEXTS, st.integers(-10**20, 10**20), st.booleans(), st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    st.datetimes(timezones=st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=5,
                                                                                minutes=30))])),
    st.dates(),
)
VALUES = st.one_of(
    SCALARS, st.lists(SCALARS, max_size=4),
    st.dictionaries(st.sampled_from(["freq", "until", "yes"]), SCALARS, max_size=2),
)
KEYS = st.one_of(st.sampled_from(["title", "start_date", "slug", "categories", "geo_lat",
                                  "description", "yes", "null", "a b", "x:", "1", "é"]),
                 st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True))
RECORDS = st.dictionaries(KEYS, VALUES, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RECORDS)
def test_fast_writer_writes_what_the_emitter_writes(record: dict) -> None:
    fast = fastyaml.dump(record)
    if fast is not None:
        assert fast == yamlfile.slow_dump(record)
        assert yamlfile.dump(record) == fast


# Texts the fast writer must take: printable, no tab, a block only outside lists.
TAKEN = [t for t in TRICKY if not any(c in t for c in "\t\x07\r\x85\u2028\ufeff\U0010ffff")
         and " \n" not in t and not (t.endswith(" ") and "\n" in t)]
ONE_LINE = [t for t in TAKEN if "\n" not in t]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,10}", fullmatch=True).filter(
                           lambda k: k not in ("y", "n", "yes", "no", "on", "off", "null")),
                       st.one_of(st.sampled_from(TAKEN), st.integers(), st.booleans(),
                                 st.lists(st.sampled_from(ONE_LINE), min_size=1, max_size=3)),
                       min_size=1, max_size=6))
def test_records_of_plain_fields_take_the_fast_path_and_read_back(record: dict) -> None:
    fast = fastyaml.dump(record)
    assert fast is not None, record
    assert fast == yamlfile.slow_dump(record)
    assert yamlfile.load(fast.encode()) == record


def test_a_usual_event_is_written_by_the_fast_writer() -> None:
    record = {
        "id": 12, "title": "Jazz: late set #2", "slug": "jazz-late-set-2",
        "status": "publish", "author": 1, "date": dt.datetime(2026, 1, 2, 10, 0),
        "start_date": dt.datetime(2026, 3, 1, 20, 30), "all_day": False,
        "timezone": "Europe/Paris", "cost": "5", "geo_lat": 48.85,
        "categories": ["music", "yes"], "description": "<p>Line one</p>\n\n  <p>two</p>\n",
        "excerpt": "It's on", "website": "https://example.org/a?b=c#d",
    }
    fast = fastyaml.dump(record)
    assert fast == yamlfile.slow_dump(record)
    assert "title: 'Jazz: late set #2'\n" in fast
    assert "cost: '5'\n" in fast
    assert "categories:\n  - music\n  - 'yes'\n" in fast
    assert "description: |\n  <p>Line one</p>\n\n    <p>two</p>\n" in fast
    assert "excerpt: It's on\n" in fast


def test_shapes_it_cannot_prove_are_left_to_the_emitter() -> None:
    for record in ({}, {"a": []}, {"a": {"b": 1}}, {"a": "x\ty"}, {"a": "x\u2028"},
                   {"a": ["x\ny"]}, {"a": "ab " * 1400}, {"a b": 1}, {"a": 10**5000},
                   {"a": "end \nx"}, {"yes": 1}, {"a": dt.time(10)}):
        assert fastyaml.dump(record) is None, record
    # ... and dump still writes (or refuses) them as before.
    assert yamlfile.dump({"a": "x\ty"}) == '''a: "x\\ty"\n'''
    assert yamlfile.dump({"a": ["x\ny"]}) == "a:\n  - |-\n    x\n    y\n"
