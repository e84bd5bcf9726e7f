"""Helpers of the submission and moderation tests: filling the public form, reading
the git history of a content tree."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import csrf_token, git

# A submission the service accepts; tests change one field at a time.
GOOD = {
    "title": "Harbour Lantern Walk",
    "start_date": "2027-03-05T19:30",
    "end_date": "2027-03-05T21:00",
    "timezone": "Europe/Lisbon",
    "venue": "",
    "venue_name": "Old Harbour Steps",
    "venue_address": "1 Quay Street",
    "venue_city": "Porto",
    "organizer": "",
    "organizer_name": "Lantern Friends",
    "description": "Bring a **lantern**; we walk along the quay.",
    "website": "https://lanterns.example.org/walk",
    "cost": "5",
    "category": "",
    "email": "walker@example.org",
}


def propose(client, **changes: str):
    """GET the form, then POST it with GOOD changed by `changes` (its CSRF token)."""
    token = csrf_token(client.get("/submit/").data)
    data = {**GOOD, "csrf_token": token, **changes}
    return client.post("/submit/", data={k: v for k, v in data.items() if v is not None})


def head(content: Path) -> str:
    return git(content, "rev-parse", "HEAD").strip()


def untouched(content: Path, before: str) -> bool:
    """No commit since `before` and nothing left in the work tree."""
    return head(content) == before and git(content, "status", "--porcelain") == ""


def text(response) -> str:
    return response.get_data(as_text=True)


def decision(client, event_id: int, verb: str, **fields: str):
    page = text(client.get("/admin/pending/"))
    token = re.search(rf'/admin/pending/{event_id}/{verb}"[^>]*>\s*<input type="hidden" '
                      r'name="csrf_token" value="[^"]+">\s*<input type="hidden" '
                      r'name="token" value="([^"]+)"', page)
    assert token, page
    data = {"csrf_token": csrf_token(page), "token": token.group(1), **fields}
    return client.post(f"/admin/pending/{event_id}/{verb}", data=data)
