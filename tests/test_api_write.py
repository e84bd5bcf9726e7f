"""Single-record writes: create, update, delete for all five collections, event write
rules (dates, links, terms, slugs), form bodies and method override.

Backed by spec sections 4 and 5, design.md "Decisions" and docs/content-format.md.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import BASE, commit_count, git, read_yaml

JAZZ_NIGHT = 106  # events/2027/jazz-night-january-2027.yaml, venue the-blue-lantern
NYC_BRUNCH = 126
BLUE_LANTERN = 45
HUDSON_LOFT_SLUG = "hudson-street-loft"
JAZZ_COLLECTIVE, CHAMBER_PLAYERS, NORTHBOUND = 61, 62, 67
JAZZ, MUSIC = 2, 1
LIVE_MUSIC = 28
EVENT_KEYS = [
    "id", "global_id", "global_id_lineage", "author", "status", "date", "date_utc",
    "modified", "modified_utc", "url", "rest_url", "title", "description", "excerpt", "slug",
    "image", "all_day", "start_date", "start_date_details", "end_date", "end_date_details",
    "utc_start_date", "utc_start_date_details", "utc_end_date", "utc_end_date_details",
    "timezone", "timezone_abbr", "cost", "cost_details", "website", "show_map",
    "show_map_link", "hide_from_listings", "sticky", "featured", "categories", "tags",
    "venue", "organizer", "custom_fields",
]
# NOW is 2026-11-21 12:00 UTC; the sample calendar's timezone is America/Los_Angeles.
NOW_LOCAL = "2026-11-21 04:00:00"
NOW_UTC = "2026-11-21 12:00:00"





@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content



def event_body(**extra) -> dict:
    body = {"title": "Test Concert", "start_date": "2027-02-01 19:00:00",
            "end_date": "2027-02-01 21:00:00"}
    body.update(extra)
    return body


def create(client, headers, collection="events", **fields):
    response = client.post(f"{BASE}/{collection}", headers=headers, json=fields)
    return response, response.get_json()


def commits(content: Path) -> int:
    return commit_count(content.parent)


def last_commit_files(content: Path) -> set[str]:
    out = git(content.parent, "show", "--no-renames", "--name-only", "--format=", "HEAD")
    return {line for line in out.splitlines() if line}


def without_json_ld(value):
    if isinstance(value, dict):
        return {k: without_json_ld(v) for k, v in value.items() if k != "json_ld"}
    if isinstance(value, list):
        return [without_json_ld(v) for v in value]
    return value


def record_files(content: Path, collection: str) -> dict[str, dict]:
    return {p.relative_to(content).as_posix(): read_yaml(p)
            for p in (content / collection).rglob("*.yaml")}


def max_id(content: Path) -> int:
    ids = [int(m) for p in content.rglob("*.yaml")
           for m in re.findall(r"^id: (\d+)$", p.read_text(), re.MULTILINE)]
    retired = content / ".retired-ids"
    if retired.exists():
        ids += [int(t) for t in retired.read_text().split()]
    return max(ids)


# -- create ------------------------------------------------------------------------------
def test_create_event_minimal(client, admin, content):
    expected_id = max_id(content) + 1
    response, body = create(client, admin, **event_body())
    assert response.status_code == 201
    assert list(body) == EVENT_KEYS  # no json_ld on create
    assert body["id"] == expected_id
    assert body["author"] == "1"
    assert body["status"] == "publish"
    assert body["date"] == NOW_LOCAL and body["date_utc"] == NOW_UTC
    assert body["modified"] == NOW_LOCAL and body["modified_utc"] == NOW_UTC
    assert body["slug"] == "test-concert"
    assert body["title"] == "Test Concert"
    assert body["description"] == "" and body["excerpt"] == ""
    assert body["image"] is False
    assert body["timezone"] == "America/Los_Angeles"
    assert body["timezone_abbr"] == "PST"
    assert body["utc_start_date"] == "2027-02-02 03:00:00"
    assert body["cost"] == ""
    assert body["cost_details"] == {"currency_symbol": "", "currency_code": "",
                                    "currency_position": "", "values": []}
    assert body["website"] == body["url"]
    assert body["url"].endswith("/event/test-concert/")
    assert body["rest_url"].endswith(f"/wp-json/tribe/events/v1/events/{expected_id}")
    for flag in ("show_map", "show_map_link", "hide_from_listings", "sticky", "featured",
                 "all_day"):
        assert body[flag] is False
    assert body["categories"] == [] and body["tags"] == []
    assert body["venue"] == [] and body["organizer"] == []
    assert response.headers["Allow"] == "GET, POST"
    # readable afterwards, the same apart from json_ld
    read = client.get(f"{BASE}/events/{expected_id}").get_json()
    read.pop("json_ld")
    assert read == body


def test_create_event_like_the_reference_capture(client, admin, content):
    before = commits(content)
    response, body = create(client, admin, title="Reference Gala Concert", description="<p>A <em>rich</em> event created for the reference recording.</p>", excerpt="Gala concert summary", start_date="2026-12-11 19:30:00", end_date="2026-12-11 22:00:00", timezone="America/New_York", cost="25", website="https://gala.example.org", featured=True, show_map=True, show_map_link=True, categories=[MUSIC, JAZZ], tags=[LIVE_MUSIC], venue={"venue": "Grand Opera House", "address": "1 Opera Plaza",
                  "city": "New York", "state": "NY", "zip": "10001",
                  "country": "United States", "phone": "+1 212 555 0100",
                  "website": "https://opera.example.org"}, organizer=[{"organizer": "Gala Foundation", "email": "events@gala.example.org",
                       "phone": "+1 212 555 0111", "website": "https://gala.example.org"}])
    assert response.status_code == 201
    assert body["description"] == (
        "<p>A <em>rich</em> event created for the reference recording.</p>")
    assert body["excerpt"] == "<p>Gala concert summary</p>"
    assert body["utc_start_date"] == "2026-12-12 00:30:00"
    assert body["utc_end_date"] == "2026-12-12 03:00:00"
    assert body["timezone"] == "America/New_York" and body["timezone_abbr"] == "EST"
    assert body["cost"] == "$25"
    assert body["website"] == "https://gala.example.org"
    assert body["featured"] is True and body["show_map"] is True
    assert [c["slug"] for c in body["categories"]] == ["jazz", "music"]
    assert [t["id"] for t in body["tags"]] == [LIVE_MUSIC]
    venue = body["venue"]
    assert venue["venue"] == "Grand Opera House"
    assert venue["stateprovince"] == "NY"
    assert venue["show_map"] is True and venue["show_map_link"] is True
    assert venue["status"] == "publish"
    assert [o["organizer"] for o in body["organizer"]] == ["Gala Foundation"]
    assert body["organizer"][0]["email"] == "events@gala.example.org"
    # one commit holds the event and both inline records
    assert commits(content) == before + 1
    assert last_commit_files(content) == {
        "content/events/2026/reference-gala-concert.yaml",
        "content/venues/grand-opera-house.yaml",
        "content/organizers/gala-foundation.yaml",
    }
    assert client.get(f"{BASE}/venues/{venue['id']}").status_code == 200


@pytest.mark.parametrize("missing", [["title"], ["start_date"], ["title", "start_date"],
                                     ["title", "start_date", "end_date"]])
def test_create_event_missing_required(client, admin, content, missing):
    before = commits(content)
    body = {k: v for k, v in event_body().items() if k not in missing}
    response, err = create(client, admin, **body)
    assert response.status_code == 400
    assert err == {"code": "rest_missing_callback_param",
                   "message": f"Missing parameter(s): {', '.join(missing)}",
                   "data": {"status": 400, "params": missing}}
    assert commits(content) == before


@pytest.mark.parametrize("field", ["title", "start_date", "end_date"])
def test_create_event_empty_required(client, admin, field):
    response, err = create(client, admin, **event_body(**{field: ""}))
    assert response.status_code == 400
    assert err["code"] == "rest_invalid_param"
    assert field in err["data"]["params"]


@pytest.mark.parametrize(("given", "tz", "expected"), [
    ("2026-12-11 19:30:00", "UTC", "2026-12-11 19:30:00"),
    ("2026-12-11T19:30", "UTC", "2026-12-11 19:30:00"),
    ("2026-12-11 19:30", "Europe/Berlin", "2026-12-11 19:30:00"),
    ("tomorrow 9am", "America/Los_Angeles", "2026-11-22 09:00:00"),
    ("+5 days 11am", "America/Los_Angeles", "2026-11-26 11:00:00"),
    # design.md: an explicit offset or a Unix timestamp is converted to the event timezone
    ("2026-12-11T19:30:00+02:00", "UTC", "2026-12-11 17:30:00"),
    ("2026-12-11T19:30:00+00:00", "America/New_York", "2026-12-11 14:30:00"),
    ("1796979600", "Europe/Berlin",
     dt.datetime.fromtimestamp(1796979600, ZoneInfo("Europe/Berlin")).strftime(
         "%Y-%m-%d %H:%M:%S")),
])
def test_event_date_formats(client, admin, given, tz, expected):
    response, body = create(client, admin, title="Dated", start_date=given,
                            end_date="2028-01-01 00:00:00", timezone=tz)
    assert response.status_code == 201, body
    assert body["start_date"] == expected
    assert body["timezone"] == tz


def test_event_unparsable_date(client, admin):
    response, err = create(client, admin, **event_body(start_date="the day after never"))
    assert response.status_code == 400
    assert err["code"] == "rest_invalid_param"
    assert err["message"] == "Invalid parameter(s): start_date"


def test_all_day_event(client, admin):
    response, body = create(client, admin, **event_body(
        start_date="2027-03-05 10:00:00", end_date="2027-03-06 15:00:00", all_day=True))
    assert response.status_code == 201
    assert body["all_day"] is True
    assert body["start_date"] == "2027-03-05 00:00:00"
    assert body["end_date"] == "2027-03-06 23:59:59"


def test_end_before_start_is_refused(client, admin, content):
    before = commits(content)
    response, err = create(client, admin, **event_body(
        start_date="2026-12-11 12:00:00", end_date="2026-12-11 10:00:00"))
    assert response.status_code == 400  # design.md: refused with a 400
    assert err["code"] == "rest_invalid_param"
    assert "end_date" in err["data"]["params"]
    assert commits(content) == before
    assert not list((content / "events").rglob("test-concert*.yaml"))


def test_end_before_start_on_update(client, admin):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"end_date": "2027-01-07 18:00:00"})
    assert response.status_code == 400
    assert "end_date" in response.get_json()["data"]["params"]
    assert client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_json()["end_date"] == (
        "2027-01-07 22:00:00")


def test_generated_members_are_ignored(client, admin):
    response, body = create(client, admin, **event_body(
        url="https://evil.example/", utc_start_date="1999-01-01 00:00:00",
        timezone_abbr="XYZ", global_id="x", id=5))
    assert response.status_code == 201
    assert body["id"] != 5
    assert body["utc_start_date"] == "2027-02-02 03:00:00"
    assert body["timezone_abbr"] == "PST"
    assert "evil" not in body["url"]


# -- venue and organizer inside an event body --------------------------------------------------
@pytest.mark.parametrize("venue", [BLUE_LANTERN, str(BLUE_LANTERN), {"id": BLUE_LANTERN},
                                   [BLUE_LANTERN]])
def test_event_venue_by_id(client, admin, venue):
    response, body = create(client, admin, **event_body(venue=venue))
    assert response.status_code == 201, body
    assert isinstance(body["venue"], dict)
    assert body["venue"]["id"] == BLUE_LANTERN


@pytest.mark.parametrize("venue", [[BLUE_LANTERN, 46], f"{BLUE_LANTERN},46"])
def test_event_venue_two_ids_is_refused(client, admin, content, venue):
    # spec 4.6: several venue ids pass validation, then 400 could-not-create-venue
    before = commits(content)
    response, err = create(client, admin, **event_body(venue=venue))
    assert response.status_code == 400
    assert err == {"code": "could-not-create-venue",
                   "message": "The venue could not be created from the provided data",
                   "data": {"status": 400}}
    assert commits(content) == before


def test_event_unknown_venue(client, admin, content):
    before = commits(content)
    response, err = create(client, admin, **event_body(venue=999999))
    assert response.status_code == 400
    assert err == {"code": "rest_invalid_param", "message": "Invalid parameter(s): venue",
                   "data": {"status": 400, "params": {"venue": "Invalid parameter."},
                            "details": []}}
    assert commits(content) == before


def test_event_inline_venue_duplicate_is_reused(client, admin, content):
    venues_before = record_files(content, "venues")
    response, body = create(client, admin, **event_body(
        venue={"venue": "the blue lantern", "phone": "(951) 555-0173"}))
    assert response.status_code == 201
    assert body["venue"]["id"] == BLUE_LANTERN
    # An exact duplicate is linked as it is (other data makes a new venue:
    # tests/test_safety_hardening.py).
    assert record_files(content, "venues") == venues_before


def test_event_inline_venue_without_name(client, admin):
    response, err = create(client, admin, **event_body(venue={"city": "Nowhere"}))
    assert response.status_code == 400
    assert err["code"] == "rest_invalid_param"
    assert "venue" in err["data"]["params"]


@pytest.mark.parametrize(("organizer", "expected"), [
    (JAZZ_COLLECTIVE, [JAZZ_COLLECTIVE]),
    (str(JAZZ_COLLECTIVE), [JAZZ_COLLECTIVE]),
    ([NORTHBOUND, JAZZ_COLLECTIVE], [NORTHBOUND, JAZZ_COLLECTIVE]),
    ([{"id": CHAMBER_PLAYERS}, JAZZ_COLLECTIVE], [CHAMBER_PLAYERS, JAZZ_COLLECTIVE]),
])
def test_event_organizers_by_id(client, admin, organizer, expected):
    response, body = create(client, admin, **event_body(organizer=organizer))
    assert response.status_code == 201, body
    assert [o["id"] for o in body["organizer"]] == expected


def test_event_organizers_mixed_inline(client, admin, content):
    response, body = create(client, admin, **event_body(organizer=[
        {"organizer": "Brand New Org", "email": "hi@new.example.org"},
        {"id": JAZZ_COLLECTIVE}, CHAMBER_PLAYERS]))
    assert response.status_code == 201
    names = [o["organizer"] for o in body["organizer"]]
    assert names == ["Brand New Org", "Riverside Jazz Collective", "Inland Chamber Players"]
    data = read_yaml(content / "organizers/brand-new-org.yaml")
    assert data["name"] == "Brand New Org" and data["email"] == "hi@new.example.org"


def test_event_bare_organizer_object_accepted(client, admin):
    # design.md: "a bare organizer object and a venue given as a one-element list are accepted"
    response, body = create(client, admin, **event_body(organizer={"organizer": "Solo Org"}))
    assert response.status_code == 201, body
    assert [o["organizer"] for o in body["organizer"]] == ["Solo Org"]


def test_event_unknown_organizer(client, admin):
    response, err = create(client, admin, **event_body(organizer=[JAZZ_COLLECTIVE, 999999]))
    assert response.status_code == 400
    assert err["code"] == "rest_invalid_param"
    assert err["data"]["params"] == {"organizer": "Invalid parameter."}


@pytest.mark.parametrize("empty", [0, "", []])
def test_event_venue_can_be_unlinked(client, admin, content, empty):
    path = content / "events/2027/jazz-night-january-2027.yaml"
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json={"venue": empty})
    assert response.status_code == 200
    assert response.get_json()["venue"] == []
    assert "venue" not in read_yaml(path)


def test_event_organizers_unlinked_with_empty_list(client, admin, content):
    response = client.patch(f"{BASE}/events/{NYC_BRUNCH}", headers=admin, json={"organizer": []})
    assert response.status_code == 200
    assert response.get_json()["organizer"] == []


# -- categories and tags in an event body ----------------------------------------------------
def test_event_terms_by_id_slug_and_name(client, admin, content):
    before = commits(content)
    response, body = create(client, admin, **event_body(
        categories=[JAZZ, "music", "Brass Bands", 999999], tags="Live music, Rooftop"))
    assert response.status_code == 201
    assert [c["name"] for c in body["categories"]] == ["Brass Bands", "Jazz", "Music"]
    assert [t["name"] for t in body["tags"]] == ["Live music", "Rooftop"]
    created = read_yaml(content / "categories/brass-bands.yaml")
    assert created["name"] == "Brass Bands" and created["slug"] == "brass-bands"
    assert (content / "tags/rooftop.yaml").exists()
    assert commits(content) == before + 1
    files = last_commit_files(content)
    assert "content/categories/brass-bands.yaml" in files
    assert "content/tags/rooftop.yaml" in files
    new_id = body["categories"][0]["id"]
    assert client.get(f"{BASE}/categories/{new_id}").get_json()["count"] == 1


def test_event_terms_cleared_by_empty_and_kept_when_absent(client, admin):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json={"title": "X"})
    assert [c["slug"] for c in response.get_json()["categories"]] == ["jazz", "music"]
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"categories": "", "tags": []})
    assert response.status_code == 200
    assert response.get_json()["categories"] == [] and response.get_json()["tags"] == []


# -- slugs ------------------------------------------------------------------------------
def test_slug_generated_and_deduplicated(client, admin, content):
    _, first = create(client, admin, **event_body(title="Summer Fête & BBQ!"))
    _, second = create(client, admin, **event_body(title="Summer Fête & BBQ!"))
    _, third = create(client, admin, **event_body(title="Summer Fete BBQ"))
    assert first["slug"] == "summer-fete-bbq"
    assert second["slug"] == "summer-fete-bbq-2"
    assert third["slug"] == "summer-fete-bbq-3"
    assert (content / "events/2027/summer-fete-bbq-2.yaml").exists()


def test_slug_clash_with_existing_and_reserved(client, admin):
    _, body = create(client, admin, **event_body(slug="jazz-night-january-2027"))
    assert body["slug"] == "jazz-night-january-2027-2"
    _, body = create(client, admin, **event_body(title="Feed"))
    assert body["slug"] == "feed-2"


def test_given_slug_is_normalised(client, admin, content):
    response, body = create(client, admin, **event_body(slug="My Custom Slug!"))
    assert response.status_code == 201
    assert body["slug"] == "my-custom-slug"
    assert (content / "events/2027/my-custom-slug.yaml").exists()


def test_event_slug_change_renames_file(client, admin, content):
    before = commits(content)
    old = content / "events/2027/jazz-night-january-2027.yaml"
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"slug": "jazz-night-jan"})
    assert response.status_code == 200
    assert response.get_json()["slug"] == "jazz-night-jan"
    assert not old.exists()
    new = content / "events/2027/jazz-night-jan.yaml"
    assert read_yaml(new)["slug"] == "jazz-night-jan"
    assert commits(content) == before + 1
    assert last_commit_files(content) == {"content/events/2027/jazz-night-january-2027.yaml",
                                          "content/events/2027/jazz-night-jan.yaml"}
    assert client.get(f"{BASE}/events/by-slug/jazz-night-jan").get_json()["id"] == JAZZ_NIGHT
    assert client.get(f"{BASE}/events/by-slug/jazz-night-january-2027").status_code == 400


def test_venue_slug_change_rewrites_linking_events(client, admin, content):
    linking = [p for p in (content / "events").rglob("*.yaml")
               if read_yaml(p).get("venue") == "the-blue-lantern"]
    assert linking
    before = commits(content)
    response = client.patch(f"{BASE}/venues/{BLUE_LANTERN}", headers=admin,
                            json={"slug": "blue-lantern"})
    assert response.status_code == 200
    assert response.get_json()["slug"] == "blue-lantern"
    assert (content / "venues/blue-lantern.yaml").exists()
    assert not (content / "venues/the-blue-lantern.yaml").exists()
    for path in linking:
        assert read_yaml(path)["venue"] == "blue-lantern"
    assert commits(content) == before + 1
    expected = {p.relative_to(content.parent).as_posix() for p in linking} | {
        "content/venues/the-blue-lantern.yaml", "content/venues/blue-lantern.yaml"}
    assert last_commit_files(content) == expected
    assert client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_json()["venue"]["id"] == BLUE_LANTERN


def test_category_slug_change_rewrites_events_and_children(client, admin, content):
    before = commits(content)
    response = client.patch(f"{BASE}/categories/{MUSIC}", headers=admin,
                            json={"slug": "live-performances"})
    assert response.status_code == 200
    assert (content / "categories/live-performances.yaml").exists()
    assert read_yaml(content / "categories/jazz.yaml")["parent"] == (
        "live-performances")
    for path in (content / "events").rglob("*.yaml"):
        assert "music" not in (read_yaml(path).get("categories") or [])
    event = client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_json()
    assert "live-performances" in [c["slug"] for c in event["categories"]]
    assert commits(content) == before + 1


# -- updates --------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize("path", [f"/events/{NYC_BRUNCH}", "/events/by-slug/nyc-jazz-brunch-2027"])
def test_event_update_verbs_are_partial(client, admin, method, path):
    before = client.get(f"{BASE}/events/{NYC_BRUNCH}", headers=admin).get_json()
    response = client.open(BASE + path, method=method, headers=admin,
                           json={"title": "Jazz Brunch on Bleecker"})
    assert response.status_code == 200
    body = response.get_json()
    assert "json_ld" not in body
    assert body["title"] == "Jazz Brunch on Bleecker"
    assert body["modified"] == NOW_LOCAL
    skip = {"title", "modified", "modified_utc"}
    assert {k: v for k, v in body.items() if k not in skip} == {
        k: v for k, v in without_json_ld(before).items() if k not in skip}


def test_event_update_keeps_fields_the_plugin_would_reset(client, admin):
    client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json={
        "featured": True, "website": "https://jazz.example.org", "all_day": False,
        "timezone": "America/New_York"})
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"excerpt": "New excerpt"})
    body = response.get_json()
    assert body["featured"] is True
    assert body["website"] == "https://jazz.example.org"
    assert body["timezone"] == "America/New_York"
    assert body["cost"] == "$15"
    assert [o["id"] for o in body["organizer"]] == [JAZZ_COLLECTIVE]
    assert body["image"] is not False
    assert body["excerpt"] == "<p>New excerpt</p>"


def test_event_timezone_change_recomputes_utc(client, admin):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"timezone": "Europe/Berlin"})
    body = response.get_json()
    assert body["start_date"] == "2027-01-07 19:30:00"
    assert body["utc_start_date"] == "2027-01-07 18:30:00"
    assert body["timezone_abbr"] == "CET"


def test_update_unknown_event(client, admin):
    response = client.patch(f"{BASE}/events/999999", headers=admin, json={"title": "x"})
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest-event-not-found"
    response = client.patch(f"{BASE}/events/{BLUE_LANTERN}", headers=admin, json={"title": "x"})
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest-invalid-event-id"


def test_update_unknown_event_slug(client, admin):
    response = client.patch(f"{BASE}/events/by-slug/nope", headers=admin, json={"title": "x"})
    assert response.status_code == 404
    assert response.get_json() == {"code": "rest-event-not-found",
                                   "message": "Event with ID 0 does not exist.",
                                   "data": {"status": 404}}


@pytest.mark.parametrize("collection", ["venues", "organizers"])
def test_update_unknown_linked_post_slug(client, admin, collection):
    response = client.patch(f"{BASE}/{collection}/by-slug/nope", headers=admin,
                            json={"phone": "1"})
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"
    assert "slug" in response.get_json()["data"]["params"]


# -- venues and organizers -----------------------------------------------------------------
def test_create_venue_like_the_capture(client, admin, content):
    response, body = create(client, admin, "venues", venue="Lakeside Pavilion",
                            address="77 Shore Drive", city="Chicago", state="IL", zip="60601",
                            country="United States", phone="+1 312 555 0177",
                            website="https://lakeside.example.org", show_map="true",
                            show_map_link="false")
    assert response.status_code == 201
    assert list(body) == [
        "id", "author", "status", "date", "date_utc", "modified", "modified_utc", "url",
        "venue", "slug", "address", "city", "country", "state", "zip", "phone", "website",
        "stateprovince", "show_map", "show_map_link", "global_id", "global_id_lineage"]
    assert body["author"] == "1" and body["status"] == "publish"
    assert body["date"] == NOW_LOCAL and body["date_utc"] == NOW_UTC
    assert body["url"].endswith("/venue/lakeside-pavilion/")
    assert body["stateprovince"] == "IL"
    assert body["show_map"] is True and body["show_map_link"] is False
    assert (content / "venues/lakeside-pavilion.yaml").exists()


def test_create_venue_map_flags_default_true(client, admin):
    _, body = create(client, admin, "venues", venue="Plain Hall")
    assert body["show_map"] is True and body["show_map_link"] is True


def test_create_venue_duplicate_reuses_record(client, admin, content):
    before = set(record_files(content, "venues"))
    response, body = create(client, admin, "venues", venue="The Blue Lantern", city="Riverside")
    assert response.status_code == 201
    assert body["id"] == BLUE_LANTERN
    assert set(record_files(content, "venues")) == before


def test_create_organizer_like_the_capture(client, admin, content):
    response, body = create(client, admin, "organizers", organizer="Lakeside Events Ltd",
                            phone="+1 312 555 0188", email="contact@lakeside.example.org",
                            website="https://lakeside.example.org/events",
                            description="<p>Organizes lakeside events.</p>")
    assert response.status_code == 201
    assert list(body) == [
        "id", "author", "status", "date", "date_utc", "modified", "modified_utc", "url",
        "organizer", "description", "slug", "phone", "website", "email", "global_id",
        "global_id_lineage"]
    assert body["description"] == "<p>Organizes lakeside events.</p>"
    assert body["url"].endswith("/organizer/lakeside-events-ltd/")
    assert (content / "organizers/lakeside-events-ltd.yaml").exists()


@pytest.mark.parametrize(("collection", "field"), [("venues", "venue"),
                                                   ("organizers", "organizer")])
def test_create_linked_post_requires_name(client, admin, collection, field):
    response, err = create(client, admin, collection, phone="123")
    assert response.status_code == 400
    assert err["code"] == "rest_missing_callback_param"
    assert err["data"]["params"] == [field]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_venue_update_is_partial(client, admin, method):
    before = client.get(f"{BASE}/venues/{BLUE_LANTERN}").get_json()
    response = client.open(f"{BASE}/venues/{BLUE_LANTERN}", method=method, headers=admin,
                           json={"phone": "(951) 555-0000"})
    assert response.status_code == 200
    body = response.get_json()
    assert body["phone"] == "(951) 555-0000"
    assert body["show_map"] is False  # not reset to true
    skip = {"phone", "modified", "modified_utc"}
    assert {k: v for k, v in body.items() if k not in skip} == {
        k: v for k, v in without_json_ld(before).items() if k not in skip}


def test_venue_field_cleared_with_empty_string(client, admin):
    response = client.patch(f"{BASE}/venues/by-slug/the-blue-lantern", headers=admin,
                            json={"phone": ""})
    assert response.status_code == 200
    assert "phone" not in response.get_json()


def test_organizer_update_by_slug(client, admin):
    response = client.put(f"{BASE}/organizers/by-slug/riverside-jazz-collective",
                          headers=admin, json={"email": "new@jazz.example.org"})
    assert response.status_code == 200
    assert response.get_json()["email"] == "new@jazz.example.org"
    assert response.get_json()["phone"] == "(951) 555-0101"


# -- terms ---------------------------------------------------------------------------------
def test_create_category_like_the_capture(client, admin, content):
    response, body = create(client, admin, "categories", name="Bebop", slug="bebop",
                            description="Fast jazz", parent=JAZZ)
    assert response.status_code == 201
    assert list(body) == ["id", "count", "description", "name", "slug", "taxonomy", "parent",
                          "meta", "url", "urls", "_links"]
    assert body["count"] == 0 and body["parent"] == JAZZ and body["meta"] == []
    assert body["url"].endswith("/events/category/music/jazz/bebop/")
    assert body["urls"]["up"].endswith(f"/categories/{JAZZ}")
    data = read_yaml(content / "categories/bebop.yaml")
    assert data == {"id": body["id"], "name": "Bebop", "slug": "bebop", "parent": "jazz",
                    "description": "Fast jazz"}


def test_create_tag_like_the_capture(client, admin, content):
    response, body = create(client, admin, "tags", name="Wheelchair Friendly",
                            description="Step-free access")
    assert response.status_code == 201
    assert list(body) == ["id", "count", "description", "name", "slug", "taxonomy", "meta",
                          "url", "urls", "_links"]
    assert body["slug"] == "wheelchair-friendly"
    assert body["taxonomy"] == "post_tag"
    assert body["url"].endswith("/tag/wheelchair-friendly/")
    assert (content / "tags/wheelchair-friendly.yaml").exists()


def test_term_name_exists(client, admin):
    response, err = create(client, admin, "categories", name="Jazz", parent=MUSIC)
    assert response.status_code == 400
    assert err["code"] == "term_exists"
    assert err["message"] == "A term with the name provided already exists with this parent."
    assert err["data"]["term_id"] == JAZZ
    response, err = create(client, admin, "tags", name="Live music")
    assert response.status_code == 400
    assert err["code"] == "term_exists"
    assert err["message"] == "A term with the name provided already exists in this taxonomy."


def test_tag_with_parent(client, admin):
    response, err = create(client, admin, "tags", name="Kid", parent=LIVE_MUSIC)
    assert response.status_code == 400
    assert err["code"] == "rest_taxonomy_not_hierarchical"


def test_term_requires_name(client, admin):
    response, err = create(client, admin, "tags", description="nameless")
    assert response.status_code == 400
    assert err["code"] == "rest_missing_callback_param"
    assert err["data"]["params"] == ["name"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize("collection,term_id", [("categories", JAZZ), ("tags", LIVE_MUSIC)])
def test_term_update_is_partial(client, admin, method, collection, term_id):
    before = client.get(f"{BASE}/{collection}/{term_id}").get_json()
    response = client.open(f"{BASE}/{collection}/{term_id}", method=method, headers=admin,
                           json={"description": "Changed."})
    assert response.status_code == 200
    body = response.get_json()
    assert body["description"] == "Changed."
    assert body["name"] == before["name"] and body["slug"] == before["slug"]
    assert body.get("parent") == before.get("parent")


# -- delete ----------------------------------------------------------------------------------
def test_delete_event_trashes_then_410(client, admin, content):
    before = commits(content)
    response = client.delete(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin)
    assert response.status_code == 200
    body = response.get_json()
    assert list(body) == EVENT_KEYS
    assert body["status"] == "trash"
    assert body["slug"] == "jazz-night-january-2027__trashed"
    assert body["url"].endswith(f"/?post_type=tribe_events&p={JAZZ_NIGHT}")
    assert not (content / "events/2027/jazz-night-january-2027.yaml").exists()
    trashed = content / "events/2027/jazz-night-january-2027__trashed.yaml"
    data = read_yaml(trashed)
    assert data["status"] == "trash" and data["id"] == JAZZ_NIGHT
    assert commits(content) == before + 1
    second = client.delete(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin)
    assert second.status_code == 410
    assert second.get_json() == {"code": "event-is-in-trash",
                                 "message": "The event is already trashed",
                                 "data": {"status": 410}}
    assert commits(content) == before + 1
    # the slug is free again
    _, again = create(client, admin, **event_body(title="Jazz Night January 2027"))
    assert again["slug"] == "jazz-night-january-2027"


def test_delete_event_by_slug(client, admin):
    response = client.delete(f"{BASE}/events/by-slug/jazz-night-january-2027", headers=admin)
    assert response.status_code == 200
    assert response.get_json()["id"] == JAZZ_NIGHT
    assert response.get_json()["status"] == "trash"


@pytest.mark.parametrize(("collection", "record_id", "slug", "code", "message"), [
    ("venues", BLUE_LANTERN, "the-blue-lantern", "venue-is-in-trash",
     "The venue is already trashed"),
    ("organizers", JAZZ_COLLECTIVE, "riverside-jazz-collective", "organizer-is-in-trash",
     "The organizer is already trashed"),
])
def test_delete_linked_post_trashes_and_unlinks(client, admin, content, collection,
                                                record_id, slug, code, message):
    field = "venue" if collection == "venues" else "organizers"

    def linking() -> list[Path]:
        out = []
        for p in (content / "events").rglob("*.yaml"):
            value = read_yaml(p).get(field)
            if value == slug or isinstance(value, list) and slug in value:
                out.append(p)
        return out

    assert linking()
    response = client.delete(f"{BASE}/{collection}/{record_id}", headers=admin)
    assert response.status_code == 200
    assert response.get_json()["status"] == "trash"
    assert response.get_json()["slug"] == f"{slug}__trashed"
    assert (content / f"{collection}/{slug}__trashed.yaml").exists()
    assert linking() == []  # spec 4.11: trashing removes its link from every event
    second = client.delete(f"{BASE}/{collection}/{record_id}", headers=admin)
    assert second.status_code == 410
    assert second.get_json() == {"code": code, "message": message, "data": {"status": 410}}


# Deleting with force=true only trashes (as the plugin); removing for good is
# `empty-trash`: both in test_hardening_ops.py.


@pytest.mark.parametrize(("collection", "term_id", "slug", "field"), [
    ("categories", JAZZ, "jazz", "categories"), ("tags", LIVE_MUSIC, "live-music", "tags")])
def test_delete_term_unlinks_in_one_commit(client, admin, content, collection, term_id, slug,
                                           field):
    linking = [p for p in (content / "events").rglob("*.yaml")
               if slug in (read_yaml(p).get(field) or [])]
    assert linking
    before_body = client.get(f"{BASE}/{collection}/{term_id}").get_json()
    before = commits(content)
    response = client.delete(f"{BASE}/{collection}/{term_id}", headers=admin)
    assert response.status_code == 200
    body = response.get_json()
    before_body.pop("_links")
    assert body == before_body  # the term as it was, without _links
    assert not (content / f"{collection}/{slug}.yaml").exists()
    for path in linking:
        assert slug not in (read_yaml(path).get(field) or [])
    assert commits(content) == before + 1
    expected = {p.relative_to(content.parent).as_posix() for p in linking}
    expected.add(f"content/{collection}/{slug}.yaml")
    assert expected <= last_commit_files(content)
    assert client.get(f"{BASE}/{collection}/{term_id}").status_code == 400
    event = client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_json()
    assert slug not in [t["slug"] for t in event[field]]


def test_delete_unknown(client, admin):
    response = client.delete(f"{BASE}/events/999999", headers=admin)
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest-event-not-found"
    response = client.delete(f"{BASE}/events/{BLUE_LANTERN}", headers=admin)
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest-invalid-event-id"
    for path in ("/venues/999999", "/organizers/999999", "/categories/999999", "/tags/999999",
                 "/venues/by-slug/nope", "/organizers/by-slug/nope", "/events/by-slug/nope"):
        response = client.delete(BASE + path, headers=admin)
        assert response.status_code == 400, path
        assert response.get_json()["code"] == "rest_invalid_param", path


# -- form bodies and method override --------------------------------------------------------------
def test_form_encoded_create_with_php_arrays(client, admin, content):
    response = client.post(f"{BASE}/events", headers=admin, data={
        "title": "Form Night", "start_date": "2027-04-01 18:00:00",
        "end_date": "2027-04-01 20:00:00", "featured": "1", "categories": "jazz,music",
        "venue[venue]": "Form Hall", "venue[city]": "Riverside", "venue[state]": "CA",
        "organizer[]": [str(NORTHBOUND), str(JAZZ_COLLECTIVE)], "tags[]": ["Live music"],
    })
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["title"] == "Form Night"
    assert body["featured"] is True
    assert body["venue"]["venue"] == "Form Hall"
    assert body["venue"]["city"] == "Riverside"
    assert body["venue"]["stateprovince"] == "CA"
    assert [o["id"] for o in body["organizer"]] == [NORTHBOUND, JAZZ_COLLECTIVE]
    assert [c["slug"] for c in body["categories"]] == ["jazz", "music"]
    assert [t["id"] for t in body["tags"]] == [LIVE_MUSIC]
    assert (content / "venues/form-hall.yaml").exists()


def test_form_encoded_venue_by_id_and_organizer_objects(client, admin):
    response = client.post(f"{BASE}/events", headers=admin, data={
        "title": "Form Two", "start_date": "2027-04-02 18:00:00",
        "end_date": "2027-04-02 20:00:00", "venue": str(BLUE_LANTERN),
        "organizer[0][organizer]": "Form Org", "organizer[1][id]": str(CHAMBER_PLAYERS),
    })
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["venue"]["id"] == BLUE_LANTERN
    assert [o["organizer"] for o in body["organizer"]] == ["Form Org", "Inland Chamber Players"]


def test_form_encoded_update(client, admin):
    response = client.post(f"{BASE}/venues/{BLUE_LANTERN}", headers=admin,
                           data={"city": "Corona", "show_map": "true"})
    assert response.status_code == 200
    assert response.get_json()["city"] == "Corona"
    assert response.get_json()["show_map"] is True


def test_json_body_beats_query_string(client, admin):
    response = client.post(f"{BASE}/events?title=FromQuery", headers=admin,
                           json=event_body(title="FromBody"))
    assert response.get_json()["title"] == "FromBody"


def test_method_override_query(client, admin, content):
    response = client.post(f"{BASE}/events/{JAZZ_NIGHT}?_method=DELETE", headers=admin)
    assert response.status_code == 200
    assert response.get_json()["status"] == "trash"


def test_method_override_header(client, admin):
    response = client.post(f"{BASE}/events/{JAZZ_NIGHT}", json={"title": "Overridden"},
                           headers={**admin, "X-HTTP-Method-Override": "PATCH"})
    assert response.status_code == 200
    assert response.get_json()["title"] == "Overridden"
    response = client.post(f"{BASE}/events/{JAZZ_NIGHT}",
                           headers={**admin, "X-HTTP-Method-Override": "DELETE"})
    assert response.status_code == 200
    assert response.get_json()["status"] == "trash"
