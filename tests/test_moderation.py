"""The moderation queue (/admin/pending/, editing/moderation.py): who may see it, what it
shows (check's findings, likely duplicates, the submitter's address), and each decision
as one commit by the editor; bad posts refused with nothing committed."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import BASE, csrf_token, git, read_yaml, sign_in
from submitting import decision, head, propose, text, untouched

from calendar_app.http.app import create_app


@pytest.fixture
def app(config: dict, signed_users: dict):
    return create_app(config)


@pytest.fixture
def submitted(client, content: Path) -> int:
    """A visitor's event (with a new venue and organizer), then an editor signed in."""
    assert propose(client).status_code == 303
    event = read_yaml(content / "events/2027/harbour-lantern-walk.yaml")
    assert sign_in(client, "editor").status_code == 303
    return event["id"]


def last_commit(content: Path) -> tuple[str, str, list[str]]:
    author, _, message = git(content, "log", "-1", "--format=%an%n%B").partition("\n")
    files = git(content, "show", "--name-only", "--format=", "HEAD").split()
    return author, message.strip(), sorted(files)


def test_anonymous_visitors_are_sent_to_sign_in(client) -> None:
    response = client.get("/admin/pending/")
    assert response.status_code == 303
    assert "/admin/sign-in" in response.headers["Location"]
    assert client.post("/admin/pending/1/approve").status_code in (303, 400)


def session_token(client) -> str:
    """The CSRF token of this client's session (any form page carries it)."""
    return csrf_token(client.get("/submit/").data)


@pytest.mark.parametrize("role", ["contributor", "author", "subscriber"])
def test_only_editors_and_administrators_moderate(client, content: Path, role: str) -> None:
    assert propose(client).status_code == 303
    before = head(content)
    sign_in(client, role)
    response = client.get("/admin/pending/")
    assert response.status_code == 403
    assert "Only editors and administrators" in text(response)
    for verb in ("approve", "reject"):
        response = client.post(f"/admin/pending/157/{verb}",
                               data={"csrf_token": session_token(client), "reason": "no"})
        assert response.status_code == 403
    assert untouched(content, before)


def test_the_queue_shows_the_submission_with_check_duplicates_and_address(
        client, content: Path, submitted: int) -> None:
    page = html.unescape(text(client.get("/admin/pending/")))
    assert "<h1>Pending events</h1>" in page
    assert f'id="event-{submitted}">Harbour Lantern Walk<' in page
    assert "2027-03-05 19:30:00 to 2027-03-05 21:00:00 (Europe/Lisbon)" in page
    assert "Old Harbour Steps, 1 Quay Street, Porto (new: Draft)" in page
    assert "Lantern Friends (new: Draft)" in page
    assert "submissions for <a href=\"mailto:walker@example.org\">" in page
    assert "<strong>lantern</strong>" in page  # the description, rendered
    assert "No problems." in page and "None found." in page
    # Edit then approve: the editing page of the event, then back here.
    assert f'<a class="button secondary" href="/admin/events/{submitted}/">Edit' in page


def test_check_findings_and_likely_duplicates_are_listed(client, content: Path,
                                                         auth) -> None:
    # A contributor's pending event beside a published one of the same day and venue,
    # with a link check reports.
    body = {"title": "Jazz Night: Ana Lucia Ferrer Trio", "status": "pending",
            "start_date": "2027-01-07 20:00:00", "end_date": "2027-01-07 22:00:00",
            "venue": 0}
    response = client.post(f"{BASE}/events", json=body, headers=auth("contributor"))
    assert response.status_code == 201, response.json
    path = "events/2027/jazz-night-ana-lucia-ferrer-trio.yaml"
    (content / path).write_text((content / path).read_text() + "venue: no-such-hall\n")
    git(content, "commit", "-qam", "a dangling venue, by hand")
    app = client.application
    app.extensions["calendar"].catalog.refresh([path])
    sign_in(client, "editor")
    page = html.unescape(text(client.get("/admin/pending/")))
    line = (content / path).read_text().splitlines().index("venue: no-such-hall") + 1
    assert (f"{path}:{line}: error: venue: no venue with slug 'no-such-hall' "
            "[dangling-link]" in page), page
    assert "Jazz Night: Ana Lucía Ferrer Trio: 2027-01-07 19:30:00, Published (#106)" in page


