"""Single-record reads of all five collections: shapes, key order, values, errors.

Backed by spec sections 0, 2, 5 and 6 and the captures in shared/reference/tec.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BASE, read_yaml

EVENT_KEYS = [
    "id", "global_id", "global_id_lineage", "author", "status", "date", "date_utc",
    "modified", "modified_utc", "url", "rest_url", "title", "description", "excerpt", "slug",
    "image", "all_day", "start_date", "start_date_details", "end_date", "end_date_details",
    "utc_start_date", "utc_start_date_details", "utc_end_date", "utc_end_date_details",
    "timezone", "timezone_abbr", "cost", "cost_details", "website", "show_map",
    "show_map_link", "hide_from_listings", "sticky", "featured", "categories", "tags",
    "venue", "organizer", "custom_fields",
]
VENUE_ORDER = [
    "id", "author", "status", "date", "date_utc", "modified", "modified_utc", "url", "venue",
    "description", "excerpt", "slug", "image", "address", "city", "country", "province",
    "state", "zip", "phone", "website", "stateprovince", "geo_lat", "geo_lng", "json_ld",
    "show_map", "show_map_link", "global_id", "global_id_lineage",
]
ORGANIZER_ORDER = [
    "id", "author", "status", "date", "date_utc", "modified", "modified_utc", "url",
    "organizer", "description", "excerpt", "slug", "image", "phone", "website", "email",
    "json_ld", "global_id", "global_id_lineage",
]
EMBEDDED_TERM_KEYS = ["name", "slug", "term_group", "term_taxonomy_id", "taxonomy",
                      "description", "parent", "count", "filter", "id", "urls"]
CATEGORY_KEYS = ["id", "count", "description", "name", "slug", "taxonomy", "parent", "meta",
                 "url", "urls", "_links"]
TAG_KEYS = ["id", "count", "description", "name", "slug", "taxonomy", "meta", "url", "urls",
            "_links"]
DETAIL_KEYS = ["year", "month", "day", "hour", "minutes", "seconds"]

JAZZ_NIGHT = 106  # events/2027/jazz-night-january-2027.yaml (calendar timezone, LA)
NYC_BRUNCH = 126  # events/2027/nyc-jazz-brunch-2027.yaml (America/New_York, two organizers)
DRAFT = 142  # events/2027/new-years-eve-2027-lineup-tba.yaml
BLUE_LANTERN = 45  # venue
CARTWRIGHT = None  # looked up by slug (Canadian venue with a province)
JAZZ_COLLECTIVE = 61  # organizer
JAZZ, MUSIC = 2, 1  # categories (jazz is a child of music)
LIVE_MUSIC, TWENTY_ONE = 28, 26  # tags





@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content

def get_json(client, path: str, **kwargs):
    response = client.get(BASE + path, **kwargs)
    return response, response.get_json()


def assert_ordered_subset(keys: list[str], order: list[str]) -> None:
    """Every key is known and keys come in the documented order."""
    assert all(k in order for k in keys), [k for k in keys if k not in order]
    positions = [order.index(k) for k in keys]
    assert positions == sorted(positions), keys


def published_events_with(content: Path, field: str, slug: str) -> int:
    count = 0
    for path in (content / "events").rglob("*.yaml"):
        data = read_yaml(path)
        value = data.get(field) or []
        if data.get("status", "publish") == "publish" and slug in value:
            count += 1
    return count


# -- events ---------------------------------------------------------------------
def test_event_single_key_order_and_types(reading_client):
    response, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    assert response.status_code == 200
    assert list(body) == EVENT_KEYS + ["json_ld"]
    assert isinstance(body["id"], int)
    assert body["author"] == "1"
    assert body["custom_fields"] == []
    for name in ("start_date_details", "end_date_details", "utc_start_date_details",
                 "utc_end_date_details"):
        assert list(body[name]) == DETAIL_KEYS
        assert all(isinstance(v, str) for v in body[name].values())


def test_event_single_values_from_the_file(reading_client, module_content):
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    assert body["id"] == JAZZ_NIGHT
    assert body["status"] == "publish"
    assert body["slug"] == "jazz-night-january-2027"
    assert body["title"] == "Jazz Night: Ana Lucía Ferrer Trio"
    # publication dates are in the calendar timezone (America/Los_Angeles, PDT in Sept.)
    assert body["date"] == "2026-09-05 12:12:00"
    assert body["date_utc"] == "2026-09-05 19:12:00"
    assert body["modified"] == "2026-09-12 18:18:00"
    assert body["modified_utc"] == "2026-09-13 01:18:00"
    assert body["start_date"] == "2027-01-07 19:30:00"
    assert body["end_date"] == "2027-01-07 22:00:00"
    assert body["start_date_details"] == {"year": "2027", "month": "01", "day": "07",
                                          "hour": "19", "minutes": "30", "seconds": "00"}
    # no timezone in the file: the calendar's applies; January is PST (UTC-8)
    assert body["timezone"] == "America/Los_Angeles"
    assert body["timezone_abbr"] == "PST"
    assert body["utc_start_date"] == "2027-01-08 03:30:00"
    assert body["utc_end_date"] == "2027-01-08 06:00:00"
    assert body["utc_end_date_details"] == {"year": "2027", "month": "01", "day": "08",
                                            "hour": "06", "minutes": "00", "seconds": "00"}
    assert body["all_day"] is False
    assert body["cost"] == "$15"
    assert body["cost_details"] == {"currency_symbol": "", "currency_code": "",
                                    "currency_position": "", "values": ["15"]}
    assert body["excerpt"] == "<p>First-Thursday Jazz Night with the Ana Lucía Ferrer Trio.</p>"
    assert body["description"].startswith("<p>Piano trio playing")
    assert "<strong>first Thursday of every month</strong>" in body["description"]
    for flag in ("show_map", "show_map_link", "hide_from_listings", "sticky", "featured"):
        assert body[flag] is False
    image = body["image"]
    assert image["url"].endswith("/media/jazz-night.png")
    assert image["extension"] == "png"
    assert isinstance(image["id"], int)
    assert (image["width"], image["height"]) == (640, 400)
    assert image["filesize"] == (module_content / "media" / "jazz-night.png").stat().st_size


def test_event_website_falls_back_to_permalink(reading_client):
    # spec 2.1: "If the event never had a website stored, the event permalink is returned"
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    assert body["website"] == body["url"]


def test_event_urls_use_the_calendar_site_url(reading_client):
    # docs/content-format.md: calendar.yaml `url` is the "public site address
    # (permalinks, global ids)"; the sample sets https://calendar.example.org/
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    assert body["url"] == "https://calendar.example.org/event/jazz-night-january-2027/"
    assert body["global_id"] == f"calendar.example.org?id={JAZZ_NIGHT}"
    assert body["global_id_lineage"] == [body["global_id"]]


def test_event_rest_url(reading_client):
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    assert body["rest_url"].endswith(f"/wp-json/tribe/events/v1/events/{JAZZ_NIGHT}")
    assert body["rest_url"].startswith("http")
    assert not body["rest_url"].endswith("/")


def test_event_embedded_terms_sorted_by_name_with_links(reading_client, module_content):
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    cats = body["categories"]
    assert [c["name"] for c in cats] == ["Jazz", "Music"]
    jazz = cats[0]
    assert list(jazz) == EMBEDDED_TERM_KEYS
    assert jazz["id"] == JAZZ and jazz["term_taxonomy_id"] == JAZZ
    assert jazz["slug"] == "jazz"
    assert jazz["taxonomy"] == "tribe_events_cat"
    assert jazz["parent"] == MUSIC
    assert jazz["term_group"] == 0 and jazz["filter"] == "raw"
    assert jazz["description"] == "Club nights, big bands and small-combo sessions."
    assert jazz["count"] == published_events_with(module_content, "categories", "jazz")
    assert jazz["urls"]["self"].endswith(f"/wp-json/tribe/events/v1/categories/{JAZZ}")
    assert jazz["urls"]["collection"].endswith("/wp-json/tribe/events/v1/categories")
    assert jazz["urls"]["up"].endswith(f"/wp-json/tribe/events/v1/categories/{MUSIC}")
    music = cats[1]
    assert music["parent"] == 0
    assert "up" not in music["urls"]
    tags = body["tags"]
    assert [t["name"] for t in tags] == ["21+", "Live music"]
    assert all(t["taxonomy"] == "post_tag" and t["parent"] == 0 for t in tags)
    assert tags[1]["urls"]["self"].endswith(f"/wp-json/tribe/events/v1/tags/{LIVE_MUSIC}")
    assert tags[1]["count"] == published_events_with(module_content, "tags", "live-music")


def test_event_embeds_venue_object_and_organizer_list(reading_client):
    _, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    venue = body["venue"]
    assert isinstance(venue, dict)
    assert venue["id"] == BLUE_LANTERN
    assert venue["venue"] == "The Blue Lantern"
    assert_ordered_subset(list(venue), VENUE_ORDER)
    assert isinstance(body["organizer"], list)
    assert [o["id"] for o in body["organizer"]] == [JAZZ_COLLECTIVE]
    assert body["organizer"][0]["organizer"] == "Riverside Jazz Collective"
    assert_ordered_subset(list(body["organizer"][0]), ORGANIZER_ORDER)


def test_event_in_second_timezone(reading_client):
    _, body = get_json(reading_client, f"/events/{NYC_BRUNCH}")
    assert body["timezone"] == "America/New_York"
    assert body["timezone_abbr"] == "EDT"  # June
    assert body["start_date"] == "2027-06-13 11:00:00"
    assert body["utc_start_date"] == "2027-06-13 15:00:00"
    assert body["utc_end_date"] == "2027-06-13 18:00:00"
    # organizers in linking order, not by name or id
    assert [o["slug"] for o in body["organizer"]] == ["northbound-arts-exchange",
                                                      "riverside-jazz-collective"]
    assert body["cost"] == "$30"


def test_event_by_slug_equals_by_id(reading_client):
    _, by_id = get_json(reading_client, f"/events/{JAZZ_NIGHT}")
    response, by_slug = get_json(reading_client, "/events/by-slug/jazz-night-january-2027")
    assert response.status_code == 200
    assert by_slug == by_id


def test_json_ld_on_single_reads_only(client, auth):
    _, body = get_json(client, f"/events/{JAZZ_NIGHT}")
    ld = body["json_ld"]
    assert ld["@context"] == "http://schema.org"
    assert ld["@type"] == "Event"
    assert ld["startDate"] == "2027-01-07T19:30:00-08:00"
    assert ld["location"]["name"] == "The Blue Lantern"
    created = client.post(BASE + "/events", headers=auth("administrator"), json={
        "title": "No LD", "start_date": "2027-02-01 10:00:00", "end_date": "2027-02-01 11:00:00"})
    assert created.status_code == 201
    assert "json_ld" not in created.get_json()


# -- venues and organizers -------------------------------------------------------------
def test_venue_single(reading_client):
    response, body = get_json(reading_client, f"/venues/{BLUE_LANTERN}")
    assert response.status_code == 200
    assert_ordered_subset(list(body), VENUE_ORDER)
    assert body["id"] == BLUE_LANTERN
    assert body["author"] == "1"
    assert body["status"] == "publish"
    assert body["venue"] == "The Blue Lantern"
    assert body["slug"] == "the-blue-lantern"
    assert body["address"] == "3890 Main Street, Suite B"
    assert body["city"] == "Riverside"
    assert body["state"] == "CA"
    assert body["zip"] == "92501"
    assert body["country"] == "United States"
    assert body["phone"] == "(951) 555-0173"
    assert body["website"] == "https://bluelantern.example.com/"
    assert body["geo_lat"] == pytest.approx(33.98452)
    assert body["geo_lng"] == pytest.approx(-117.37391)
    # the file says show_map: false, show_map_link: true
    assert body["show_map"] is False
    assert body["show_map_link"] is True
    assert body["date"] == "2026-11-02 13:05:00"
    assert body["date_utc"] == "2026-11-02 21:05:00"
    assert body["json_ld"]["@type"] == "Place"
    # empty members are removed (spec 2.6): no image, no province
    assert "image" not in body
    assert "province" not in body
    assert list(body)[-4:] == ["show_map", "show_map_link", "global_id", "global_id_lineage"]


def test_venue_stateprovince_is_derived(reading_client):
    # spec 2.6: "stateprovince is derived when not supplied: the state if the country is
    # empty, US or United States, else the province"
    _, us = get_json(reading_client, f"/venues/{BLUE_LANTERN}")
    assert us["stateprovince"] == "CA"
    _, canada = get_json(reading_client, "/venues/by-slug/cartwright-street-studio")
    assert canada["province"] == "BC"
    assert canada["stateprovince"] == "BC"


def test_venue_by_slug_equals_by_id(reading_client):
    _, by_id = get_json(reading_client, f"/venues/{BLUE_LANTERN}")
    response, by_slug = get_json(reading_client, "/venues/by-slug/the-blue-lantern")
    assert response.status_code == 200
    assert by_slug == by_id


def test_venue_image_from_media(reading_client, module_content):
    _, body = get_json(reading_client, "/venues/by-slug/magnolia-arts-center")
    assert body["image"]["url"].endswith("/media/gallery-wall.png")
    assert body["image"]["extension"] == "png"
    image = module_content / "media" / "gallery-wall.png"
    assert body["image"]["filesize"] == image.stat().st_size


def test_organizer_single(reading_client):
    response, body = get_json(reading_client, f"/organizers/{JAZZ_COLLECTIVE}")
    assert response.status_code == 200
    assert_ordered_subset(list(body), ORGANIZER_ORDER)
    assert body["organizer"] == "Riverside Jazz Collective"
    assert body["slug"] == "riverside-jazz-collective"
    assert body["phone"] == "(951) 555-0101"
    assert body["email"] == "hello@riversidejazz.example.org"
    assert body["website"] == "https://riversidejazz.example.org/"
    assert body["json_ld"]["@type"] == "Person"
    assert "show_map" not in body
    assert list(body)[-2:] == ["global_id", "global_id_lineage"]
    _, by_slug = get_json(reading_client, "/organizers/by-slug/riverside-jazz-collective")
    assert by_slug == body


# -- terms -----------------------------------------------------------------------------
def test_category_single(reading_client, module_content):
    response, body = get_json(reading_client, f"/categories/{JAZZ}")
    assert response.status_code == 200
    assert list(body) == CATEGORY_KEYS
    assert body["id"] == JAZZ
    assert body["name"] == "Jazz"
    assert body["slug"] == "jazz"
    assert body["taxonomy"] == "tribe_events_cat"
    assert body["parent"] == MUSIC
    assert body["meta"] == []
    assert body["count"] == published_events_with(module_content, "categories", "jazz")
    assert body["url"].endswith("/events/category/music/jazz/")
    assert body["urls"]["up"].endswith(f"/categories/{MUSIC}")
    assert body["_links"]["self"][0]["targetHints"]["allow"] == ["GET"]


def test_tag_single(reading_client, module_content):
    response, body = get_json(reading_client, f"/tags/{LIVE_MUSIC}")
    assert response.status_code == 200
    assert list(body) == TAG_KEYS
    assert body["name"] == "Live music"
    assert body["taxonomy"] == "post_tag"
    assert "parent" not in body
    assert body["url"].endswith("/tag/live-music/")
    assert body["count"] == published_events_with(module_content, "tags", "live-music")
    assert set(body["urls"]) == {"self", "collection"}


# -- visibility --------------------------------------------------------------------------
def test_draft_is_not_accessible_anonymously(reading_client):
    response, body = get_json(reading_client, f"/events/{DRAFT}")
    assert response.status_code == 403
    assert body == {"code": "event-not-accessible",
                    "message": "The requested event is not accessible", "data": {"status": 403}}


def test_draft_by_slug_is_not_accessible_anonymously(reading_client):
    response, body = get_json(reading_client, "/events/by-slug/new-years-eve-2027-lineup-tba")
    assert response.status_code == 403
    assert body["code"] == "event-not-accessible"


def test_draft_readable_by_administrator(reading_client, reading_auth):
    response, body = get_json(reading_client, f"/events/{DRAFT}",
                              headers=reading_auth("administrator"))
    assert response.status_code == 200
    assert body["status"] == "draft"
    assert body["url"].endswith(f"/?post_type=tribe_events&p={DRAFT}")


# -- errors on reads -----------------------------------------------------------------------
def test_unknown_event_id(reading_client):
    response, body = get_json(reading_client, "/events/999999")
    assert response.status_code == 404
    assert body == {"code": "rest-event-not-found",
                    "message": "Event with ID 999999 does not exist.", "data": {"status": 404}}


def test_event_route_with_id_of_other_type(reading_client):
    response, body = get_json(reading_client, f"/events/{BLUE_LANTERN}")
    assert response.status_code == 400
    assert body["code"] == "rest-invalid-event-id"
    assert body["message"] == "The specified ID is not a valid event."


@pytest.mark.parametrize("path", [
    "/venues/999999", f"/venues/{JAZZ_NIGHT}", "/organizers/999999",
    f"/organizers/{BLUE_LANTERN}", "/categories/999999", f"/categories/{LIVE_MUSIC}",
    "/tags/999999", f"/tags/{JAZZ}",
])
def test_unknown_or_wrong_type_id_on_other_routes(reading_client, path):
    response, body = get_json(reading_client, path)
    assert response.status_code == 400
    assert body["code"] == "rest_invalid_param"
    assert body["data"]["status"] == 400
    assert "id" in body["data"]["params"]


@pytest.mark.parametrize("collection", ["events", "venues", "organizers"])
def test_unknown_slug_read(reading_client, collection):
    response, body = get_json(reading_client, f"/{collection}/by-slug/no-such-thing")
    assert response.status_code == 400
    assert body["code"] == "rest_invalid_param"
    assert "slug" in body["data"]["params"]


@pytest.mark.parametrize("path", ["/events/abc", "/venues/12x", "/categories/-1",
                                  "/events/by-slug/", "/nothing-here"])
def test_no_route(reading_client, path):
    response, body = get_json(reading_client, path)
    assert response.status_code == 404
    assert body["code"] == "rest_no_route"
    assert body["message"] == "No route was found matching the URL and request method."


# -- conventions -----------------------------------------------------------------------------
def test_standard_headers_on_single_read(reading_client):
    response = reading_client.get(f"{BASE}/events/{JAZZ_NIGHT}")
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert response.headers["Link"].endswith('/wp-json/>; rel="https://api.w.org/"')
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Allow"] == "GET"


def test_allow_header_for_administrator(reading_client, reading_auth):
    response = reading_client.get(f"{BASE}/events/{JAZZ_NIGHT}",
                                  headers=reading_auth("administrator"))
    assert response.headers["Allow"] == "GET, DELETE, POST, PUT, PATCH"


def test_json_escapes_like_wordpress(reading_client):
    raw = reading_client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_data(as_text=True)
    assert "\\/" in raw
    assert "Luc\\u00eda" in raw
    assert raw.isascii()


def test_head_is_get_without_body(reading_client):
    response = reading_client.head(f"{BASE}/events/{JAZZ_NIGHT}")
    assert response.status_code == 200
    assert response.get_data() == b""
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"


@pytest.mark.parametrize("path", [
    f"/EVENTS/{JAZZ_NIGHT}", f"/Events/{JAZZ_NIGHT}/", f"/events/{JAZZ_NIGHT}/",
    "/events/BY-SLUG/jazz-night-january-2027/",
])
def test_case_insensitive_paths_and_trailing_slash(reading_client, path):
    response, body = get_json(reading_client, path)
    assert response.status_code == 200
    assert body["id"] == JAZZ_NIGHT


def test_case_insensitive_base_path(reading_client):
    response = reading_client.get(f"/WP-JSON/Tribe/Events/V1/events/{JAZZ_NIGHT}")
    assert response.status_code == 200
    assert response.get_json()["id"] == JAZZ_NIGHT


def test_fields_filter(reading_client):
    response, body = get_json(reading_client, f"/events/{JAZZ_NIGHT}?_fields=id,title,venue.venue")
    assert response.status_code == 200
    assert body == {"id": JAZZ_NIGHT, "title": "Jazz Night: Ana Lucía Ferrer Trio",
                    "venue": {"venue": "The Blue Lantern"}}


def test_fields_filter_on_term(reading_client):
    _, body = get_json(reading_client, f"/tags/{LIVE_MUSIC}?_fields=slug,name")
    assert body == {"slug": "live-music", "name": "Live music"}


def test_pretty_json(reading_client):
    raw = reading_client.get(f"{BASE}/tags/{LIVE_MUSIC}?_pretty").get_data(as_text=True)
    assert "\n" in raw
    assert json.loads(raw)["id"] == LIVE_MUSIC


# -- cost_details for the spec's examples (spec 2.4) --------------------------------------------
@pytest.mark.parametrize(("given", "cost", "values", "symbol", "position"), [
    ("25", "$25", ["25"], "", ""),
    ("20$", "20$", ["20"], "$", "postfix"),
    (["0$", "20$", "30$"], "Free \u2013 30$", ["0", "20", "30"], "$", "postfix"),
    ("5 - 15", "$5 \u2013 $15", ["5", "15"], "", ""),
    ("Free", "Free", ["free"], "", ""),
])
def test_cost_examples(client, auth, given, cost, values, symbol, position):
    created = client.post(BASE + "/events", headers=auth("administrator"), json={
        "title": "Costly", "start_date": "2027-02-01 10:00:00",
        "end_date": "2027-02-01 11:00:00", "cost": given})
    assert created.status_code == 201
    _, body = get_json(client, f"/events/{created.get_json()['id']}")
    assert body["cost"] == cost
    assert body["cost_details"] == {"currency_symbol": symbol, "currency_code": "",
                                    "currency_position": position, "values": values}
    assert created.get_json()["cost_details"] == body["cost_details"]


def test_trashed_event_read(client, auth):
    assert client.delete(f"{BASE}/events/{JAZZ_NIGHT}",
                         headers=auth("administrator")).status_code == 200
    for headers in ({}, auth("administrator")):
        response, body = get_json(client, f"/events/{JAZZ_NIGHT}", headers=headers)
        assert response.status_code == 403
        assert body == {"code": "event-no-longer-available",
                        "message": "This event is no longer available", "data": {"status": 403}}
