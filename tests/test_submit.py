"""The public submission form (/submit/, editing/submit.py): what a visitor's post
becomes, every refusal with its message and nothing committed, the honeypot, the limit
per address, hostile input (hypothesis)."""

from __future__ import annotations

import html
import time
from pathlib import Path

import pytest
from conftest import csrf_token, git, read_yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from submitting import GOOD, head, propose, text, untouched

from calendar_app.editing.submit import FIELDS, HONEYPOT
from calendar_app.http.app import create_app


def kept(tmp_path: Path) -> dict:
    path = tmp_path / "submissions.yaml"
    return read_yaml(path)["submissions"] if path.exists() else {}


def test_the_form_is_plain_html_with_a_token_and_a_hidden_trap(client) -> None:
    response = client.get("/submit/")
    page = text(response)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert "<script" not in page  # works without JavaScript
    assert 'name="csrf_token"' in page
    assert f'name="{HONEYPOT}"' in page and 'class="trap" aria-hidden="true"' in page
    for f in FIELDS:
        assert f'name="{f.name}"' in page, f.name
    assert "<option selected>America/Los_Angeles</option>" in page  # the calendar's zone
    assert "The Blue Lantern" in page  # published venues offered
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_a_submission_is_one_pending_commit_by_the_submissions_user(
        client, content: Path, tmp_path: Path) -> None:
    before = head(content)
    response = propose(client)
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/submit/thanks/")
    assert "An editor will review it" in text(client.get("/submit/thanks/"))
    log = git(content, "log", "--format=%an|%s", f"{before}..HEAD").splitlines()
    assert log == ['submissions|events: create "Harbour Lantern Walk" (#157)']
    changed = git(content, "show", "--name-status", "--format=", "HEAD").split("\n")
    assert sorted(filter(None, changed)) == [
        "A\tcontent/events/2027/harbour-lantern-walk.yaml",
        "A\tcontent/organizers/lantern-friends.yaml",
        "A\tcontent/venues/old-harbour-steps.yaml"]
    event = read_yaml(content / "events/2027/harbour-lantern-walk.yaml")
    assert event["status"] == "pending"
    assert event["timezone"] == "Europe/Lisbon"
    assert str(event["start_date"]) == "2027-03-05 19:30:00"
    assert event["venue"] == "old-harbour-steps" and event["organizers"] == ["lantern-friends"]
    venue = read_yaml(content / "venues/old-harbour-steps.yaml")
    assert venue["status"] == "draft" and venue["address"] == "1 Quay Street"
    users = read_yaml(tmp_path / "users.yaml")["users"]
    made = [u for u in users if u["name"] == "submissions"]
    assert len(made) == 1 and made[0]["role"] == "contributor"
    assert event["author"] == made[0]["id"]
    assert kept(tmp_path)[157]["email"] == "walker@example.org"
    assert (tmp_path / "submissions.yaml").stat().st_mode & 0o777 == 0o600
    assert "walker@example.org" not in git(content, "log", "-p", "--all")


def option_value(page: str, label: str) -> str:
    return page.split(f">{label}<")[0].rsplit('value="', 1)[1].split('"')[0]


def test_an_existing_venue_organizer_and_category_are_linked_by_id(
        client, content: Path) -> None:
    page = text(client.get("/submit/"))
    response = propose(client, venue_name="", venue_address="", venue_city="",
                       venue=option_value(page, "The Blue Lantern"), organizer_name="",
                       organizer=option_value(page, "Inland Chamber Players"),
                       category=option_value(page, "Jazz"))
    assert response.status_code == 303, text(response)
    event = read_yaml(content / "events/2027/harbour-lantern-walk.yaml")
    assert event["venue"] == "the-blue-lantern"
    assert event["organizers"] == ["inland-chamber-players"]
    assert event["categories"] == ["jazz"]


def test_a_submissions_user_that_may_publish_is_refused_not_demoted(
        app, client, content: Path) -> None:
    app.extensions["calendar"].users.add("submissions", "editor")
    before = head(content)
    response = propose(client)
    assert response.status_code == 503
    assert "may publish; give it the contributor role" in html.unescape(text(response))
    assert untouched(content, before)


