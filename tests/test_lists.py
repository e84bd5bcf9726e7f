"""List endpoints against a small crafted calendar (tests/fixtures/lists) with known
answers; "now" is fixed at 2026-11-21 12:00 UTC, so the default window is
[2026-11-20 00:00:00, 2028-11-21 23:59:59]."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest

from calendar_app.http.app import create_app

FIXTURE = Path(__file__).parent / "fixtures" / "lists"
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE = "/wp-json/tribe/events/v1"
DEFAULT = [103, 104, 112, 105, 111]  # listable, in start order (112 ties 105, older)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def lcontent(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo / "content")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "fixture")
    return repo / "content"


@pytest.fixture
def lapp(tmp_path: Path, lcontent: Path, users: dict[str, str]):
    app = create_app({"CONTENT_DIR": str(lcontent), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True})
    yield app
    app.extensions["calendar"].close()


@pytest.fixture
def lc(lapp):
    return lapp.test_client()


def ids(client, path: str, **kw) -> list[int]:
    r = client.get(BASE + path, **kw)
    assert r.status_code == 200, r.get_json()
    key = path.split("?")[0].strip("/")
    return [item["id"] for item in r.get_json()[key]]


def bad(client, path: str, **kw) -> dict:
    r = client.get(BASE + path, **kw)
    assert r.status_code == 400, r.get_json()
    body = r.get_json()
    assert body["code"] == "rest_invalid_param"
    return body["data"]["params"]


# -- defaults, envelope, paging -------------------------------------------------
def test_default_event_list(lc) -> None:
    r = lc.get(BASE + "/events")
    body = r.get_json()
    assert list(body) == ["events", "rest_url", "total", "total_pages"]
    assert [e["id"] for e in body["events"]] == DEFAULT
    assert body["total"] == 5 and body["total_pages"] == 1
    assert body["rest_url"] == ("http://localhost/wp-json/tribe/events/v1/events/?page=1"
                                "&per_page=10&start_date=2026-11-20 00:00:00"
                                "&end_date=2028-11-21 23:59:59&status=publish")
    for name in ("X-TEC-Total", "X-WP-Total"):
        assert r.headers[name] == "5"
    assert r.headers["X-TEC-TotalPages"] == r.headers["X-WP-TotalPages"] == "1"
    assert "json_ld" not in body["events"][0]


def test_request_defaults(lapp) -> None:
    from calendar_app.catalog import lists

    # Plain Python: no request needed.
    assert lists.request_defaults(lapp.extensions["calendar"].reader) == {
        "per_page": 10, "start_date": "2026-11-20 23:59:00", "end_date": "2028-11-21 12:00:00"}


def test_paging_links_and_headers(lc) -> None:
    r = lc.get(BASE + "/events?per_page=2&page=2")
    body = r.get_json()
    assert [e["id"] for e in body["events"]] == [112, 105]
    assert list(body) == ["events", "rest_url", "next_rest_url", "previous_rest_url", "total",
                          "total_pages"]
    assert body["total"] == 5 and body["total_pages"] == 3
    assert body["next_rest_url"].endswith(
        "events/?per_page=2&start_date=2026-11-20+00%3A00%3A00"
        "&end_date=2028-11-21+23%3A59%3A59&status=publish&page=3")
    assert body["previous_rest_url"].endswith("&status=publish")
    link = r.headers["Link"]
    assert 'rel="https://api.w.org/"' in link
    assert f'<{body["next_rest_url"]}>; rel="next"' in link
    assert f'<{body["previous_rest_url"]}>; rel="prev"' in link
    last = lc.get(BASE + "/events?per_page=2&page=3").get_json()
    assert [e["id"] for e in last["events"]] == [111] and "next_rest_url" not in last


def test_page_out_of_range(lc) -> None:
    r = lc.get(BASE + "/events?page=4&per_page=2")
    assert r.status_code == 404
    assert r.get_json() == {"code": "event-archive-page-not-found",
                            "message": "The requested event archive page does not exist",
                            "data": {"status": 404}}
    assert lc.get(BASE + "/venues?page=9").get_json()["code"] == (
        "venue-archive-page-not-found")
    terms = lc.get(BASE + "/tags?page=3")
    assert terms.status_code == 200
    assert terms.get_json()["tags"] == []
    assert terms.get_json()["previous_rest_url"].endswith("/tags/?page=2")


def test_per_page_is_capped(lc) -> None:
    body = lc.get(BASE + "/events?per_page=1000").get_json()
    assert "per_page=50" in body["rest_url"] and body["total"] == 5


@pytest.mark.parametrize("query, names", [
    ("per_page=0", ["per_page"]), ("page=-1", ["page"]), ("page=foo", ["page"]),
    ("per_page=1.5", ["per_page"]), ("start_date=before my birthday", ["start_date"]),
    ("end_date=", ["end_date"]), ("search=", ["search"]), ("geoloc_lat=34", ["geoloc_lng"]),
    ("geoloc_lng=-117", ["geoloc_lat"]), ("geoloc_lat=95&geoloc_lng=0", ["geoloc_lat"]),
    ("categories=nope", ["categories"]), ("tags=999", ["tags"]), ("venue=31", ["venue"]),
    ("organizer=21", ["organizer"]), ("featured=yes", ["featured"]),
    ("include=1,x", ["include"]), ("include=0", ["include"]), ("post_parent=21", ["post_parent"]),
    ("status=draft", ["status"]), ("status=publish,draft", ["status"]),
    ("per_page=0&page=0&ends_after=zzz", ["page", "per_page", "ends_after"]),
])
def test_bad_event_parameters(lc, query: str, names: list[str]) -> None:
    assert sorted(bad(lc, f"/events?{query}")) == sorted(names)


def test_typed_boolean_error_details(lc) -> None:
    body = lc.get(BASE + "/events?featured=yes").get_json()
    assert body["data"]["details"]["featured"]["code"] == "rest_invalid_type"


@pytest.mark.parametrize("name", ["ticketed", "tickets"])
def test_ticketed(lc, name: str) -> None:
    body = lc.get(BASE + f"/events?{name}=true").get_json()
    assert body["data"]["details"][name]["code"] == "event-tickets-not-active"
    assert ids(lc, f"/events?{name}=false") == DEFAULT


# -- event filters alone --------------------------------------------------------
@pytest.mark.parametrize("query, expected", [
    ("start_date=2026-11-01", [101, 102, 103, 104, 112, 105, 111]),
    ("start_date=2026-11-01&end_date=2026-11-30", [101, 102, 103]),
    ("start_date=2026-12-01&end_date=2026-12-01", [104]),
    ("starts_after=2026-12-01", [112, 105, 111, 108]),
    ("starts_before=2026-11-20", [101, 102, 103]),  # whole-day widening
    ("starts_before=2026-11-20 12:00:00&strict_dates=1", [101, 102]),
    ("ends_after=2026-11-24&starts_before=2026-11-21", [102]),
    ("ends_before=2026-11-20", [101, 103]),
    ("start_date=2026-11-20 19:00:00&strict_dates=true", [104, 112, 105, 111]),
    ("start_date=2026-11-20 19:00:00", DEFAULT),
    ("end_date=2029-12-31", DEFAULT + [108]),
    ("search=jazz", [103, 104]),
    ("search=JAZZ brunch", [104]),
    ("search=jazz -brunch", [103]),
    ("search=trio", [104]),
    ("search=bebop", [103]),
    ("search=nothing-like-this", []),
    ("categories=music", [103, 104]),  # jazz is a child of music
    ("categories=2", [104]),
    ("categories=jazz,workshops", [104, 112, 105]),
    ("categories[]=jazz&categories[]=3", [104, 112, 105]),
    ("tags=family", [103, 105]),
    ("tags=family&categories=workshops", [105]),
    ("venue=21", [103]),
    ("venue=21,23", [103, 111]),
    ("organizer=31", [104, 105]),
    ("featured=true", [103]),
    ("featured=0", [104, 112, 105, 111]),
    ("include=105,103,108,107,999", [103, 105, 108]),
    ("include=105&start_date=2020-01-01&end_date=2020-01-02", [105]),
    ("post_parent=103", []),
    ("geoloc=true", [103, 111]),
    ("geoloc=false", [104, 112, 105]),
    ("geoloc_lat=34.0&geoloc_lng=-117.4", [103]),
    ("geoloc_lat=51.5&geoloc_lng=-0.1&geoloc_radius=5", [111]),
    ("geoloc_lat=0&geoloc_lng=0", []),
    ("status=publish", DEFAULT),
    ("search=class&categories=workshops&start_date=2027-01-01&tags=family", [105]),
])
def test_event_filters(lc, query: str, expected: list[int]) -> None:
    assert ids(lc, f"/events?{query}") == expected


def test_filters_are_echoed_like_the_plugin(lc) -> None:
    body = lc.get(BASE + "/events?featured=1&venue=21&search=jazz").get_json()
    assert body["rest_url"].endswith(
        "?page=1&per_page=10&start_date=2026-11-20+00%3A00%3A00&end_date=2028-11-21"
        "+23%3A59%3A59&search=jazz&status=publish&venue=21&featured=1")
    rel = lc.get(BASE + "/events?starts_after=2026-12-01").get_json()
    assert "start_date" not in rel["rest_url"] and "starts_after=2026-12-01 23:59:59" in (
        rel["rest_url"])


# -- statuses and permissions ----------------------------------------------------
def test_editor_sees_every_status_by_default(lc, auth) -> None:
    assert ids(lc, "/events", headers=auth("administrator")) == [103, 104, 112, 105, 106,
                                                                 109, 111]
    body = lc.get(BASE + "/events", headers=auth("editor")).get_json()
    assert "status=any" in body["rest_url"]
    assert ids(lc, "/events?status=draft", headers=auth("editor")) == [106]
    assert ids(lc, "/events?status=trash", headers=auth("editor")) == [110]
    assert sorted(bad(lc, "/events?status=foo,publish", headers=auth("editor"))) == [
        "status"]
    assert bad(lc, "/events?status=any", headers=auth("editor")) == {
        "status": "Invalid parameter."}


def test_author_sees_own_private_but_not_others_drafts(lc, auth) -> None:
    # author (id 3) owns the private dinner; the draft gala belongs to user 1
    assert ids(lc, "/events", headers=auth("author")) == [103, 104, 112, 105, 109, 111]
    assert ids(lc, "/events", headers=auth("subscriber")) == DEFAULT
    assert bad(lc, "/events?status=draft", headers=auth("subscriber")) == {
        "status": "Invalid parameter."}


def test_hidden_events_never_listed(lc, auth) -> None:
    assert 107 not in ids(lc, "/events?include=107", headers=auth("administrator"))
    assert lc.get(BASE + "/events/107").status_code == 200


# -- venues and organizers --------------------------------------------------------
@pytest.mark.parametrize("query, expected", [
    ("", [25, 23, 22, 21]),
    ("search=riverside", [21]),
    ("search=hay lane", [22]),
    ("event=103", [21]),
    ("has_events=1", [23, 22, 21]),
    ("has_events=0", [25]),
    ("only_with_upcoming=true", [23, 22]),
    ("per_page=2&page=2", [22, 21]),
])
def test_venue_filters(lc, query: str, expected: list[int]) -> None:
    assert ids(lc, f"/venues?{query}") == expected


def test_venue_envelope_and_status(lc, auth) -> None:
    body = lc.get(BASE + "/venues?per_page=2").get_json()
    assert list(body) == ["venues", "rest_url", "next_rest_url", "total", "total_pages"]
    assert body["rest_url"].endswith("/venues/?page=1&per_page=2&status=publish")
    assert 24 in ids(lc, "/venues", headers=auth("editor"))
    assert bad(lc, "/venues?status=draft") == {"status": "Invalid parameter."}
    assert bad(lc, "/venues?event=21") == {"event": "Invalid parameter."}


@pytest.mark.parametrize("query, expected", [
    ("", [32, 31]), ("search=alice@", [31]), ("event=104", [31]), ("has_events=true", [31]),
    ("has_events=false", [32]),
])
def test_organizer_filters(lc, query: str, expected: list[int]) -> None:
    assert ids(lc, f"/organizers?{query}") == expected


# -- categories and tags -----------------------------------------------------------
@pytest.mark.parametrize("query, expected", [
    ("", [2, 1, 3]),
    ("hide_empty=0", [2, 1, 3, 4]),
    ("hide_empty=false&orderby=id", [1, 2, 3, 4]),
    ("orderby=count&order=desc", [1, 3, 2]),
    ("orderby=slug", [2, 1, 3]),
    ("orderby=nonsense", [2, 1, 3]),
    ("search=us", [1]),
    ("include=1,3", [1, 3]),
    ("exclude=1", [2, 3]),
    ("slug=jazz", [2]),
    ("parent=1", [2]),
    ("event=105", [3]),
    ("post=103", [1]),
    ("post=103&event=104", [2]),
    ("hide_empty=0&orderby=include&include=4,1", [4, 1]),
])
def test_category_filters(lc, query: str, expected: list[int]) -> None:
    assert ids(lc, f"/categories?{query}") == expected


def test_term_envelope_and_counts(lc) -> None:
    body = lc.get(BASE + "/tags?per_page=1").get_json()
    assert list(body) == ["rest_url", "total", "total_pages", "tags", "next_rest_url"]
    assert body["rest_url"] == "http://localhost/wp-json/tribe/events/v1/tags/"
    assert body["next_rest_url"] == "http://localhost/wp-json/tribe/events/v1/tags/?page=2"
    counts = {t["slug"]: t["count"] for t in lc.get(
        BASE + "/categories?hide_empty=0").get_json()["categories"]}
    # published events only (the hidden rehearsal is published and counts)
    assert counts == {"music": 4, "jazz": 1, "workshops": 2, "empty-cat": 0}


@pytest.mark.parametrize("query, name", [
    ("parent=0", "parent"), ("parent=2", None), ("orderby=", "orderby"), ("order=", "order"),
    ("slug=", "slug"), ("post=", "post"), ("event=999", "event"), ("include=99", "include"),
    ("hide_empty=maybe", "hide_empty"),
])
def test_bad_category_parameters(lc, query: str, name: str | None) -> None:
    if name is None:
        assert ids(lc, f"/categories?{query}") == []
    else:
        assert list(bad(lc, f"/categories?{query}")) == [name]


def test_tags_have_no_parent_parameter(lc) -> None:
    assert ids(lc, "/tags?parent=1") == [11, 12]


# -- HTTP caching -------------------------------------------------------------------
def test_etag_and_304(lc, auth) -> None:
    first = lc.get(BASE + "/events")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith('W/')
    assert first.headers["Cache-Control"].startswith("public")
    again = lc.get(BASE + "/events", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    assert lc.get(BASE + "/events?per_page=2").headers["ETag"] != etag
    single = lc.get(BASE + "/events/103")
    assert lc.get(BASE + "/events/103", headers={
        "If-None-Match": single.headers["ETag"]}).status_code == 304
    private = lc.get(BASE + "/events", headers=auth("editor"))
    assert private.headers["Cache-Control"] == "private, no-store"


def test_etag_changes_after_a_write(lc, auth) -> None:
    etag = lc.get(BASE + "/events").headers["ETag"]
    r = lc.post(BASE + "/events/104", json={"title": "Jazz Brunch Deluxe"},
                headers=auth("administrator"))
    assert r.status_code == 200, r.get_json()
    after = lc.get(BASE + "/events", headers={"If-None-Match": etag})
    assert after.status_code == 200
    assert after.get_json()["events"][1]["title"] == "Jazz Brunch Deluxe"
    assert ids(lc, "/events?search=deluxe") == [104]
