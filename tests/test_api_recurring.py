"""Recurring events in the interface (docs/recurring-events.md): lists show every
occurrence within the horizon, each occurrence reads on its own, `post_parent` lists a
series' occurrences, writes to the series change the rule and the occurrences."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, git, read_yaml, set_git_identity

from calendar_app.catalog.occurrences import occurrence_id
from calendar_app.http.app import create_app

SERIES = 990
# NOW is 2026-11-21; the sample calendar's zone is America/Los_Angeles (DST ends
# 2026-11-01, starts 2027-03-14).
CLASS = """\
id: 990
title: Tuesday Pottery Class
slug: tuesday-pottery-class
start_date: 2027-03-02 19:00:00
end_date: 2027-03-02 21:00:00
venue: cartwright-street-studio
categories:
  - classes-workshops
recurrence:
  rrule: FREQ=WEEKLY;BYDAY=TU;COUNT=6
  exdate:
    - 2027-03-16 19:00:00
  changes:
    '2027-03-23 19:00:00':
      title: Pottery Class (glazing night)
    '2027-03-30 19:00:00':
      cancelled: true
"""


def _add_class(content: Path) -> None:
    (content / "events" / "tuesday-pottery-class.yaml").write_text(CLASS)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "a weekly class")


@pytest.fixture
def app(config: dict, content: Path):
    """An app of the test's own, for the tests that write."""
    _add_class(content)
    return create_app(config)


@pytest.fixture(scope="module")
def module_content(module_content: Path) -> Path:
    """The calendar with the class, shared by the tests that only read (`reading_client`)."""
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        _add_class(module_content)
    return module_content


