"""The `recurrence:` block (calendar_app/recurrence.py, docs/recurring-events.md): both
forms of a rule, exceptions and changes, expansion in the event's zone across DST,
the horizon, `check` with the line of each problem, `fmt`, and `diff` in words."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import git, make_repo

from calendar_app.editorial import register
from calendar_app.editorial.schema import resource_schema
from calendar_app.model import dates, recurrence
from calendar_app.model.resources import EVENTS
from calendar_app.model.settings import recurrence_horizon

D = dt.datetime
START, END = D(2027, 3, 2, 19), D(2027, 3, 2, 21)  # a Tuesday
FAR = D(2030, 1, 1)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def starts(block: dict, start: D = START, end: D = END, until: D = FAR) -> list[D]:
    return [o.start for o in recurrence.expand(recurrence.normalize(block), start, end, until)
            if not o.cancelled]


# ------------------------------------------------------------------ both forms
@pytest.mark.parametrize(("readable", "rrule"), [
    ({"every": "week", "on": "tuesday", "count": 4}, "FREQ=WEEKLY;BYDAY=TU;COUNT=4"),
    ({"every": "2 weeks", "on": ["tuesday", "thursday"], "until": dt.date(2027, 4, 1)},
     "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20270401T235959"),
    ({"every": "month", "on": "first tuesday", "count": 5}, "FREQ=MONTHLY;BYDAY=1TU;COUNT=5"),
    ({"every": "month", "on": "last friday", "count": 3}, "FREQ=MONTHLY;BYDAY=-1FR;COUNT=3"),
    ({"every": "days", "count": 10}, "FREQ=DAILY;COUNT=10"),
    ({"every": "year", "count": 3}, "FREQ=YEARLY;COUNT=3"),
])
def test_readable_form_is_the_same_rule(readable: dict, rrule: str) -> None:
    block = recurrence.normalize(readable)
    assert recurrence.rule_texts(block) == [rrule]
    assert starts(readable) == starts({"rrule": rrule})
    assert len(starts(readable)) > 1


def test_rrule_text_list_rdate_exdate_and_the_start_first() -> None:
    block = {"rrule": ["RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=3", "FREQ=MONTHLY;BYMONTHDAY=15;COUNT=2"],
             "rdate": ["2027-05-20 19:00"], "exdate": [D(2027, 3, 9, 19)]}
    assert starts(block) == [D(2027, 3, 2, 19), D(2027, 3, 15, 19), D(2027, 3, 16, 19),
                             D(2027, 4, 15, 19), D(2027, 5, 20, 19)]
    # The start is always the first occurrence, even off the rule (RFC 5545 DTSTART).
    assert starts({"rrule": "FREQ=WEEKLY;BYDAY=WE;COUNT=2"}) == [
        D(2027, 3, 2, 19), D(2027, 3, 3, 19), D(2027, 3, 10, 19)]
    assert recurrence.normalize("FREQ=DAILY;COUNT=2") == {"rrule": "FREQ=DAILY;COUNT=2"}
    # YAML 1.1 reads a bare `on:` key as true: it still means `on`.
    assert recurrence.normalize({"every": "week", True: "friday"}) == {
        "every": "week", "on": "friday"}


def test_changes_move_retitle_and_cancel_one_date() -> None:
    block = recurrence.normalize({"rrule": "FREQ=WEEKLY;COUNT=4", "changes": {
        D(2027, 3, 9, 19): {"start_date": "2027-03-10 18:00", "title": "Moved"},
        "2027-03-16 19:00:00": {"cancelled": True},
        "2027-03-23 19:00:00": {"end_date": "2027-03-23 22:30:00", "venue": "elsewhere"}}})
    occ = recurrence.expand(block, START, END, FAR)
    assert [(o.number, o.start, o.end, o.cancelled) for o in occ] == [
        (0, D(2027, 3, 2, 19), D(2027, 3, 2, 21), False),
        (1, D(2027, 3, 10, 18), D(2027, 3, 10, 20), False),  # duration kept
        (2, D(2027, 3, 16, 19), D(2027, 3, 16, 21), True),
        (3, D(2027, 3, 23, 19), D(2027, 3, 23, 22, 30), False)]
    assert occ[1].overrides == {"title": "Moved"} and occ[1].original == D(2027, 3, 9, 19)
    assert occ[3].overrides == {"venue": "elsewhere"}


@pytest.mark.parametrize(("block", "words"), [
    ({"rrule": "FREQ=SOMETIMES"}, "is not an RFC 5545 rule"),
    ({"rrule": "FREQ=HOURLY"}, "FREQ=HOURLY is not supported"),
    ({"rrule": "FREQ=DAILY;BYMONTH=2,4;BYMONTHDAY=31"}, "gives no date"),
    ({"rrule": "DTSTART:20270101T000000\nRRULE:FREQ=DAILY"}, "give only the rule"),
    ({"every": "fortnight"}, "should read like '2 weeks'"),
    ({"every": "week", "on": "blursday"}, "is not a weekday"),
    ({"every": "week", "count": 2, "until": "2027-05-01"}, "until or count, not both"),
    ({"every": "week", "rrule": "FREQ=DAILY"}, "rrule or every, not both"),
    ({"count": 3}, "needs every"),
    ({"rrule": "FREQ=DAILY", "exdates": []}, "unknown key 'exdates'"),
    ({"rrule": "FREQ=DAILY", "changes": {"2027-03-03 19:00": {"colour": "red"}}},
     "'colour' cannot change"),
    ({"rrule": "FREQ=DAILY", "exdate": ["soon"]}, "is not a date"),
])
def test_bad_blocks_are_refused(block: dict, words: str) -> None:
    with pytest.raises(recurrence.RecurrenceError, match=words.replace("(", r"\(")):
        recurrence.normalize(block)


def test_exceptions_must_name_an_occurrence_even_of_an_endless_rule() -> None:
    endless = recurrence.normalize({"every": "week", "exdate": ["2031-06-03 19:00"]})
    recurrence.validate(endless, START)  # a Tuesday years ahead: fine, no horizon needed
    for bad in ({"every": "week", "exdate": ["2027-03-10 19:00"]},
                {"every": "week", "changes": {"2027-03-09 18:00": {"title": "x"}}},
                {"rrule": "FREQ=WEEKLY;COUNT=2", "exdate": ["2027-03-16 19:00"]}):
        with pytest.raises(recurrence.RecurrenceError, match="is not an occurrence"):
            recurrence.validate(recurrence.normalize(bad), START)


# ------------------------------------------------------------- zones and horizon
@pytest.mark.parametrize(("zone", "before", "after"), [
    # America/Los_Angeles: spring 2027-03-14, autumn 2027-11-07.
    ("America/Los_Angeles", (D(2027, 3, 10, 3), D(2027, 3, 17, 2)),
     (D(2027, 11, 3, 2), D(2027, 11, 10, 3))),
    # Europe/Berlin: spring 2027-03-28, autumn 2027-10-31.
    ("Europe/Berlin", (D(2027, 3, 23, 18), D(2027, 3, 30, 17)),
     (D(2027, 10, 26, 17), D(2027, 11, 2, 18))),
])
def test_weekly_class_keeps_its_wall_time_across_both_dst_switches(
        zone: str, before: tuple, after: tuple) -> None:
    tz = ZoneInfo(zone)
    block = recurrence.normalize({"every": "week", "until": "2027-12-31"})
    occ = recurrence.expand(block, START, END, FAR, tz)
    assert {o.start.time() for o in occ} == {dt.time(19)}  # wall time never moves
    utc = {dates.to_utc(o.start, tz) for o in occ}
    for pair in (before, after):  # the UTC hour moves by one across each switch
        assert set(pair) <= utc
    # An UNTIL in UTC (as RFC 5545 wants with a zoned start) is read in the zone.
    cut = recurrence.normalize({"rrule": "FREQ=WEEKLY;UNTIL=20270309T190000Z"})
    in_zone = recurrence.expand(cut, START, END, FAR, tz)
    # 19:00Z is 20:00 in Berlin (the 03-09 class is in) and 11:00 in Los Angeles (out).
    assert in_zone[-1].start == (D(2027, 3, 9, 19) if zone == "Europe/Berlin"
                                 else D(2027, 3, 2, 19))


def test_endless_rule_stops_at_the_horizon() -> None:
    block = recurrence.normalize({"every": "week"})
    assert recurrence.is_endless(block, START)
    until = recurrence_horizon({}, dt.date(2027, 3, 1))
    assert until == D(2029, 2, 28, 23, 59, 59)  # 730 days
    occ = recurrence.expand(block, START, END, until)
    assert len(occ) == 105 and occ[-1].start == D(2029, 2, 27, 19)
    short = recurrence_horizon({"recurrence_horizon_days": 30}, dt.date(2027, 3, 1))
    assert len(recurrence.expand(block, START, END, short)) == 5
    daily = recurrence.normalize({"every": "day"})
    assert len(recurrence.expand(daily, START, END, D(2100, 1, 1))) == \
        recurrence.MAX_OCCURRENCES


# ------------------------------------------------------------ check and fmt
EVENT = """\
id: 901
title: Pottery
slug: pottery
start_date: 2027-03-02 19:00:00
end_date: 2027-03-02 21:00:00
venue: the-blue-lantern
recurrence:
  rrule: FREQ=WEEKLY;BYDAY=TU
  exdate:
    - 2027-03-16 19:00:00
  changes:
    '2027-03-09 19:00:00':
      cancelled: true
