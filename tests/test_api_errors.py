"""Bad input: wrong types, invalid values, oversized and malformed bodies, hostile slugs,
unsupported methods. No request may produce a 500 or a traceback.

Backed by spec sections 0 and 5 and issue 2 item 10.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, git

JAZZ_NIGHT = 106
BLUE_LANTERN = 45
JAZZ_COLLECTIVE = 61
LIVE_MUSIC = 28
EVENT = {"title": "Error Test", "start_date": "2027-02-01 19:00:00",
         "end_date": "2027-02-01 21:00:00"}




@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content




def tree_listing(content: Path) -> set[str]:
    return {p.relative_to(content.parent).as_posix() for p in content.parent.rglob("*")
            if ".git" not in p.parts}


def assert_clean_error(response, status: int | None = None) -> dict:
    assert response.status_code != 500
    assert response.status_code < 500
    text = response.get_data(as_text=True)
    assert "Traceback" not in text
    body = response.get_json()
    assert set(body) == {"code", "message", "data"}
    assert body["data"]["status"] == response.status_code
    if status is not None:
        assert response.status_code == status
    return body


# -- declared types (spec 0 "Strict declared types") ------------------------------------------
@pytest.mark.parametrize(("field", "value", "type_name"), [
    ("start_date", 1735722000, "string"),
    ("end_date", True, "string"),
    ("title", 42, "string"),
    ("timezone", 5, "string"),
    ("slug", ["a"], "string"),
    ("all_day", "yes", "boolean"),
    ("featured", "maybe", "boolean"),
    ("sticky", 2, "boolean"),
    ("hide_from_listings", {"a": 1}, "boolean"),
    ("show_map", "on-ish", "boolean"),
    ("author", "one", "integer"),
    ("author", 1.5, "integer"),
])
def test_event_type_errors(client, admin, content, field, value, type_name):
    response = client.post(f"{BASE}/events", headers=admin, json={**EVENT, field: value})
    err = assert_clean_error(response, 400)
    message = f"{field} is not of type {type_name}."
    assert err == {"code": "rest_invalid_param", "message": f"Invalid parameter(s): {field}",
                   "data": {"status": 400, "params": {field: message},
                            "details": {field: {"code": "rest_invalid_type",
                                                "message": message,
                                                "data": {"param": field}}}}}


@pytest.mark.parametrize("value", [True, False, "true", "false", "1", "0", 1, 0])
def test_booleans_accepted(client, admin, value):
    response = client.post(f"{BASE}/events", headers=admin, json={**EVENT, "featured": value})
    assert response.status_code == 201
    assert response.get_json()["featured"] is (value in (True, "true", "1", 1))


@pytest.mark.parametrize(("field", "value"), [
    ("website", "not a url"), ("website", "javascript:alert(1)"),
    ("timezone", "Mars/Olympus_Mons"), ("status", "published"), ("author", 999),
    ("start_date", "32/13/2027"), ("date", "yesterday-ish nonsense"),
    ("description", ""), ("excerpt", "   "), ("image", "not-an-image"),
    ("image", "media/../../etc/passwd"),
])
def test_event_invalid_values(client, admin, field, value):
    response = client.post(f"{BASE}/events", headers=admin, json={**EVENT, field: value})
    err = assert_clean_error(response, 400)
    assert err["code"] == "rest_invalid_param"
    assert field in err["data"]["params"]
    assert field in err["message"]


def test_several_bad_fields_reported_together(client, admin):
    response = client.post(f"{BASE}/events", headers=admin,
                           json={**EVENT, "website": "nope", "status": "nope"})
    err = assert_clean_error(response, 400)
    assert set(err["data"]["params"]) == {"website", "status"}
    assert err["message"] in ("Invalid parameter(s): website, status",
                              "Invalid parameter(s): status, website")


@pytest.mark.parametrize(("collection", "body", "field"), [
    ("venues", {"venue": "X", "website": "nope"}, "website"),
    ("venues", {"venue": ""}, "venue"),
    ("venues", {"venue": "X", "geo_lat": "north"}, "geo_lat"),
    ("venues", {"venue": "X", "geo_lat": 95}, "geo_lat"),
    ("organizers", {"organizer": "X", "website": "ftp:/x"}, "website"),
    ("organizers", {"organizer": 7}, "organizer"),
    ("categories", {"name": ""}, "name"),
    ("categories", {"name": "Child", "parent": 999999}, "parent"),
    ("categories", {"name": "Child", "parent": "abc"}, "parent"),
    ("tags", {"name": ["x"]}, "name"),
])
def test_other_collections_invalid_values(client, admin, collection, body, field):
    response = client.post(f"{BASE}/{collection}", headers=admin, json=body)
    err = assert_clean_error(response, 400)
    assert err["code"] == "rest_invalid_param"
    assert field in err["data"]["params"]


def test_category_cannot_become_its_own_ancestor(client, admin):
    response = client.patch(f"{BASE}/categories/1", headers=admin, json={"parent": 2})
    err = assert_clean_error(response, 400)
    assert "parent" in err["data"]["params"]


@pytest.mark.parametrize("path", [f"/events/{JAZZ_NIGHT}", f"/venues/{BLUE_LANTERN}",
                                  f"/organizers/{JAZZ_COLLECTIVE}"])
def test_update_with_empty_name_is_refused(client, admin, path):
    field = {"events": "title", "venues": "venue", "organizers": "organizer"}[path.split("/")[1]]
    response = client.patch(BASE + path, headers=admin, json={field: "  "})
    err = assert_clean_error(response, 400)
    assert err["code"] == "rest_invalid_param"
    assert field in err["data"]["params"]


def test_update_slug_clash_with_other_record(client, admin):
    response = client.patch(f"{BASE}/venues/{BLUE_LANTERN}", headers=admin,
                            json={"slug": "hudson-street-loft"})
    assert_clean_error(response, 400)


# -- bodies -------------------------------------------------------------------------------
def test_body_over_one_mebibyte(client, admin, content):
    before = tree_listing(content)
    big = {**EVENT, "description": "x" * (1 << 20)}
    response = client.post(f"{BASE}/events", headers=admin, json=big)
    assert_clean_error(response, 413)
    assert tree_listing(content) == before


def test_form_body_over_one_mebibyte(client, admin):
    response = client.post(f"{BASE}/events", headers=admin,
                           data={**EVENT, "description": "y" * (1 << 20)})
    assert_clean_error(response, 413)


def test_body_just_under_the_limit_is_fine(client, admin):
    response = client.post(f"{BASE}/events", headers=admin,
                           json={**EVENT, "description": "z" * 1000})
    assert response.status_code == 201


@pytest.mark.parametrize("raw", [b"{", b'{"title": }', b"\xff\xfe", b'{"title": "a",}'])
def test_malformed_json(client, admin, raw):
    response = client.post(f"{BASE}/events", headers={**admin,
                                                      "Content-Type": "application/json"},
                           data=raw)
    err = assert_clean_error(response, 400)
    assert err["code"] == "rest_invalid_json"


@pytest.mark.parametrize("raw", [b"[1, 2]", b'"text"', b"null", b"42"])
def test_json_that_is_not_an_object(client, admin, raw):
    response = client.post(f"{BASE}/events", headers={**admin,
                                                      "Content-Type": "application/json"},
                           data=raw)
    err = assert_clean_error(response, 400)
    assert err["code"] in ("rest_missing_callback_param", "rest_invalid_json")


WEIRD = [
    ("venue", {"venue": {"nested": True}}), ("venue", [[1]]), ("venue", True),
    ("venue", -1), ("venue", 1.5), ("organizer", [[JAZZ_COLLECTIVE]]),
    ("organizer", [{"organizer": ""}]), ("organizer", [None]), ("organizer", True),
    ("categories", {"a": 1}), ("categories", [None]), ("tags", True), ("tags", [[1]]),
    ("cost", {"a": 1}), ("cost", [{"a": 1}]), ("cost", True),
    ("timezone", ""), ("status", None), ("date_utc", "garbage"),
]


def test_weird_values_never_500(client, admin):
    for field, value in WEIRD:
        response = client.post(f"{BASE}/events", headers=admin, json={**EVENT, field: value})
        if response.status_code >= 400:
            assert_clean_error(response)
        else:
            assert response.status_code == 201, (field, value)


# -- hostile slugs -------------------------------------------------------------------------------
HOSTILE = ["../../etc/passwd", "..", "a/b", "a\\b", "..\\..\\x", "a\x00b", "a\x01b",
           "line\nbreak", "tab\there", ".hidden", "/abs", "con", "x" * 300, "%2e%2e%2f"]


@pytest.mark.parametrize("collection", ["events", "venues", "organizers", "categories",
                                        "tags"])
def test_hostile_slug_in_create_body(client, admin, content, collection):
    name_field = {"events": "title", "venues": "venue", "organizers": "organizer"}.get(
        collection, "name")
    for number, slug in enumerate(HOSTILE):
        body = {**(EVENT if collection == "events" else {}),
                name_field: f"Hostile {number}", "slug": slug}
        check_hostile_create(client, admin, content, collection, body)


def check_hostile_create(client, admin, content, collection, body) -> None:
    before = tree_listing(content)
    response = client.post(f"{BASE}/{collection}", headers=admin, json=body)
    assert response.status_code in (201, 400), (body, response.get_data(as_text=True))
    if response.status_code == 400:
        assert_clean_error(response)
        assert tree_listing(content) == before
        return
    new = tree_listing(content) - before
    for path in new:
        assert path.startswith(f"content/{collection}/"), path
        name = path.rsplit("/", 1)[-1]
        assert name == name.strip() and not name.startswith(".")
        stem = name.removesuffix(".yaml")
        assert all(c.isascii() and (c.isalnum() or c in "-_") for c in stem), stem
    assert not (content.parent.parent / "etc").exists()


@pytest.mark.parametrize("collection", ["events", "venues", "organizers"])
def test_hostile_slug_in_path(client, admin, content, collection):
    before = git(content.parent, "rev-parse", "HEAD")
    for slug in ["..%2F..%2Fcalendar", "%2E%2E", "a%5Cb", "a%00b", "a%01b", "%0A", "..",
                 "a%2Fb"]:
        for method in ("GET", "PATCH", "DELETE"):
            response = client.open(f"{BASE}/{collection}/by-slug/{slug}", method=method,
                                   headers=admin,
                                   json={"title": "x"} if method == "PATCH" else None)
            err = assert_clean_error(response)
            assert response.status_code in (400, 404), (slug, method)
            assert err["code"] in ("rest_invalid_param", "rest_no_route",
                                   "rest-event-not-found")
    assert git(content.parent, "rev-parse", "HEAD") == before
    assert git(content.parent, "status", "--porcelain") == ""


def test_hostile_slug_in_update_body(client, admin, content):
    before = tree_listing(content)
    for slug in HOSTILE:
        response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                                json={"slug": slug})
        assert response.status_code in (200, 400), slug
        if response.status_code == 400:
            assert_clean_error(response)
    after = tree_listing(content)
    assert all(p.startswith("content/") for p in after - before)
    assert all(".." not in p and "\\" not in p for p in after)


# -- methods and routes -------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("PUT", "/events", {"GET", "POST"}), ("PATCH", "/venues", {"GET", "POST"}),
    ("DELETE", "/organizers", {"GET", "POST"}), ("PUT", "/categories", {"GET", "POST"}),
    ("DELETE", "/tags", {"GET", "POST"}), ("POST", "/doc", {"GET"}),
    ("DELETE", "/", {"GET"}),
])
def test_unsupported_method_is_405_with_allow(client, admin, method, path, allowed):
    response = client.open(BASE + path, method=method, headers=admin, json={})
    assert_clean_error(response, 405)
    assert {m.strip() for m in response.headers["Allow"].split(",")} >= allowed
    assert not {m.strip() for m in response.headers["Allow"].split(",")} & {method}


def test_unknown_collection_is_404(client, admin):
    for method in ("GET", "POST", "DELETE"):
        response = client.open(f"{BASE}/speakers/1", method=method, headers=admin)
        err = assert_clean_error(response, 404)
        assert err["code"] == "rest_no_route"


def test_by_slug_routes_do_not_exist_for_terms(reading_client):
    response = reading_client.get(f"{BASE}/categories/by-slug/jazz")
    assert_clean_error(response, 404)


def test_huge_id_is_not_a_500(client, admin):
    response = client.get(f"{BASE}/events/{'9' * 40}")
    assert_clean_error(response)
    response = client.delete(f"{BASE}/venues/{'9' * 40}", headers=admin)
    assert_clean_error(response)


@pytest.mark.parametrize("query", ["0", "0=x&1=y", "0[a]=1", "per_page=2&7"])
def test_numbered_top_level_parameters_are_ignored_not_a_500(reading_client, query):
    """`?0=x` is a parameter named "0" (PHP's $_GET keeps it by name), unknown and so
    ignored; only values like `organizer[0]` become lists."""
    answer = reading_client.get(f"{BASE}/events?{query}")
    assert answer.status_code == 200, answer.get_json()
    plain = reading_client.get(f"{BASE}/events" + ("?per_page=2" if "per_page" in query else ""))
    assert answer.get_json()["total"] == plain.get_json()["total"]
    assert len(answer.get_json()["events"]) == len(plain.get_json()["events"])