def _list(client, query: str) -> dict:
    response = client.get(f"{BASE}/events?{query}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _pottery(body: dict) -> list[dict]:
    return [e for e in body["events"] if e.get("series_id") == SERIES]


def test_lists_show_each_occurrence_in_the_date_window(reading_client) -> None:
    body = _list(reading_client, "start_date=2027-03-01&end_date=2027-04-30&per_page=50")
    found = _pottery(body)
    # Six rule dates; 03-16 excluded, 03-30 cancelled.
    assert [e["start_date"] for e in found] == [
        "2027-03-02 19:00:00", "2027-03-09 19:00:00", "2027-03-23 19:00:00",
        "2027-04-06 19:00:00"]
    assert [e["id"] for e in found] == [occurrence_id(SERIES, n) for n in (0, 1, 3, 5)]
    # Wall time kept across the DST change of 2027-03-14: the UTC hour moves.
    assert [e["utc_start_date"] for e in found] == [
        "2027-03-03 03:00:00", "2027-03-10 03:00:00", "2027-03-24 02:00:00",
        "2027-04-07 02:00:00"]
    assert found[2]["title"] == "Pottery Class (glazing night)"
    assert found[0]["title"] == "Tuesday Pottery Class"
    assert found[1]["rest_url"].endswith(f"/events/{occurrence_id(SERIES, 1)}")
    assert found[1]["url"].endswith("/event/tuesday-pottery-class/2027-03-09/")
    assert found[1]["original_start_date"] == "2027-03-09 19:00:00"
    assert found[1]["recurrence"]["rrule"] == "FREQ=WEEKLY;BYDAY=TU;COUNT=6"
    # A narrower window sees only the occurrences inside it.
    narrow = _list(reading_client, "start_date=2027-03-08&end_date=2027-03-10")
    assert [e["start_date"] for e in _pottery(narrow)] == ["2027-03-09 19:00:00"]


def test_filters_by_term_venue_and_search_see_occurrences(reading_client) -> None:
    for query in ("categories=classes-workshops", "venue=" + str(_venue_id(reading_client)),
                  "search=pottery", f"include={SERIES}"):
        body = _list(reading_client, f"{query}&start_date=2027-03-01&end_date=2027-04-30&per_page=50")
        assert len(_pottery(body)) == 4, query
        assert body["total"] >= 4
    one = _list(reading_client, f"include={occurrence_id(SERIES, 3)}&start_date=2027-01-01")
    assert [e["id"] for e in one["events"]] == [occurrence_id(SERIES, 3)]


def _venue_id(client) -> int:
    body = client.get(f"{BASE}/venues/by-slug/cartwright-street-studio").get_json()
    return body["id"]


def test_single_occurrence_and_series_read(reading_client) -> None:
    occ = reading_client.get(f"{BASE}/events/{occurrence_id(SERIES, 3)}")
    assert occ.status_code == 200
    body = occ.get_json()
    assert body["start_date"] == "2027-03-23 19:00:00"
    assert body["end_date"] == "2027-03-23 21:00:00"
    assert body["title"] == "Pottery Class (glazing night)"
    assert body["series_id"] == SERIES and body["is_recurring"] is True
    assert body["json_ld"]["startDate"].startswith("2027-03-23T19:00:00")
    series = reading_client.get(f"{BASE}/events/{SERIES}").get_json()
    assert series["id"] == SERIES and series["start_date"] == "2027-03-02 19:00:00"
    assert series["recurrence"]["exdate"] == ["2027-03-16 19:00:00"]
    # An excluded or cancelled date, or a number past the rule, is no event.
    for number in (2, 4, 6):
        missing = reading_client.get(f"{BASE}/events/{occurrence_id(SERIES, number)}")
        assert missing.status_code == 404
        assert missing.get_json()["code"] == "rest-event-not-found"


def test_post_parent_lists_the_occurrences_of_a_series(reading_client) -> None:
    body = _list(reading_client, f"post_parent={SERIES}&start_date=2027-01-01")
    assert [e["id"] for e in body["events"]] == [occurrence_id(SERIES, n) for n in (0, 1, 3, 5)]
    assert body["total"] == 4
    single = _list(reading_client, "post_parent=106&start_date=2027-01-01")
    assert single["events"] == [] and single["total"] == 0


def test_single_events_have_no_recurring_members(reading_client) -> None:
    body = reading_client.get(f"{BASE}/events/106").get_json()
    assert not {"is_recurring", "recurrence", "series_id"} & body.keys()


def test_writing_the_series_changes_the_rule_and_occurrences(client, admin, content) -> None:
    response = client.post(f"{BASE}/events/{SERIES}", headers=admin, json={
        "recurrence": {"every": "week", "on": "wednesday", "count": 3}})
    assert response.status_code == 200, response.get_json()
    saved = read_yaml(content / "events" / "tuesday-pottery-class.yaml")
    assert saved["recurrence"] == {"every": "week", "on": "wednesday", "count": 3}
    body = _list(client, f"post_parent={SERIES}&start_date=2027-01-01")
    # DTSTART (a Tuesday) stays the first date, then the Wednesdays.
    assert [e["start_date"] for e in body["events"]] == [
        "2027-03-02 19:00:00", "2027-03-03 19:00:00", "2027-03-10 19:00:00",
        "2027-03-17 19:00:00"]
    log = git(content.parent, "log", "-1", "-p", "--format=%s")
    assert "+  every: week" in log


def test_series_write_refuses_a_bad_rule_and_occurrence_writes(client, admin, content) -> None:
    path = content / "events" / "tuesday-pottery-class.yaml"
    before = path.read_bytes()
    bad = client.post(f"{BASE}/events/{SERIES}", headers=admin,
                      json={"recurrence": "FREQ=FORTNIGHTLY"})
    assert bad.status_code == 400
    assert bad.get_json()["code"] == "rest_invalid_param"
    assert "FREQ=FORTNIGHTLY" in bad.get_json()["data"]["params"]["recurrence"]
    stray = client.post(f"{BASE}/events/{SERIES}", headers=admin, json={
        "recurrence": {"rrule": "FREQ=WEEKLY;COUNT=3", "exdate": ["2027-03-04 19:00:00"]}})
    assert stray.status_code == 400
    assert "not an occurrence" in stray.get_json()["data"]["params"]["recurrence"]
    occ = client.post(f"{BASE}/events/{occurrence_id(SERIES, 1)}", headers=admin,
                      json={"title": "x"})
    assert occ.status_code == 400
    assert f"write to event {SERIES}" in occ.get_json()["data"]["params"]["id"]
    assert path.read_bytes() == before


def test_removing_the_rule_makes_a_single_event(client, admin) -> None:
    response = client.post(f"{BASE}/events/{SERIES}", headers=admin, json={"recurrence": ""})
    assert response.status_code == 200
    assert "recurrence" not in response.get_json()
    body = _list(client, f"include={SERIES}&start_date=2027-01-01")
    assert [e["id"] for e in body["events"]] == [SERIES]


# ------------------------------------------------------------------ iCalendar feed
FEED_CLASS = """\
id: 991
title: Pottery in Berlin
slug: pottery-in-berlin
start_date: 2027-03-02 19:00:00
end_date: 2027-03-02 21:00:00
timezone: Europe/Berlin
venue: cartwright-street-studio
recurrence:
  every: week
  on: [tuesday, thursday]
  until: 2027-06-30
  rdate: [2027-05-01 11:00:00]
  exdate: [2027-03-16 19:00:00]
  changes:
    '2027-03-23 19:00:00':
      title: Glazing night
      start_date: 2027-03-24 18:00:00
    '2027-03-30 19:00:00':
      cancelled: true
"""


def test_feed_expands_to_exactly_the_listed_occurrences(tmp_path: Path, config: dict,
                                                       content: Path) -> None:
    import datetime as dt

    import icalendar
    import recurring_ical_events

    from calendar_app.site import Options, build

    (content / "events" / "pottery-in-berlin.yaml").write_text(FEED_CLASS)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "a class in Berlin")
    report = build(Options(content=content, out=tmp_path / "public", now=config["NOW"],
                           base_url="https://example.org/", cache_dir=tmp_path / "site-cache",
                           progress=False))
    assert not report.problems
    [ics] = (tmp_path / "public").rglob("pottery-in-berlin/event.ics")
    feed = icalendar.Calendar.from_ical(ics.read_bytes())
    vevents = [c for c in feed.walk("VEVENT")]
    assert len(vevents) == 2  # the series and its one moved date
    assert {str(v["UID"]) for v in vevents} == {"991@calendar.example.org"}  # calendar.yaml's host
    series = next(v for v in vevents if "RRULE" in v)
    assert series["RRULE"]["UNTIL"] == [dt.datetime(2027, 6, 30, 21, 59, 59, tzinfo=dt.UTC)]
    expanded = recurring_ical_events.of(feed).between(dt.date(2027, 1, 1), dt.date(2028, 1, 1))
    from_feed = sorted((v["DTSTART"].dt.strftime("%Y-%m-%d %H:%M:%S"), str(v["SUMMARY"]))
                       for v in expanded)

    listed = create_app(config).test_client().get(
        f"{BASE}/events?post_parent=991&start_date=2027-01-01&per_page=50").get_json()
    from_api = sorted((e["start_date"], e["title"]) for e in listed["events"])
    assert listed["total"] == len(from_api) == 34
    assert from_feed == from_api
    assert ("2027-03-24 18:00:00", "Glazing night") in from_feed
    assert ("2027-05-01 11:00:00", "Pottery in Berlin") in from_feed
    assert not {s for s, _t in from_feed} & {"2027-03-16 19:00:00", "2027-03-30 19:00:00"}
