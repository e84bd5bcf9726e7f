"""Event status (the plugin's Event Status: scheduled, canceled, postponed, a reason) and
a moved event's previous start date: files, the interface, `check`, pages, JSON-LD and
feeds (docs/content-format.md, "Event status")."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import icalendar
import pytest
from conftest import BASE, SAMPLE, site_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.editorial import register
from calendar_app.site import build
from calendar_app.site.ical import sequence

APRIL = "events/2027/jazz-night-april-2027.yaml"  # id 109
MAY = "events/2027/jazz-night-may-2027.yaml"
REASON = "Naomi is ill & the band <too>"


def _edit(content: Path, rel: str, extra: str) -> None:
    path = content / rel
    path.write_text(path.read_text().replace("status: publish\n", "status: publish\n" + extra, 1))


def _page(site: Path, slug: str) -> str:
    return (site / "event" / slug / "index.html").read_text()


def _ld(html: str) -> dict:
    found = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.DOTALL)
    assert found
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("status")
    shutil.copytree(SAMPLE, tmp / "content")
    _edit(tmp / "content", APRIL, f"event_status: canceled\nevent_status_reason: {REASON}\n")
    _edit(tmp / "content", MAY, "previous_start_date: 2027-04-29 19:30:00\n")
    report = build(site_options(tmp / "content", tmp / "public", tmp / "cache"))
    assert not report.problems
    return tmp / "public"


def test_a_canceled_event_says_so_on_its_page_and_stays_listed(site: Path) -> None:
    page = _page(site, "jazz-night-april-2027")
    assert ('<p class="event-status status-canceled"><strong>Canceled</strong>: '
            'Naomi is ill &amp; the band &lt;too&gt;</p>') in page
    month = (site / "events/month/2027-04/index.html").read_text()
    assert '<span class="chip-status">Canceled:</span> Jazz Night' in month
    day = (site / "events/2027-04-01/index.html").read_text()
    assert "<strong>Canceled</strong>" in day and "jazz-night-april-2027" in day
    other = _page(site, "jazz-night-march-2027")
    assert "event-status" not in other


def test_json_ld_says_cancelled_and_rescheduled(site: Path) -> None:
    ld = _ld(_page(site, "jazz-night-april-2027"))
    assert ld["eventStatus"] == "https://schema.org/EventCancelled"
    assert "previousStartDate" not in ld
    moved = _ld(_page(site, "jazz-night-may-2027"))
    assert moved["eventStatus"] == "https://schema.org/EventRescheduled"
    assert moved["previousStartDate"] == "2027-04-29T19:30:00-07:00"
    plain = _ld(_page(site, "jazz-night-march-2027"))
    assert plain["eventStatus"] == "https://schema.org/EventScheduled"


def _vevents(data: bytes) -> dict[str, icalendar.Event]:
    cal = icalendar.Calendar.from_ical(data)
    return {str(e["SUMMARY"]): e for e in cal.walk("VEVENT")}


def test_feeds_mark_the_cancellation_and_keep_the_event(site: Path) -> None:
    feed = _vevents((site / "calendar.ics").read_bytes())
    cancelled = feed["Jazz Night: Naomi Takeda, vocals"]
    assert cancelled["STATUS"] == "CANCELLED"
    assert feed[next(k for k in feed if "Jazz Night" in k and "Naomi" not in k)][
        "STATUS"] == "CONFIRMED"
    own = (site / "event/jazz-night-april-2027/event.ics").read_bytes()
    assert b"STATUS:CANCELLED\r\n" in own
    # The venue's feed still holds it (until it has passed, as any event).
    assert b"STATUS:CANCELLED" in (site / "venue/the-blue-lantern/calendar.ics").read_bytes()


def test_sequence_grows_with_every_change() -> None:
    import datetime as dt

    created = dt.datetime(2026, 9, 13, 11, 41)
    assert sequence(created, created) == 0
    assert sequence(created, created + dt.timedelta(seconds=5)) == 5
    assert sequence(created, created - dt.timedelta(days=1)) == 0  # never negative
    assert sequence(created, created + dt.timedelta(days=365 * 100)) == 2**31 - 1


# -- the interface ----------------------------------------------------------------------

def test_the_interface_shows_status_only_on_events_that_have_it(client, admin) -> None:
    plain = client.get(f"{BASE}/events/110").get_json()
    assert not {"event_status", "event_status_reason", "previous_start_date"} & set(plain)
    answer = client.post(f"{BASE}/events/109", headers=admin, json={
        "event_status": "canceled", "event_status_reason": "Storm warning",
        "previous_start_date": "2027-03-25 19:30:00"})
    assert answer.status_code == 200, answer.get_json()
    body = client.get(f"{BASE}/events/109").get_json()
    assert body["event_status"] == "canceled"
    assert body["event_status_reason"] == "Storm warning"
    assert body["previous_start_date"] == "2027-03-25 19:30:00"
    assert body["json_ld"]["eventStatus"] == "https://schema.org/EventCancelled"
    # The members come last, after the plugin's own, in a fixed order.
    assert list(body)[-4:] == ["event_status", "event_status_reason", "previous_start_date",
                               "json_ld"]


@pytest.mark.parametrize("value", ["cancelled", "", "CANCELED", "deleted", ["canceled"]])
def test_a_bad_status_is_refused_with_the_plugin_error(client, admin, content, value) -> None:
    before = (content / APRIL).read_text()
    answer = client.post(f"{BASE}/events/109", headers=admin, json={"event_status": value})
    assert answer.status_code == 400
    body = answer.get_json()
    assert body["code"] == "rest_invalid_param" and body["data"]["status"] == 400
    assert (content / APRIL).read_text() == before


# -- check ---------------------------------------------------------------------------------

def _check(content: Path, capsys) -> tuple[int, list[tuple[str, int, str]]]:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["check", str(content), "--format", "json"])
    status = args.func(args)
    report = json.loads(capsys.readouterr().out)
    return status, [(f["path"], f["line"], f["message"]) for f in report["findings"]
                    if f["path"].endswith(APRIL)]


def test_check_names_a_misspelt_status_with_its_line(content: Path, capsys) -> None:
    _edit(content, APRIL, "event_status: cancelled\n")
    status, found = _check(content, capsys)
    assert status == 1
    assert [(line, message) for _path, line, message in found] == [(
        5, ("event_status: 'cancelled' is not one of scheduled, canceled, postponed "
           "(did you mean 'canceled'?)"))]


def test_check_warns_of_a_reason_without_a_status(content: Path, capsys) -> None:
    _edit(content, APRIL, "event_status_reason: Rain\n")
    status, found = _check(content, capsys)
    assert status == 0
    assert [(line, message[:36]) for _path, line, message in found] == [
        (5, "event_status_reason is shown only wi")]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(status=st.one_of(st.sampled_from(["scheduled", "canceled", "postponed"]),
                        st.text(max_size=20), st.integers(), st.none()),
       reason=st.one_of(st.text(max_size=80), st.integers(), st.lists(st.text(), max_size=2)),
       moved=st.one_of(st.text(max_size=25), st.just("2027-03-25 19:30:00")))
def test_any_status_input_is_taken_or_refused_cleanly(client, admin, content, status, reason,
                                                      moved) -> None:
    before = (content / APRIL).read_text()
    answer = client.post(f"{BASE}/events/109", headers=admin, json={
        "event_status": status, "event_status_reason": reason, "previous_start_date": moved})
    assert answer.status_code in (200, 400), answer.get_json()
    after = (content / APRIL).read_text()
    if answer.status_code == 400:
        assert answer.get_json()["code"] == "rest_invalid_param"
        assert after == before
    else:
        body = client.get(f"{BASE}/events/109").get_json()
        assert body.get("event_status") in (None, "scheduled", "canceled", "postponed")
        assert "event_status:" in after or body.get("event_status") is None
