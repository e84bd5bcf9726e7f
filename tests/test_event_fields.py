"""The optional event fields of ours, `online_url` and `performer`: files, requests,
the file written back, the editor schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import BASE

from calendar_app.editorial.schema import resource_schema
from calendar_app.model.records import RecordError, from_file, to_file
from calendar_app.model.resources import EVENTS

EVENT = {"id": 900, "title": "T", "start_date": "2027-05-01 19:00:00",
         "end_date": "2027-05-01 21:00:00"}


@pytest.mark.parametrize(("value", "stored"), [
    ("Ada Park", ["Ada Park"]),
    (["Ada Park", " The Blue Notes "], ["Ada Park", "The Blue Notes"]),
    ([311], ["311"]),  # a band named by a number
    ([], []),
])
def test_performer_in_files(value: object, stored: list[str]) -> None:
    record = from_file("events", {**EVENT, "performer": value}, "events/2027/t.yaml")
    assert record.data["performer"] == stored
    # Written back as typed: one name alone, several as a list, none left out.
    assert to_file(record).get("performer") == (
        stored[0] if len(stored) == 1 else stored or None)


@pytest.mark.parametrize("value", [[""], {"name": "Ada"}, ["Ada", ["nested"]], True])
def test_bad_performer_in_files(value: object) -> None:
    with pytest.raises(RecordError, match="performer: expected a name or a list of names"):
        from_file("events", {**EVENT, "performer": value}, "events/2027/t.yaml")


@pytest.mark.parametrize("value", ["javascript:alert(1)", "stream.example.org/x", "//x.org"])
def test_online_url_must_be_a_web_address(value: str) -> None:
    message = f"online_url: '{value}' is not an http:// or https:// address"
    with pytest.raises(RecordError, match=re.escape(message)):
        from_file("events", {**EVENT, "online_url": value}, "events/2027/t.yaml")


def test_file_order_and_editor_schema() -> None:
    record = from_file("events", {**EVENT, "image": "https://x.org/a.png",
                                  "performer": "Ada", "online_url": "https://x.org/live",
                                  "website": "https://x.org/"}, "events/2027/t.yaml")
    keys = list(to_file(record))
    assert keys.index("website") < keys.index("online_url") < keys.index("performer") < (
        keys.index("image"))
    props = resource_schema(EVENTS)["properties"]
    assert props["performer"]["anyOf"] == [
        {"type": "string", "minLength": 1},
        {"type": "array", "items": {"type": "string", "minLength": 1}}]
    assert props["online_url"]["pattern"].startswith("^[Hh][Tt][Tt][Pp][Ss]?://")


def test_requests_set_and_clear_them(client, auth, content: Path) -> None:
    admin = auth("administrator")
    created = client.post(BASE + "/events", headers=admin, json={
        "title": "Hybrid", "start_date": "2027-05-01 19:00:00",
        "end_date": "2027-05-01 21:00:00", "online_url": "https://live.example.org/h",
        "performer": ["Ada Park", "Sam Lee"]})
    assert created.status_code == 201
    body = created.get_json()
    assert body["online_url"] == "https://live.example.org/h"
    assert body["performer"] == ["Ada Park", "Sam Lee"]
    path = content / "events/2027/hybrid.yaml"
    assert ("online_url: https://live.example.org/h\nperformer:\n  - Ada Park\n  - Sam Lee\n"
            in path.read_text())
    updated = client.post(f"{BASE}/events/{body['id']}", headers=admin,
                          json={"performer": "Ada Park", "online_url": ""})
    assert updated.status_code == 200
    after = updated.get_json()
    assert after["performer"] == ["Ada Park"] and "online_url" not in after
    assert "online_url" not in path.read_text()


@pytest.mark.parametrize(("field", "value"), [
    ("performer", [""]), ("performer", 5), ("performer", [{"name": "x"}]),
    ("online_url", "javascript:alert(1)"), ("online_url", "not a url")])
def test_bad_values_in_requests(client, auth, field: str, value: object) -> None:
    response = client.post(BASE + "/events", headers=auth("administrator"), json={
        "title": "Bad", "start_date": "2027-05-01 19:00:00",
        "end_date": "2027-05-01 21:00:00", field: value})
    assert response.status_code == 400
    assert response.get_json() == {
        "code": "rest_invalid_param", "message": f"Invalid parameter(s): {field}",
        "data": {"status": 400, "params": {field: "Invalid parameter."}, "details": []}}