def test_approving_publishes_the_event_and_what_it_brought_in_one_commit(
        client, content: Path, submitted: int, tmp_path: Path) -> None:
    before = head(content)
    response = decision(client, submitted, "approve")
    assert response.status_code == 303
    assert ("Published “Harbour Lantern Walk”."
            in html.unescape(text(client.get("/admin/pending/"))))
    assert git(content, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    author, message, files = last_commit(content)
    assert author == "editor"
    assert message == f'events: approve "Harbour Lantern Walk" (#{submitted})'
    assert files == ["content/events/2027/harbour-lantern-walk.yaml",
                     "content/organizers/lantern-friends.yaml",
                     "content/venues/old-harbour-steps.yaml"]
    for path in ("events/2027/harbour-lantern-walk.yaml", "venues/old-harbour-steps.yaml",
                 "organizers/lantern-friends.yaml"):
        assert read_yaml(content / path)["status"] == "publish"
    shown = client.application.test_client().get(f"{BASE}/events/{submitted}")
    assert shown.status_code == 200 and shown.json["venue"]["venue"] == "Old Harbour Steps"
    kept = read_yaml(tmp_path / "submissions.yaml")["submissions"]
    assert kept[submitted]["decision"] == "approved" and kept[submitted]["editor"] == "editor"
    # Decided once: a second approval is refused, nothing committed.
    again = head(content)
    response = client.post(f"/admin/pending/{submitted}/approve",
                           data={"csrf_token": session_token(client)})
    assert response.status_code == 409
    assert f"Event #{submitted} is no longer pending" in text(response)
    assert untouched(content, again)


def test_rejecting_trashes_with_the_reason_in_the_commit_and_kept(
        client, content: Path, submitted: int, tmp_path: Path) -> None:
    before = head(content)
    response = decision(client, submitted, "reject", reason="Not in our area,\n sorry.")
    assert response.status_code == 303
    assert git(content, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    author, message, files = last_commit(content)
    assert author == "editor"
    assert message == (f'events: reject "Harbour Lantern Walk" (#{submitted})\n\n'
                       "Reason: Not in our area, sorry.")
    assert files == ["content/events/2027/harbour-lantern-walk__trashed.yaml",  # renamed
                     "content/organizers/lantern-friends__trashed.yaml",
                     "content/venues/old-harbour-steps__trashed.yaml"]
    event = read_yaml(
        content / "events/2027/harbour-lantern-walk__trashed.yaml")
    assert event["status"] == "trash"
    venue = read_yaml(content / "venues/old-harbour-steps__trashed.yaml")
    assert venue["status"] == "trash"
    kept = read_yaml(tmp_path / "submissions.yaml")["submissions"]
    assert kept[submitted]["decision"] == "rejected"
    assert kept[submitted]["reason"] == "Not in our area, sorry."
    assert f'id="event-{submitted}"' not in text(client.get("/admin/pending/"))


@pytest.mark.parametrize(("reason", "message"), [
    ("", "Give a reason: it is kept with the decision and sent to the submitter."),
    ("  \n ", "Give a reason: it is kept with the decision and sent to the submitter."),
    ("x" * 1001, "At most 1000 characters."),
])
def test_a_rejection_needs_a_reason(client, content: Path, submitted: int, reason: str,
                                    message: str) -> None:
    before = head(content)
    response = decision(client, submitted, "reject", reason=reason)
    assert response.status_code == 400
    assert f'id="error-{submitted}">{message}<' in html.unescape(text(response))
    assert untouched(content, before)


def test_a_decision_on_an_event_changed_since_the_page_was_loaded_is_refused(
        client, content: Path, submitted: int, auth) -> None:
    page = text(client.get("/admin/pending/"))
    token = csrf_token(page)
    stale = re.search(r'name="token" value="([^"]+)"', page).group(1)
    response = client.application.test_client().post(
        f"{BASE}/events/{submitted}", json={"title": "Harbour Lantern Walk (moved)"},
        headers=auth("editor"))
    assert response.status_code == 200
    before = head(content)
    response = client.post(f"/admin/pending/{submitted}/approve",
                           data={"csrf_token": token, "token": stale})
    assert response.status_code == 409
    assert "The event changed since this page was loaded" in text(response)
    assert untouched(content, before)
    assert "Harbour Lantern Walk (moved)" in text(response)  # the page shows it anew


def test_decisions_need_the_csrf_token(client, content: Path, submitted: int) -> None:
    before = head(content)
    for verb in ("approve", "reject"):
        response = client.post(f"/admin/pending/{submitted}/{verb}",
                               data={"reason": "spam"})
        assert response.status_code == 400
        assert "The CSRF token is missing." in text(response)
    assert untouched(content, before)


def test_an_unknown_event_is_not_decided(client, content: Path, submitted: int) -> None:
    before = head(content)
    token = csrf_token(client.get("/admin/pending/").data)
    for event_id in (106, 999999):  # published, absent
        response = client.post(f"/admin/pending/{event_id}/approve",
                               data={"csrf_token": token})
        assert response.status_code == 409
    assert client.post("/admin/pending/x/approve", data={"csrf_token": token}
                       ).status_code == 404
    assert untouched(content, before)