"""


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    ("FREQ=WEEKLY;BYDAY=TU", "FREQ=WEEKLY;BYDAY=XX", 8, "is not an RFC 5545 rule"),
    ("    - 2027-03-16 19:00:00", "    - 2027-03-17 19:00:00", 10,
     "exdate 2027-03-17 19:00:00 is not an occurrence"),
    ("'2027-03-09 19:00:00'", "'2027-03-09 20:00:00'", 12,
     "changes 2027-03-09 20:00:00 is not an occurrence"),
    ("      cancelled: true", "      colour: red", 13, "'colour' cannot change"),
])
def test_check_names_file_and_line(tmp_path: Path, capsys, old: str, new: str, line: int,
                                   words: str) -> None:
    content = make_repo(tmp_path)
    assert old in EVENT
    (content / "events" / "pottery.yaml").write_text(EVENT.replace(old, new))
    assert main(["check", str(content), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    mine = [f for f in report["findings"] if f["path"].endswith("pottery.yaml")]
    assert [(f["line"], f["code"]) for f in mine] == [(line, "invalid-recurrence")]
    assert words in mine[0]["message"]


def test_check_accepts_a_good_block_and_refuses_a_bad_horizon(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    (content / "events" / "pottery.yaml").write_text(EVENT)
    assert main(["check", str(content), "--format", "json"]) == 0
    capsys.readouterr()
    settings = content / "calendar.yaml"
    settings.write_text(settings.read_text() + "recurrence_horizon_days: forever\n")
    assert main(["check", str(content), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    bad = [f for f in report["findings"] if f["code"] == "bad-setting"]
    assert len(bad) == 1 and bad[0]["path"].endswith("content/calendar.yaml")
    assert bad[0]["line"] == len(settings.read_text().splitlines())
    assert "recurrence_horizon_days must be a whole number from 1 to 36500" in bad[0]["message"]


def test_fmt_writes_the_block_in_canonical_order(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    path = content / "events" / "pottery.yaml"
    path.write_text(EVENT.replace("""recurrence:
  rrule: FREQ=WEEKLY;BYDAY=TU
  exdate:""", """recurrence:
  exdate:""") + "  rrule: FREQ=WEEKLY;BYDAY=TU\n")
    main(["fmt", str(content)])
    capsys.readouterr()
    assert path.read_text().endswith(EVENT[EVENT.index("recurrence:"):])


def test_json_schema_describes_the_block() -> None:
    schema = resource_schema(EVENTS)["properties"]["recurrence"]
    block, text = schema["anyOf"]
    assert set(block["properties"]) == set(recurrence.KEYS)
    assert block["additionalProperties"] is False
    assert text["pattern"] == r"^(RRULE:)?FREQ="


# ------------------------------------------------------------------- diff
def test_diff_says_what_happened_to_the_repetition(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    path = content / "events" / "pottery.yaml"
    path.write_text(EVENT.replace("FREQ=WEEKLY;BYDAY=TU", "FREQ=WEEKLY;BYDAY=TU;COUNT=8"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a class")
    git(repo, "checkout", "-q", "-b", "pr")
    path.write_text(EVENT.replace("FREQ=WEEKLY;BYDAY=TU", "FREQ=WEEKLY;BYDAY=WE;COUNT=8")
                    .replace("start_date: 2027-03-02", "start_date: 2027-03-03")
                    .replace("end_date: 2027-03-02", "end_date: 2027-03-03")
                    .replace("2027-03-16 19:00:00", "2027-03-17 19:00:00")
                    .replace("2027-03-09 19:00:00", "2027-03-10 19:00:00"))
    git(repo, "commit", "-qam", "to Wednesdays")
    assert main(["diff", "main", "pr", "--content", str(content), "--format", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["events"]["repetition"][0]["notes"]
    assert notes[0] == "every Tuesday 19:00, 8 times → every Wednesday 19:00, 8 times"
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "pr2")
    path.write_text(EVENT.replace("FREQ=WEEKLY;BYDAY=TU", "FREQ=WEEKLY;BYDAY=TU;COUNT=5")
                    + "    '2027-03-02 19:00:00':\n      cancelled: true\n")
    git(repo, "commit", "-qam", "shorter")
    assert main(["diff", "main", "pr2", "--content", str(content)]) == 0
    text = capsys.readouterr().out
    assert "#### Repetition changed (1)" in text
    assert ("- **Pottery**: every Tuesday 19:00, 8 times → every Tuesday 19:00, 5 times; "
            "cancelled on 2027-03-02; 3 occurrences removed") in text


def test_expansion_is_kept_on_the_record_and_redone_when_the_zone_changes() -> None:
    """An unchanged record reuses its occurrences; a new calendar timezone (for an event
    without its own) or a new horizon expands again."""
    from calendar_app.catalog.occurrences import expanded
    from calendar_app.model.records import Record

    record = Record("events", {"id": 7, "start_date": dt.datetime(2027, 3, 2, 19),
                               "end_date": dt.datetime(2027, 3, 2, 21),
                               "recurrence": {"rrule": "FREQ=WEEKLY;COUNT=3"}}, "events/x.yaml")
    today = dt.date(2027, 1, 1)
    first = expanded(record, {"timezone": "America/Los_Angeles"}, today)
    assert len(first) == 3
    assert expanded(record, {"timezone": "America/Los_Angeles"}, today) is first
    assert record.expansion[1] == "America/Los_Angeles"
    expanded(record, {"timezone": "Europe/Berlin"}, today)
    assert record.expansion[1] == "Europe/Berlin"
    assert expanded(record, {"timezone": "Europe/Berlin"}, dt.date(2027, 1, 2)) is not first
