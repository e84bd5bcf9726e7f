"""Authentication and permissions: anonymous / wrong password / unknown user / valid
user on every write route, roles, and who may read drafts.

Backed by spec sections 0 (order of checks), 5.2 and 6, design.md "Authentication" and
issue 2 item 8.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from conftest import BASE, commit_count, git

JAZZ_NIGHT = 106  # author 1 (administrator), published
DRAFT = 142  # author 1, draft
BLUE_LANTERN = 45
JAZZ_COLLECTIVE = 61
JAZZ = 2
LIVE_MUSIC = 28
EVENT = {"title": "Auth Test", "start_date": "2027-02-01 19:00:00",
         "end_date": "2027-02-01 21:00:00"}
FORBIDDEN_401 = {"code": "rest_forbidden", "message": "Sorry, you are not allowed to do that.",
                 "data": {"status": 401}}
FORBIDDEN_403 = {"code": "rest_forbidden", "message": "Sorry, you are not allowed to do that.",
                 "data": {"status": 403}}

WRITE_ROUTES = [
    ("POST", "/events", EVENT),
    *[(m, f"/events/{JAZZ_NIGHT}", {"title": "Changed"}) for m in ("POST", "PUT", "PATCH")],
    ("DELETE", f"/events/{JAZZ_NIGHT}", None),
    *[(m, "/events/by-slug/jazz-night-january-2027", {"title": "Changed"})
      for m in ("POST", "PUT", "PATCH")],
    ("DELETE", "/events/by-slug/jazz-night-january-2027", None),
    ("POST", "/venues", {"venue": "Auth Hall"}),
    *[(m, f"/venues/{BLUE_LANTERN}", {"city": "Corona"}) for m in ("POST", "PUT", "PATCH")],
    ("DELETE", f"/venues/{BLUE_LANTERN}", None),
    *[(m, "/venues/by-slug/the-blue-lantern", {"city": "Corona"})
      for m in ("POST", "PUT", "PATCH")],
    ("DELETE", "/venues/by-slug/the-blue-lantern", None),
    ("POST", "/organizers", {"organizer": "Auth Org"}),
    *[(m, f"/organizers/{JAZZ_COLLECTIVE}", {"phone": "1"}) for m in ("POST", "PUT", "PATCH")],
    ("DELETE", f"/organizers/{JAZZ_COLLECTIVE}", None),
    *[(m, "/organizers/by-slug/riverside-jazz-collective", {"phone": "1"})
      for m in ("POST", "PUT", "PATCH")],
    ("DELETE", "/organizers/by-slug/riverside-jazz-collective", None),
    ("POST", "/categories", {"name": "Auth Cat"}),
    *[(m, f"/categories/{JAZZ}", {"description": "x"}) for m in ("POST", "PUT", "PATCH")],
    ("DELETE", f"/categories/{JAZZ}", None),
    ("POST", "/tags", {"name": "Auth Tag"}),
    *[(m, f"/tags/{LIVE_MUSIC}", {"description": "x"}) for m in ("POST", "PUT", "PATCH")],
    ("DELETE", f"/tags/{LIVE_MUSIC}", None),
]
ROUTE_IDS = [f"{m} {p}" for m, p, _ in WRITE_ROUTES]





@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content

def basic(name: str, password: str) -> dict:
    token = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def commits(content: Path) -> int:
    return commit_count(content.parent)


def tree_state(content: Path) -> tuple[int, str]:
    return commits(content), git(content.parent, "status", "--porcelain")


def send(client, method, path, body, headers):
    return client.open(BASE + path, method=method, headers=headers, json=body)


# -- the matrix ------------------------------------------------------------------------------
def rejected_everywhere(client, content, headers, status, check) -> None:
    """Send every write route with these credentials; all must be refused, nothing written.

    One app for the whole matrix (nothing is written when things go right); failures are
    collected so that one run names every route that misbehaves.
    """
    before = tree_state(content)
    failures = []
    for method, path, body in WRITE_ROUTES:
        response = send(client, method, path, body, headers)
        err = response.get_json()
        if response.status_code != status or not check(err):
            failures.append((method, path, response.status_code, err))
    assert failures == []
    assert tree_state(content) == before


def test_anonymous_write_is_401(client, content):
    rejected_everywhere(client, content, {}, 401, lambda err: err == FORBIDDEN_401)


def test_wrong_password_is_401(client, content, users):
    rejected_everywhere(
        client, content, basic("administrator", "wrong pass word"), 401,
        lambda err: err["code"] == "incorrect_password" and err["data"]["status"] == 401
        and set(err) == {"code", "message", "data"})


def test_unknown_user_is_401(client, content, users):
    rejected_everywhere(
        client, content, basic("nobody", users["administrator"]), 401,
        lambda err: err["code"] == "invalid_username" and err["data"]["status"] == 401)


def test_subscriber_write_is_403(client, content, auth):
    rejected_everywhere(client, content, auth("subscriber"), 403,
                        lambda err: err == FORBIDDEN_403)


@pytest.mark.parametrize(("method", "path", "body"), WRITE_ROUTES, ids=ROUTE_IDS)
def test_valid_administrator_write_succeeds(client, content, auth, method, path, body):
    start = commits(content)
    response = send(client, method, path, body, auth("administrator"))
    expected = 201 if method == "POST" and path.count("/") == 1 else 200
    assert response.status_code == expected, response.get_json()
    assert commits(content) == start + 1
    assert git(content.parent, "log", "-1", "--format=%an").strip() == "administrator"


def test_anonymous_bad_parameter_is_400_before_permission(client):
    # spec 0: validation runs before the permission check
    response = client.post(f"{BASE}/events", json={**EVENT, "start_date": 1735722000})
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", json={"featured": "maybe"})
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"


def test_anonymous_update_of_unknown_id_is_401(client):
    response = client.patch(f"{BASE}/events/999999", json={"title": "x"})
    assert response.status_code == 401
    assert response.get_json() == FORBIDDEN_401


def test_wrong_password_on_read_is_401(client, users):
    response = client.get(f"{BASE}/events/{JAZZ_NIGHT}",
                          headers=basic("administrator", "not-it"))
    assert response.status_code == 401
    assert response.get_json()["code"] == "incorrect_password"


@pytest.mark.parametrize("header", ["Basic !!!notbase64", "Basic " + base64.b64encode(
    b"\xff\xfe:x").decode(), "Basic " + base64.b64encode(b"no-colon").decode()])
def test_malformed_basic_header_is_401(client, header):
    response = client.post(f"{BASE}/events", json=EVENT, headers={"Authorization": header})
    assert response.status_code == 401
    assert response.get_json()["data"]["status"] == 401


def test_password_without_spaces_is_accepted(client, users):
    password = users["administrator"].replace(" ", "")
    response = client.post(f"{BASE}/events", json=EVENT, headers=basic("administrator",
                                                                      password))
    assert response.status_code == 201


def test_other_users_password_is_rejected(client, users):
    response = client.post(f"{BASE}/events", json=EVENT,
                           headers=basic("administrator", users["editor"]))
    assert response.status_code == 401
    assert response.get_json()["code"] == "incorrect_password"


# -- roles -------------------------------------------------------------------------------------
def test_contributor_event_becomes_draft(client, auth, content):
    response = client.post(f"{BASE}/events", json=EVENT, headers=auth("contributor"))
    assert response.status_code == 201
    body = response.get_json()
    assert body["status"] == "draft"
    assert body["author"] == "4"  # contributor is the fourth user in the users file
    assert git(content.parent, "log", "-1", "--format=%an").strip() == "contributor"


@pytest.mark.parametrize("requested", ["publish", "future"])
def test_contributor_publish_becomes_pending(client, auth, requested):
    response = client.post(f"{BASE}/events", json={**EVENT, "status": requested},
                           headers=auth("contributor"))
    assert response.status_code == 201
    assert response.get_json()["status"] == "pending"


def test_contributor_edits_own_draft(client, auth):
    made = client.post(f"{BASE}/events", json=EVENT, headers=auth("contributor")).get_json()
    response = client.patch(f"{BASE}/events/{made['id']}", json={"title": "Mine"},
                            headers=auth("contributor"))
    assert response.status_code == 200
    assert response.get_json()["status"] == "draft"
    response = client.patch(f"{BASE}/events/{made['id']}", json={"status": "publish"},
                            headers=auth("contributor"))
    assert response.get_json()["status"] == "pending"


@pytest.mark.parametrize("role", ["contributor", "author"])
@pytest.mark.parametrize(("method", "path"), [
    ("PATCH", f"/events/{JAZZ_NIGHT}"), ("PUT", f"/events/{JAZZ_NIGHT}"),
    ("DELETE", f"/events/{JAZZ_NIGHT}"),
    ("PATCH", "/events/by-slug/jazz-night-january-2027"),
    ("DELETE", "/events/by-slug/jazz-night-january-2027"),
    ("PATCH", f"/venues/{BLUE_LANTERN}"), ("PATCH", f"/organizers/{JAZZ_COLLECTIVE}"),
])
def test_cannot_edit_others_records(client, auth, content, role, method, path):
    before = tree_state(content)
    response = client.open(BASE + path, method=method, headers=auth(role),
                           json={"title": "Hijack", "phone": "0"})
    assert response.status_code == 403
    assert response.get_json() == FORBIDDEN_403
    assert tree_state(content) == before


def test_author_publishes_and_edits_own(client, auth):
    made = client.post(f"{BASE}/events", json=EVENT, headers=auth("author")).get_json()
    assert made["status"] == "publish"
    assert made["author"] == "3"
    response = client.patch(f"{BASE}/events/{made['id']}", json={"title": "Own"},
                            headers=auth("author"))
    assert response.status_code == 200
    response = client.delete(f"{BASE}/events/{made['id']}", headers=auth("author"))
    assert response.status_code == 200


def test_contributor_cannot_edit_own_published(client, auth):
    made = client.post(f"{BASE}/events", json=EVENT, headers=auth("contributor")).get_json()
    client.patch(f"{BASE}/events/{made['id']}", json={"status": "publish"},
                 headers=auth("editor"))
    response = client.patch(f"{BASE}/events/{made['id']}", json={"title": "x"},
                            headers=auth("contributor"))
    assert response.status_code == 403


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_editor_may_edit_others(client, auth, method):
    response = client.open(f"{BASE}/events/{JAZZ_NIGHT}", method=method,
                           headers=auth("editor"), json={"title": "Edited by editor"})
    assert response.status_code == 200


@pytest.mark.parametrize("collection", ["categories", "tags"])
def test_contributor_cannot_write_terms(client, auth, content, collection):
    before = tree_state(content)
    response = client.post(f"{BASE}/{collection}", json={"name": "Nope"},
                           headers=auth("contributor"))
    assert response.status_code == 403
    assert tree_state(content) == before


def test_author_may_create_category_but_not_tag(client, auth):
    # spec 6.3: category writes need edit_tribe_events and publish_tribe_events (an author
    # has both); tag writes need manage_categories (an author has not)
    response = client.post(f"{BASE}/categories", json={"name": "Author Cat"},
                           headers=auth("author"))
    assert response.status_code == 201
    response = client.post(f"{BASE}/tags", json={"name": "Author Tag"}, headers=auth("author"))
    assert response.status_code == 403


def test_contributor_inline_venue_is_draft(client, auth):
    response = client.post(f"{BASE}/events", headers=auth("contributor"),
                           json={**EVENT, "venue": {"venue": "Contributor Hall"}})
    assert response.status_code == 201
    venue = response.get_json()["venue"]
    assert venue["status"] == "draft"
    anonymous = client.get(f"{BASE}/venues/{venue['id']}")
    assert anonymous.status_code == 403
    assert anonymous.get_json() == {"code": "venue-not-accessible",
                                    "message": "The requested venue is not accessible",
                                    "data": {"status": 403}}


def test_contributor_creates_venue_as_draft(client, auth):
    response = client.post(f"{BASE}/organizers", headers=auth("contributor"),
                           json={"organizer": "Contributor Org"})
    assert response.status_code == 201
    assert response.get_json()["status"] == "draft"
    anonymous = client.get(f"{BASE}/organizers/{response.get_json()['id']}")
    assert anonymous.status_code == 403
    assert anonymous.get_json()["code"] == "organizer-not-accessible"


# -- draft visibility ---------------------------------------------------------------------------
@pytest.mark.parametrize(("role", "status"), [
    (None, 403), ("subscriber", 403), ("contributor", 403), ("author", 403),
    ("editor", 200), ("administrator", 200)])
def test_who_reads_an_administrators_draft(reading_client, reading_auth, role, status):
    headers = reading_auth(role) if role else {}
    response = reading_client.get(f"{BASE}/events/{DRAFT}", headers=headers)
    assert response.status_code == status
    if status == 403:
        assert response.get_json()["code"] == "event-not-accessible"
    else:
        assert response.get_json()["status"] == "draft"


def test_contributor_reads_own_draft(client, auth):
    made = client.post(f"{BASE}/events", json=EVENT, headers=auth("contributor")).get_json()
    assert client.get(f"{BASE}/events/{made['id']}",
                      headers=auth("contributor")).status_code == 200
    assert client.get(f"{BASE}/events/{made['id']}").status_code == 403
    assert client.get(f"{BASE}/events/{made['id']}",
                      headers=auth("author")).status_code == 403


def test_allow_header_depends_on_caller(client, auth):
    assert client.get(f"{BASE}/events/{JAZZ_NIGHT}").headers["Allow"] == "GET"
    assert client.get(f"{BASE}/events/{JAZZ_NIGHT}",
                      headers=auth("subscriber")).headers["Allow"] == "GET"
    assert client.get(f"{BASE}/events/{JAZZ_NIGHT}",
                      headers=auth("editor")).headers["Allow"] == (
        "GET, DELETE, POST, PUT, PATCH")
    response = client.post(f"{BASE}/events", json=EVENT)
    assert response.headers["Allow"] == "GET"