BAD = [
    ({"title": ""}, "title", "Missing parameter(s): title"),
    ({"title": "   "}, "title", "Missing parameter(s): title"),
    ({"start_date": ""}, "start_date", "Missing parameter(s): start_date"),
    ({"start_date": "the day after never"}, "start_date", "Invalid parameter."),
    ({"end_date": "2027-03-05T18:00"}, "end_date",
     "The end date must not be before the start date."),
    ({"start_date": "0999-01-01T10:00", "end_date": "0999-01-01T11:00"}, "start_date",
     "start_date must be within years 1000 to 9998."),
    ({"timezone": "Mars/Olympus_Mons"}, "timezone", "Invalid parameter."),
    ({"email": ""}, "email", "Missing parameter(s): email"),
    ({"email": "walker at example.org"}, "email", "Invalid parameter."),
    ({"title": "x" * 201}, "title", "At most 200 characters."),
    ({"description": "<script>alert(1)</script> <iframe src=x></iframe>"}, "description",
     "HTML not allowed in descriptions: <iframe>, <script>."),
    ({"venue": "1"}, "venue_name", "Choose a venue or name a new one, not both."),
    ({"venue_name": "", "venue_address": "2 Side St"}, "venue_name",
     "Name the new venue whose address you gave."),
    ({"venue_name": "", "venue": "99999"}, "venue", "Invalid parameter."),
    ({"category": "music"}, "category", "Invalid parameter."),
    ({"organizer_name": "", "organizer": "1; DROP"}, "organizer", "Invalid parameter."),
    ({"website": "javascript:alert(1)"}, "website", "Invalid parameter."),
]


@pytest.mark.parametrize(("changes", "field", "message"), BAD,
                         ids=[f"{b[1]}:{b[2][:30]}" for b in BAD])
def test_bad_input_is_shown_on_the_form_and_nothing_is_committed(
        client, content: Path, tmp_path: Path, changes: dict, field: str,
        message: str) -> None:
    before = head(content)
    response = propose(client, **changes)
    page = html.unescape(text(response))
    assert response.status_code == 400, page
    assert f'<p class="field-error" id="{field}-error">{message}</p>' in page
    assert f'id="{field}" ' in page or f'id="{field}">' in page
    assert "Your event was not saved." in page
    # What the visitor typed is kept.
    assert 'value="Porto"' in text(response)
    assert untouched(content, before)
    assert kept(tmp_path) == {}


def test_several_problems_are_reported_together(client, content: Path) -> None:
    before = head(content)
    page = html.unescape(text(propose(client, title="", end_date="2027-03-01T10:00",
                                      email="nope")))
    for field, message in (("title", "Missing parameter(s): title"),
                           ("end_date", "The end date must not be before the start date."),
                           ("email", "Invalid parameter.")):
        assert f'id="{field}-error">{message}<' in page
    assert untouched(content, before)


def test_a_post_without_its_csrf_token_is_refused(client, content: Path) -> None:
    before = head(content)
    response = client.post("/submit/", data=GOOD)
    assert response.status_code == 400
    assert "The form could not be checked" in text(response)
    assert "The CSRF token is missing." in text(response)
    assert untouched(content, before)


def test_a_body_over_the_limit_is_refused_before_it_is_read(app, client,
                                                            content: Path) -> None:
    before = head(content)
    app.config["SUBMIT_MAX_BYTES"] = 2000
    response = propose(client, description="word " * 1000)
    assert response.status_code == 413
    assert "larger than 2000 bytes" in text(response)
    assert untouched(content, before)


