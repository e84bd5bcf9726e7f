"""The last English on translated pages (issue 25): dateutil's reasons for refusing a
rule and PyYAML's problems are our own translatable messages (rule_errors.MESSAGES,
words.YAML); the English `check`, `diff` and interface keep our sentences."""

from __future__ import annotations

import datetime as dt

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.editing import language
from calendar_app.model import recurrence, rule_errors
from calendar_app.store import yamlfile

START = dt.datetime(2027, 1, 1, 19)
# Bad rules and the message each gets: every reason of dateutil's we could trigger.
BAD_RULES = [
    ("FREQ=SOMETIMES", "part-value",
     "recurrence rrule: 'FREQ=SOMETIMES' is not an RFC 5545 rule (FREQ cannot be SOMETIMES)"),
    ("FREQ=WEEKLY;BYDAY=XX", "part-value", None), ("FREQ=WEEKLY;UNTIL=20271340", "part-value",
                                                   None),
    ("FREQ=WEEKLY;COUNT=1.5", "part-value", None),
    ("FREQ=", "part-empty",
     "recurrence rrule: 'FREQ=' is not an RFC 5545 rule (FREQ has no value)"),
    ("FOO=1", "unknown-part", None), ("FREQ=WEEKLY;TZID=x", "unknown-part", None),
    ("=", "not-pairs", None), ("FREQ", "not-pairs", None),
    ("FREQ=WEEKLY;;", "not-pairs", None), ("RRULE:RRULE:FREQ=DAILY", "not-pairs", None),
    ("BYDAY=MO", "no-freq",
     "recurrence rrule: 'BYDAY=MO' is not an RFC 5545 rule (FREQ is missing)"),
    ("X-FOO:bar", "property", None), ("FREQ=MONTHLY;BYSETPOS=0", "setpos", None),
]
BAD_YAML = ["a: 'x", "a: b: c", "a: [1, 2", "a: {b: 1", "- a\nb: 1", "a: 1\n- b",
            'a: "\\q"', "a: @x", "a: |\n x\n  y\nb", "---\na: 1\n---\nb: 2", "{a: 1}}",
            "%YAML 1.1\n%YAML 1.1\n---\na: 1", "%FOO\n---\na: 1", "a: ,", "a: |x\n  y",
            "a: |0\n  y", 'a: "\\x4"', "a: - b", "a: ? b", "a: *"]


def _refusal(text: str) -> recurrence.RecurrenceError:
    with pytest.raises(recurrence.RecurrenceError) as caught:
        recurrence.parse_rule(text, START)
    return caught.value


def _in(locale: str, function, text: str) -> str:
    app = Flask(__name__)
    language.install(app, lambda: {"locale": locale})
    with app.app_context():
        return function(text)


@pytest.mark.parametrize("rule, name, english", BAD_RULES)
def test_dateutils_reasons_are_our_own_translated_messages(rule: str, name: str,
                                                           english: str | None) -> None:
    refused = _refusal(rule)
    assert refused.name == name
    assert " is not an RFC 5545 rule (" in refused.message  # the English shape kept
    if english:
        assert refused.message == english
    german = _in("de_DE", language.service_message, refused.message)
    assert german.startswith("Wiederholung (rrule): ")
    assert german != refused.message and "(" in german


def test_a_german_page_names_the_reason_in_german() -> None:
    message = _refusal("FREQ=SOMETIMES").message
    assert _in("de_DE", language.service_message, message) == (
        "Wiederholung (rrule): 'FREQ=SOMETIMES' ist keine Regel nach RFC 5545 "
        "(FREQ kann nicht SOMETIMES sein)")
    assert _in("ar_EG", language.service_message, _refusal("BYDAY=MO").message) == (
        "التكرار (rrule): \u200f'BYDAY=MO' ليست قاعدة وفق RFC 5545 (الجزء FREQ مفقود)")


def test_our_own_sentences_stay_byte_identical_in_english() -> None:
    """Rules refused by our own checks print as before the mapping."""
    assert _refusal("FREQ=HOURLY").message == (
        "recurrence rrule: FREQ=HOURLY is not supported (events repeat daily at most often)")
    assert _refusal("FREQ=WEEKLY;INTERVAL=0").message == (
        "recurrence rrule: 'FREQ=WEEKLY;INTERVAL=0': INTERVAL must be 1 or more")


@settings(max_examples=150, deadline=2000)
@given(st.text(alphabet="FREQ=WEKLYDAIBMONTHSU;:,-+0123456789X ", max_size=30))
def test_any_refused_rule_is_worded_without_dateutils_english(text: str) -> None:
    """Hostile rule text: refused with one of our messages or parsed, never an
    exception of dateutil's, and "not-a-rule" (dateutil's words) only for a reason
    we have not seen."""
    try:
        recurrence.parse_rule(text.strip() or "X", START)
    except recurrence.RecurrenceError as refused:
        assert refused.name in rule_errors.MESSAGES
        assert refused.name != "not-a-rule", refused.message


@pytest.mark.parametrize("document", BAD_YAML)
def test_every_pyyaml_problem_we_can_raise_is_translated(document: str) -> None:
    with pytest.raises(yamlfile.YamlError) as caught:
        yamlfile.load(document.encode())
    reason = str(getattr(caught.value, "message", None) or caught.value)
    french = _in("fr_FR", language.file_message, reason)
    assert french != reason, reason
