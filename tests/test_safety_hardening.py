"""Issue 20, items 1, 2, 4, 20 and 24: create-by-name never edits nor reveals a record,
e-mail addresses and control characters are refused where they would do harm, and
every iCalendar feed the builder writes is strict RFC 5545.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, git

JAZZ_COLLECTIVE = 61  # organizers/riverside-jazz-collective.yaml, published, by user 1
JAZZ_COLLECTIVE_FILE = "organizers/riverside-jazz-collective.yaml"
BLUE_LANTERN = 45  # venues/the-blue-lantern.yaml, published
BLUE_LANTERN_FILE = "venues/the-blue-lantern.yaml"
ROLES_THAT_WRITE = ("contributor", "author", "editor")


@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content  # the app replaces files by renaming: the template stays intact


def event_body(**extra) -> dict:
    return {"title": "Safety Concert", "start_date": "2027-02-01 19:00:00",
            "end_date": "2027-02-01 21:00:00", **extra}


def post(client, headers: dict, path: str, body: dict):
    response = client.post(f"{BASE}/{path}", headers=headers, json=body)
    return response, response.get_json()


def history(content: Path, path: str) -> tuple[bytes, str]:
    """A record file's bytes and its git log: what reuse must never change."""
    return ((content / path).read_bytes(),
            git(content.parent, "log", "--format=%H", "--", path))


# -- 1. create-by-name never edits the record it names ---------------------------------
@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
@pytest.mark.parametrize("status", [None, "draft", "trash"])
def test_organizer_by_name_with_other_data_is_a_new_record(client, auth, content, role,
                                                           status):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    body = {"organizer": "Riverside Jazz Collective", "email": "thief@evil.example.org",
            "phone": "000"}
    if status:
        body["status"] = status
    response, answer = post(client, auth(role), "organizers", body)
    assert response.status_code == 201
    assert answer["id"] != JAZZ_COLLECTIVE
    assert answer["email"] == "thief@evil.example.org"
    assert answer["slug"] != "riverside-jazz-collective"
    assert history(content, JAZZ_COLLECTIVE_FILE) == before
    untouched = client.get(f"{BASE}/organizers/{JAZZ_COLLECTIVE}").get_json()
    assert untouched["status"] == "publish"
    assert untouched["email"] == "hello@riversidejazz.example.org"


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_exact_duplicate_is_answered_unchanged(client, auth, content, role):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    head = git(content.parent, "rev-parse", "HEAD")
    response, answer = post(client, auth(role), "organizers", {
        "organizer": "riverside jazz collective", "email": "hello@riversidejazz.example.org",
        "phone": "(951) 555-0101"})
    assert response.status_code == 201  # as the plugin answers a reused record
    assert answer["id"] == JAZZ_COLLECTIVE
    assert answer["organizer"] == "Riverside Jazz Collective"
    assert history(content, JAZZ_COLLECTIVE_FILE) == before
    assert git(content.parent, "rev-parse", "HEAD") == head  # nothing committed


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_venue_by_name_with_other_data_is_a_new_record(client, auth, content, role):
    before = history(content, BLUE_LANTERN_FILE)
    response, answer = post(client, auth(role), "venues", {
        "venue": "The Blue Lantern", "address": "1 Elsewhere Road", "status": "trash"})
    assert response.status_code == 201
    assert answer["id"] != BLUE_LANTERN and answer["address"] == "1 Elsewhere Road"
    assert history(content, BLUE_LANTERN_FILE) == before


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_inline_venue_and_organizer_never_edit_the_named_records(client, auth, content,
                                                                  role):
    venue_before = history(content, BLUE_LANTERN_FILE)
    organizer_before = history(content, JAZZ_COLLECTIVE_FILE)
    headers = auth(role)
    response, event = post(client, headers, "events", event_body(
        venue={"venue": "The Blue Lantern", "phone": "999", "status": "draft"},
        organizer=[{"organizer": "Riverside Jazz Collective",
                    "email": "thief@evil.example.org"}]))
    assert response.status_code == 201
    assert event["venue"]["id"] != BLUE_LANTERN
    assert [o["id"] for o in event["organizer"]] != [JAZZ_COLLECTIVE]
    # The same through an update of the event.
    response = client.post(f"{BASE}/events/{event['id']}", headers=headers, json={
        "venue": {"venue": "the blue lantern", "status": "trash", "city": "Nowhere"},
        "organizer": [{"organizer": "Riverside Jazz Collective", "phone": "1"}]})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["venue"]["id"] != BLUE_LANTERN
    assert history(content, BLUE_LANTERN_FILE) == venue_before
    assert history(content, JAZZ_COLLECTIVE_FILE) == organizer_before


def test_inline_exact_duplicate_is_linked_unchanged(client, auth, content):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    response, event = post(client, auth("contributor"), "events", event_body(
        organizer=[{"organizer": "Riverside Jazz Collective"}]))
    assert response.status_code == 201
    assert [o["id"] for o in event["organizer"]] == [JAZZ_COLLECTIVE]
    assert history(content, JAZZ_COLLECTIVE_FILE) == before


# -- 2. reuse never reveals a record the caller may not read ----------------------------
@pytest.mark.parametrize("status", ["draft", "pending", "private"])
@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_unreadable_venue_is_never_revealed_by_name(client, auth, admin, content, status,
                                                    role):
    response, hidden = post(client, admin, "venues", {
        "venue": "Secret Loft", "address": "7 Hidden Lane", "phone": "555-SECRET",
        "status": status})
    assert response.status_code == 201 and hidden["status"] == status
    before = history(content, f"venues/{hidden['slug']}.yaml")
    response, answer = post(client, auth(role), "venues", {"venue": "Secret Loft"})
    assert response.status_code == 201
    readable = role == "editor"  # editors read others' drafts and private records
    assert (answer["id"] == hidden["id"]) is readable
    if not readable:
        assert "Hidden" not in str(answer) and "SECRET" not in str(answer)
    assert history(content, f"venues/{hidden['slug']}.yaml") == before
    response, event = post(client, auth(role), "events", event_body(
        venue={"venue": "Secret Loft"}))
    assert response.status_code == 201
    assert (event["venue"]["id"] == hidden["id"]) is readable
    assert history(content, f"venues/{hidden['slug']}.yaml") == before
