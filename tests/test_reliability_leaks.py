"""Unpublished venues and organizers linked from a published event do not leak.

A reader sees a linked record embedded in an event only if it may read that record on
its own: anonymous readers (and every static output, which is what an anonymous reader
gets) see neither a draft venue nor a draft organizer, while an administrator does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BASE, NOW, SAMPLE_NEXT_ID, git, make_repo, set_git_identity

from calendar_app.site import Options, build

EVENT_ID, VENUE_ID, ORGANIZER_ID, DRAFT_EVENT_ID = range(SAMPLE_NEXT_ID, SAMPLE_NEXT_ID + 4)
PUBLIC_ORGANIZER_ID = 61  # riverside-jazz-collective, published
EVENT_SLUG = "cellar-session-february-2027"
# What the drafts hold that nobody but their editors may see.
SECRETS = ("Secret Cellar Stage", "77 Hidden Alley", "Shadow Promoters",
           "shadow@promoters.example.org", "555-0199", "secret-cellar-stage",
           "shadow-promoters")

EVENT = f"""\
id: {EVENT_ID}
title: Cellar Session
slug: {EVENT_SLUG}
status: publish
author: 1
date: 2026-11-01 10:00:00
start_date: 2027-02-10 20:00:00
end_date: 2027-02-10 23:00:00
venue: secret-cellar-stage
organizers:
  - shadow-promoters
  - riverside-jazz-collective
cost: "12"
description: An evening of quiet jazz.
"""
VENUE = f"""\
id: {VENUE_ID}
name: Secret Cellar Stage
slug: secret-cellar-stage
status: draft
author: 1
address: 77 Hidden Alley
city: Nowhereville
zip: "99999"
country: United States
phone: (951) 555-0199
geo_lat: 33.9
geo_lng: -117.3
"""
ORGANIZER = f"""\
id: {ORGANIZER_ID}
name: Shadow Promoters
slug: shadow-promoters
status: draft
author: 1
email: shadow@promoters.example.org
phone: (951) 555-0199
"""
DRAFT_EVENT = f"""\
id: {DRAFT_EVENT_ID}
title: Unannounced Gala
slug: unannounced-gala-2027
status: draft
author: 1
start_date: 2027-03-10 20:00:00
end_date: 2027-03-10 23:00:00
venue: the-blue-lantern
organizers:
  - riverside-jazz-collective
tags:
  - live-music
"""


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def unescaped(text: str) -> str:
    """A JSON body as text with WordPress's `\\/` escapes undone."""
    return json.dumps(json.loads(text), ensure_ascii=False)


def _add_drafts(content: Path) -> Path:
    (content / "events/2027" / f"{EVENT_SLUG}.yaml").write_text(EVENT)
    (content / "venues/secret-cellar-stage.yaml").write_text(VENUE)
    (content / "organizers/shadow-promoters.yaml").write_text(ORGANIZER)
    (content / "events/2027/unannounced-gala-2027.yaml").write_text(DRAFT_EVENT)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "drafts linked from a published event")
    return content


@pytest.fixture(scope="module")
def module_content(module_content: Path) -> Path:
    """The sample calendar plus a published event linked to a draft venue and a draft
    organizer (and to a published organizer), committed."""
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        return _add_drafts(module_content)


# Every test here only reads (GET, as anonymous or as the administrator): one app over
# that calendar for the module (conftest's `reading_client`; its teardown fails the
# module if a test wrote).
@pytest.fixture
def client(reading_client):
    return reading_client


@pytest.fixture
def admin(reading_auth) -> dict:
    return reading_auth("administrator")


# -- the interface ---------------------------------------------------------------
@pytest.mark.parametrize("path", [f"events/{EVENT_ID}", f"events/by-slug/{EVENT_SLUG}"])
def test_single_event_read_hides_drafts_from_anonymous(client, admin: dict,
                                                        path: str) -> None:
    # The drafts alone are not readable anonymously...
    assert client.get(f"{BASE}/venues/{VENUE_ID}").status_code in (401, 403)
    assert client.get(f"{BASE}/organizers/{ORGANIZER_ID}").status_code in (401, 403)
    # ...so the event does not show them either.
    response = client.get(f"{BASE}/{path}")
    assert response.status_code == 200
    body = response.get_json()
    assert leaked(unescaped(response.get_data(as_text=True))) == []
    # The plugin's shape of an event without a venue; the readable organizer stays.
    assert body["venue"] == []
    assert [o["id"] for o in body["organizer"]] == [PUBLIC_ORGANIZER_ID]
    assert "location" not in body["json_ld"]
    assert "Shadow" not in json.dumps(body["json_ld"])

    seen = client.get(f"{BASE}/{path}", headers=admin)
    assert seen.status_code == 200
    assert seen.get_json()["venue"]["id"] == VENUE_ID
    assert sorted(o["id"] for o in seen.get_json()["organizer"]) == [
        PUBLIC_ORGANIZER_ID, ORGANIZER_ID]
    assert set(leaked(unescaped(seen.get_data(as_text=True)))) >= {
        "Secret Cellar Stage", "77 Hidden Alley", "Shadow Promoters",
        "shadow@promoters.example.org"}


def test_list_filtered_by_a_readable_organizer_hides_the_drafts(client, admin: dict) -> None:
    query = f"{BASE}/events?organizer={PUBLIC_ORGANIZER_ID}&per_page=50"
    # The administrator first: a rendering cached for them must not reach anyone else.
    seen = client.get(query, headers=admin)
    assert EVENT_ID in [e["id"] for e in seen.get_json()["events"]]
    assert "Secret Cellar Stage" in unescaped(seen.get_data(as_text=True))
    response = client.get(query)
    assert response.status_code == 200
    assert EVENT_ID in [e["id"] for e in response.get_json()["events"]]
    assert leaked(unescaped(response.get_data(as_text=True))) == []


