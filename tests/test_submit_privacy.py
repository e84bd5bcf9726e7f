"""The submitter's e-mail address stays private (editing/submitters.py): kept beside the
users file, never in the content tree or its history, the interface, the static site or
its feeds, even once the event is published. The site links to the form (`submit_url`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, git, sign_in, site_options
from submitting import decision, propose

from calendar_app.http.app import create_app
from calendar_app.site import build
from calendar_app.site.pages import submit_url

SECRET = "hidden.walker@example.org"


@pytest.fixture
def app(config: dict, signed_users: dict):
    return create_app(config)


def test_the_address_is_in_no_public_output(client, content: Path, tmp_path: Path,
                                            auth) -> None:
    assert propose(client, email=SECRET).status_code == 303
    editor = auth("administrator")
    api = client.application.test_client()
    # Pending: not even editors read it through the interface.
    pending = api.get(f"{BASE}/events/157", headers=editor)
    assert pending.status_code == 200 and pending.json["status"] == "pending"
    assert SECRET not in pending.get_data(as_text=True)
    sign_in(client, "editor")
    assert SECRET in client.get("/admin/pending/").get_data(as_text=True)  # editors see it
    assert decision(client, 157, "approve").status_code == 303
    reads = [api.get(f"{BASE}/events/157"), api.get(f"{BASE}/events?per_page=50"),
             api.get(f"{BASE}/events?search=lantern"), api.get(f"{BASE}/venues"),
             api.get(f"{BASE}/organizers"), api.get(f"{BASE}/events/157", headers=editor),
             api.get(f"{BASE}/events?per_page=50&status=publish", headers=editor)]
    assert all(r.status_code == 200 for r in reads)
    assert "Harbour Lantern Walk" in reads[1].get_data(as_text=True)
    assert not [r.request.url for r in reads if SECRET in r.get_data(as_text=True)]
    assert SECRET not in git(content, "log", "-p", "--all")
    assert not [p for p in content.rglob("*") if p.is_file() and ".git" not in p.parts
                and SECRET.encode() in p.read_bytes()]
    assert SECRET in (tmp_path / "submissions.yaml").read_text()  # kept, privately

    (content / "calendar.yaml").write_text((content / "calendar.yaml").read_text()
                                           + "submit_url: https://events.example.org/submit/\n")
    out = tmp_path / "public"
    report = build(site_options(content, out, tmp_path / "site-cache"))
    assert report.written and not report.problems
    event_page = out / "event/harbour-lantern-walk/index.html"
    assert "Harbour Lantern Walk" in event_page.read_text()
    feeds = [p for p in out.rglob("*") if p.suffix in (".xml", ".ics", ".json")]
    assert any(p.suffix == ".ics" for p in feeds) and any(p.name == "feed.xml" for p in feeds)
    assert not [p for p in out.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert ('<a href="https://events.example.org/submit/">Propose an event</a>'
            in event_page.read_text())


@pytest.mark.parametrize(("value", "linked"), [
    ("https://events.example.org/submit/", "https://events.example.org/submit/"),
    ("/submit/", "/submit/"),
    ("javascript:alert(1)", ""), ("//evil.example/", ""), (None, ""), (42, ""),
])
def test_only_web_addresses_are_linked_as_the_form(value: object, linked: str) -> None:
    assert submit_url(value) == linked