def test_the_honeypot_answers_like_a_success_and_keeps_nothing(
        client, content: Path, tmp_path: Path) -> None:
    before = head(content)
    response = propose(client, **{HONEYPOT: "https://spam.example"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/submit/thanks/")
    assert untouched(content, before)
    assert kept(tmp_path) == {}


def test_accepted_submissions_are_limited_per_address(app, client, content: Path) -> None:
    app.config.update(SUBMIT_LIMIT=2, SUBMIT_WINDOW=3600)
    assert propose(client, title="One").status_code == 303
    assert propose(client, title="Two").status_code == 303
    before = head(content)
    response = propose(client, title="Three")
    assert response.status_code == 429
    assert 3590 <= int(response.headers["Retry-After"]) <= 3601
    assert "Too many submissions" in text(response)
    assert untouched(content, before)
    # Another address is not held back by this one.
    other = {"REMOTE_ADDR": "192.0.2.7"}
    token = csrf_token(client.get("/submit/", environ_base=other).data)
    response = client.post("/submit/", environ_base=other,
                           data={**GOOD, "title": "Four", "csrf_token": token})
    assert response.status_code == 303


def test_refused_posts_do_not_count_against_the_limit(app, client) -> None:
    app.config.update(SUBMIT_LIMIT=1)
    for _ in range(3):
        assert propose(client, title="").status_code == 400
    assert propose(client).status_code == 303


# -- hostile input -----------------------------------------------------------------------
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
_DATE = st.one_of(_TEXT, st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M")))
_FIELDS = st.fixed_dictionaries(
    {}, optional={"title": _TEXT, "start_date": _DATE, "end_date": _DATE,
                  "timezone": st.one_of(_TEXT, st.sampled_from(["UTC", "Asia/Tokyo"])),
                  "venue": st.one_of(_TEXT, st.integers(-2, 200).map(str)),
                  "venue_name": _TEXT, "venue_address": _TEXT, "organizer_name": _TEXT,
                  "description": st.text(max_size=300), "website": _TEXT, "cost": _TEXT,
                  "category": st.one_of(_TEXT, st.integers(-2, 200).map(str)),
                  "email": st.one_of(_TEXT, st.just("a@example.org")), HONEYPOT: _TEXT})


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory, users_master):
    import shutil

    from conftest import NOW, make_repo

    tmp = tmp_path_factory.mktemp("fuzz")
    content = make_repo(tmp)
    shutil.copy(users_master[0], tmp / "users.yaml")
    with pytest.MonkeyPatch.context() as mp:
        for who in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{who}_NAME", "Test Runner")
            mp.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
        app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp / "users.yaml"),
                          "CACHE_DIR": str(tmp / "cache"), "NOW": NOW, "TESTING": True,
                          "SUBMIT_LIMIT": 10_000})
    return app, content


# Forms drawn: 25 in the default run, 60 under `-m slow`.
@pytest.mark.parametrize("size", [25, pytest.param(60, marks=pytest.mark.slow)])
def test_any_form_gives_a_page_and_at_most_one_pending_event(fuzz_app, size: int) -> None:
    @settings(max_examples=size, deadline=3000,
              suppress_health_check=[HealthCheck.too_slow])
    @given(fields=_FIELDS)
    def one_form(fields: dict) -> None:
        app, content = fuzz_app
        client = app.test_client()
        before = head(content)
        started = time.monotonic()
        data = {**GOOD, **fields}  # a good form with some fields made hostile
        response = propose(client, **data)
        assert time.monotonic() - started < 3
        assert response.status_code in (303, 400), text(response)[:500]
        event(f"status {response.status_code}")
        commits = git(content, "rev-list", f"{before}..HEAD").split()
        assert git(content, "status", "--porcelain") == ""
        if response.status_code == 400 or fields.get(HONEYPOT):
            assert commits == []
            return
        assert len(commits) == 1
        changed = [line.split("\t") for line in git(
            content, "show", "--name-status", "--format=", "HEAD").split("\n") if line]
        assert all(status == "A" for status, _path in changed)
        events = [p for _s, p in changed if p.startswith("content/events/")]
        assert len(events) == 1
        others = [p for _s, p in changed if not p.startswith("content/events/")]
        assert all(p.startswith(("content/venues/", "content/organizers/")) for p in others)
        for path in [p.removeprefix("content/") for p in events + others]:
            status = read_yaml(content / path)["status"]
            assert status == ("pending" if path.startswith("events/") else "draft")

    one_form()