def test_search_and_include_hide_the_drafts(client, admin: dict) -> None:
    for query in ("search=cellar", f"include={EVENT_ID}"):
        seen = client.get(f"{BASE}/events?{query}", headers=admin)
        assert "Shadow Promoters" in unescaped(seen.get_data(as_text=True))
        response = client.get(f"{BASE}/events?{query}")
        assert [e["id"] for e in response.get_json()["events"]] == [EVENT_ID]
        assert leaked(unescaped(response.get_data(as_text=True))) == [], query


@pytest.mark.parametrize("param, record_id", [("venue", VENUE_ID),
                                              ("organizer", ORGANIZER_ID)])
def test_list_filtered_by_a_draft_answers_as_for_an_unknown_id(
        client, admin: dict, param: str, record_id: int) -> None:
    unknown = client.get(f"{BASE}/events?{param}=999999")
    response = client.get(f"{BASE}/events?{param}={record_id}")
    assert response.status_code == unknown.status_code == 400
    assert response.get_json() == unknown.get_json()
    assert response.get_json()["code"] == "rest_invalid_param"
    assert leaked(unescaped(response.get_data(as_text=True))) == []

    seen = client.get(f"{BASE}/events?{param}={record_id}", headers=admin)
    assert seen.status_code == 200
    assert [e["id"] for e in seen.get_json()["events"]] == [EVENT_ID]
    assert "Secret Cellar Stage" in unescaped(seen.get_data(as_text=True))


def test_geoloc_filters_do_not_locate_a_draft_venue(client, admin: dict) -> None:
    near = f"{BASE}/events?geoloc_lat=33.9&geoloc_lng=-117.3&geoloc_radius=1"
    with_coordinates = f"{BASE}/events?geoloc=true&per_page=50"

    def found(url: str, headers: dict | None = None) -> list[int]:
        return [e["id"] for e in client.get(url, headers=headers or {}).get_json()["events"]]

    assert EVENT_ID in found(near, admin) and EVENT_ID in found(with_coordinates, admin)
    assert EVENT_ID not in found(near)
    assert EVENT_ID not in found(with_coordinates)


@pytest.mark.parametrize("collection, param", [("venues", "event"), ("organizers", "event"),
                                               ("tags", "post"), ("tags", "event")])
def test_lists_filtered_by_a_draft_event_answer_as_for_an_unknown_id(
        client, admin: dict, collection: str, param: str) -> None:
    unknown = client.get(f"{BASE}/{collection}?{param}=999999")
    response = client.get(f"{BASE}/{collection}?{param}={DRAFT_EVENT_ID}")
    assert response.status_code == unknown.status_code == 400
    assert response.get_json() == unknown.get_json()
    seen = client.get(f"{BASE}/{collection}?{param}={DRAFT_EVENT_ID}", headers=admin)
    assert seen.status_code == 200 and seen.get_json()[collection]


# -- the static site ---------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of that calendar, built once: its tests only read it."""
    tmp_path = tmp_path_factory.mktemp("leaks-site")
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        content = _add_drafts(make_repo(tmp_path))
    report = build(Options(content=content, out=tmp_path / "public", now=NOW,
                           base_url="https://example.org/calendar/",
                           cache_dir=tmp_path / "site-cache", progress=False))
    assert report.written and not report.problems
    return tmp_path / "public"


def test_event_page_and_its_json_ld_hide_the_drafts(site: Path) -> None:
    page = (site / f"event/{EVENT_SLUG}/index.html").read_text(encoding="utf-8")
    assert "Cellar Session" in page
    ld = json.loads(re.search(r'ld\+json">(.*?)</script>', page, re.DOTALL).group(1))
    assert "location" not in ld
    assert ld.get("organizer", {}).get("name") != "Shadow Promoters"
    assert leaked(json.dumps(ld, ensure_ascii=False)) == []
    assert leaked(page) == []


def test_event_ics_hides_the_drafts(site: Path) -> None:
    ics = (site / f"event/{EVENT_SLUG}/event.ics").read_text(encoding="utf-8")
    assert "Cellar Session" in ics
    assert leaked(ics.replace("\r\n ", "")) == []
    assert leaked((site / "calendar.ics").read_text(encoding="utf-8")
                  .replace("\r\n ", "")) == []


def test_json_snapshots_hide_the_drafts(site: Path) -> None:
    rest = site / "wp-json/tribe/events/v1"
    for path in (f"events/{EVENT_ID}.json", f"events/by-slug/{EVENT_SLUG}.json"):
        text = (rest / path).read_text(encoding="utf-8")
        body = json.loads(text)
        assert body["venue"] == [] and [o["id"] for o in body["organizer"]] == [
            PUBLIC_ORGANIZER_ID], path
        assert leaked(unescaped(text)) == [], path
    # Nothing else in the output names them either (lists, feeds, sitemap, pages).
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".ics", ".json", ".xml", ".txt"):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":
                text = unescaped(text)
            assert leaked(text.replace("\r\n ", "")) == [], path


def test_snapshot_matches_the_anonymous_live_read(site: Path, client) -> None:
    live = client.get(f"{BASE}/events/{EVENT_ID}").get_json()
    snap = json.loads((site / f"wp-json/tribe/events/v1/events/{EVENT_ID}.json")
                      .read_text(encoding="utf-8"))
    assert snap["venue"] == live["venue"] == []
    assert [o["id"] for o in snap["organizer"]] == [o["id"] for o in live["organizer"]]

