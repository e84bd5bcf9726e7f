"""What interface writes do to the content tree: exact YAML of a create, minimal diffs of
updates to hand-written files, one git commit per write with the user as author,
atomic writes.

Backed by design.md ("The content tree", "content"), docs/content-format.md and
issue 2 item 7.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from conftest import BASE, commit_count, git, read_yaml

from calendar_app.editorial.fmt import canonical_text
from calendar_app.http.app import create_app

JAZZ_NIGHT = 106
JAZZ_NIGHT_FILE = "events/2027/jazz-night-january-2027.yaml"
BLUE_LANTERN = 45
JAZZ_COLLECTIVE = 61
JAZZ, MUSIC = 2, 1
LIVE_MUSIC, TWENTY_ONE = 28, 26





@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content



def commits(content: Path) -> int:
    return commit_count(content.parent)


def head(content: Path, fmt: str) -> str:
    return git(content.parent, "log", "-1", f"--format={fmt}").strip()


def changed_lines(content: Path, rev: str = "HEAD") -> list[str]:
    """+/- lines of a commit's diff, without the file headers."""
    out = git(content.parent, "show", "--format=", "-U0", rev)
    return [line for line in out.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def max_id(content: Path) -> int:
    return max(int(m) for p in content.rglob("*.yaml")
               for m in re.findall(r"^id: (\d+)$", p.read_text(), re.MULTILINE))


def new_event(**extra) -> dict:
    body = {"title": "Test Concert", "start_date": "2027-02-01 19:00:00",
            "end_date": "2027-02-01 21:00:00"}
    body.update(extra)
    return body


# -- the YAML written by a create ---------------------------------------------------------------
def test_create_writes_exact_yaml(client, admin, content):
    new_id = max_id(content) + 1
    response = client.post(f"{BASE}/events", headers=admin, json=new_event())
    assert response.status_code == 201
    text = (content / "events/2027/test-concert.yaml").read_text(encoding="utf-8")
    assert text == textwrap.dedent(f"""\
        id: {new_id}
        title: Test Concert
        slug: test-concert
        status: publish
        author: 1
        date: 2026-11-21 04:00:00
        modified: 2026-11-21 04:00:00
        start_date: 2027-02-01 19:00:00
        end_date: 2027-02-01 21:00:00
        timezone: America/Los_Angeles
        """)


def test_create_with_links_writes_exact_yaml(client, admin, content):
    new_id = max_id(content) + 1
    response = client.post(f"{BASE}/events", headers=admin, json=new_event(
        title="Gala Night", timezone="America/New_York", venue=BLUE_LANTERN,
        organizer=[JAZZ_COLLECTIVE], categories=[MUSIC, JAZZ], tags=[LIVE_MUSIC],
        cost="25", website="https://gala.example.org", featured=True,
        excerpt="Short.", description="<p>One.</p>\n\n<p>Two.</p>"))
    assert response.status_code == 201
    text = (content / "events/2027/gala-night.yaml").read_text(encoding="utf-8")
    # design.md: keys in the description's order, block style, no YAML tags; `|-`:
    # the text sent has no final line break, and reads back without one
    assert text == textwrap.dedent(f"""\
        id: {new_id}
        title: Gala Night
        slug: gala-night
        status: publish
        author: 1
        date: 2026-11-21 04:00:00
        modified: 2026-11-21 04:00:00
        start_date: 2027-02-01 19:00:00
        end_date: 2027-02-01 21:00:00
        timezone: America/New_York
        venue: the-blue-lantern
        organizers:
          - riverside-jazz-collective
        categories:
          - music
          - jazz
        tags:
          - live-music
        cost: '25'
        website: https://gala.example.org
        featured: true
        excerpt: Short.
        description: |-
          <p>One.</p>

          <p>Two.</p>
        """)


def test_created_files_load_again_after_restart(client, admin, content, config):
    """A file written by the interface must be a valid record file for the next start."""
    made = client.post(f"{BASE}/events", headers=admin, json=new_event()).get_json()
    venue = client.post(f"{BASE}/venues", headers=admin, json={"venue": "New Hall"}).get_json()
    tag = client.post(f"{BASE}/tags", headers=admin, json={"name": "Brand New"}).get_json()
    fresh = create_app(config).test_client()
    for path, record_id in ((f"/events/{made['id']}", made["id"]),
                            (f"/venues/{venue['id']}", venue["id"]),
                            (f"/tags/{tag['id']}", tag["id"])):
        response = fresh.get(BASE + path)
        assert response.status_code == 200, (path, response.get_json())
        assert response.get_json()["id"] == record_id
    problems = fresh.application.extensions["calendar"].catalog.problems
    assert problems == {}


def test_created_yaml_has_no_tags_or_aliases(client, admin, content):
    client.post(f"{BASE}/events", headers=admin, json=new_event())
    client.post(f"{BASE}/venues", headers=admin, json={"venue": "New Hall"})
    for path in (content / "events/2027/test-concert.yaml", content / "venues/new-hall.yaml"):
        text = path.read_text()
        assert not re.search(r"(^|\s)[&*!]\w", text), text


def test_event_goes_into_the_year_folder(client, admin, content):
    client.post(f"{BASE}/events", headers=admin, json=new_event(
        title="Far Future", start_date="2028-05-01 10:00", end_date="2028-05-01 11:00"))
    assert (content / "events/2028/far-future.yaml").exists()


def test_create_venue_and_term_yaml(client, admin, content):
    new_id = max_id(content) + 1
    client.post(f"{BASE}/venues", headers=admin, json={
        "venue": "Lakeside Pavilion", "city": "Chicago", "state": "IL",
        "country": "United States"})
    data = read_yaml(content / "venues/lakeside-pavilion.yaml")
    assert list(data) == ["id", "name", "slug", "status", "author", "date", "modified",
                          "city", "state", "country"]
    assert data["id"] == new_id and data["name"] == "Lakeside Pavilion"
    client.post(f"{BASE}/categories", headers=admin, json={"name": "Bebop", "parent": JAZZ})
    text = (content / "categories/bebop.yaml").read_text()
    assert text == f"id: {new_id + 1}\nname: Bebop\nslug: bebop\nparent: jazz\n"


# -- updates of hand-written files ------------------------------------------------------------
def test_update_changes_only_touched_lines(client, admin, content):
    original = (content / JAZZ_NIGHT_FILE).read_text()
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json={"cost": "20"})
    assert response.status_code == 200
    assert changed_lines(content) == [
        "-modified: 2026-09-12 18:18:00", "+modified: 2026-11-21 04:00:00",
        "-cost: '15'", "+cost: '20'",
    ]
    text = (content / JAZZ_NIGHT_FILE).read_text()
    assert "# Tickets go on sale in January\n" in text
    assert text == original.replace("cost: '15'", "cost: '20'").replace(
        "modified: 2026-09-12 18:18:00", "modified: 2026-11-21 04:00:00")
    # The sample is canonical, and an edit through the interface keeps it so.
    assert canonical_text("events", JAZZ_NIGHT_FILE, text.encode()) == text


def test_update_adding_a_key_inserts_it_in_description_order(client, admin, content):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"website": "https://jazz.example.org/january"})
    assert response.status_code == 200
    lines = (content / JAZZ_NIGHT_FILE).read_text().splitlines()
    # after cost, before image (content-format.md key order)
    i = lines.index("website: https://jazz.example.org/january")
    assert lines[i - 1] == "cost: '15'"
    assert lines[i + 1] == "image: media/jazz-night.png"
    assert changed_lines(content) == [
        "-modified: 2026-09-12 18:18:00", "+modified: 2026-11-21 04:00:00",
        "+website: https://jazz.example.org/january",
    ]


def test_update_of_a_list_keeps_the_file_style(client, admin, content):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"tags": [LIVE_MUSIC]})
    assert response.status_code == 200
    assert changed_lines(content) == [
        "-modified: 2026-09-12 18:18:00", "+modified: 2026-11-21 04:00:00",
        "-  - 21-plus",
    ]
    assert "# Tickets go on sale in January" in (content / JAZZ_NIGHT_FILE).read_text()


def test_update_keeps_a_hand_written_quote_style(content, config, auth):
    path = content / "events" / "quoted.yaml"
    path.write_text('id: 9002\ntitle: "Quoted"\nstart_date: 2027-03-05 19:00\n'
                    'end_date: 2027-03-05 21:00\ncost: "15"\n')
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "hand-written")
    client = create_app(config).test_client()
    response = client.patch(f"{BASE}/events/9002", headers=auth("editor"), json={"cost": "20"})
    assert response.status_code == 200
    assert [line for line in changed_lines(content) if "cost" in line] == [
        '-cost: "15"', '+cost: "20"']


def test_update_of_terse_hand_written_file(tmp_path, content, config, auth):
    """Dates without seconds, comments everywhere, omitted defaults: untouched lines stay."""
    original = textwrap.dedent("""\
        # A hand-written event
        id: 9001
        title: Porch Concert   # working title
        start_date: 2027-03-05 19:00
        end_date: 2027-03-05 21:00

        # the neighbours asked for an early finish
        cost: Free
        description: >-
          Bring a chair.
        """)
    path = content / "events" / "porch-concert.yaml"
    path.write_text(original)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", "hand-written")
    client = create_app(config).test_client()
    response = client.patch(f"{BASE}/events/9001", headers=auth("editor"),
                            json={"title": "Porch Concert on Elm"})
    assert response.status_code == 200
    assert response.get_json()["start_date"] == "2027-03-05 19:00:00"
    text = path.read_text()
    for kept in ("# A hand-written event", "start_date: 2027-03-05 19:00\n",
                 "end_date: 2027-03-05 21:00\n", "# the neighbours asked for an early finish",
                 "cost: Free\n", "description: >-\n  Bring a chair.\n"):
        assert kept in text
    removed = [line for line in changed_lines(content) if line.startswith("-")]
    assert removed == ["-title: Porch Concert   # working title"]
    added = [line for line in changed_lines(content) if line.startswith("+")]
    assert added[0].startswith("+title: Porch Concert on Elm")
    assert len(added) == 2 and added[1] == "+modified: 2026-11-21 04:00:00"


# -- commits ---------------------------------------------------------------------------------
def test_one_commit_per_write_with_user_as_author(client, auth, content):
    start = commits(content)
    editor = auth("editor")
    made = client.post(f"{BASE}/events", headers=editor, json=new_event()).get_json()
    assert commits(content) == start + 1
    assert head(content, "%an") == "editor"
    assert head(content, "%s") == f'events: create "Test Concert" (#{made["id"]})'
    client.patch(f"{BASE}/events/{made['id']}", headers=auth("administrator"),
                 json={"title": "Renamed Concert"})
    assert commits(content) == start + 2
    assert head(content, "%an") == "administrator"
    subject = head(content, "%s")
    assert subject.startswith("events: update ")
    assert '"Renamed Concert"' in subject and f"(#{made['id']})" in subject
    client.delete(f"{BASE}/events/{made['id']}", headers=editor)
    assert commits(content) == start + 3
    assert head(content, "%an") == "editor"
    assert "Renamed Concert" in head(content, "%s") and f"#{made['id']}" in head(content, "%s")
    assert git(content.parent, "status", "--porcelain") == ""


@pytest.mark.parametrize(("method", "path", "body", "name"), [
    ("POST", "/venues", {"venue": "Commit Hall"}, "Commit Hall"),
    ("PATCH", f"/venues/{BLUE_LANTERN}", {"city": "Corona"}, "The Blue Lantern"),
    ("POST", "/organizers", {"organizer": "Commit Org"}, "Commit Org"),
    ("PUT", f"/organizers/{JAZZ_COLLECTIVE}", {"phone": "1"}, "Riverside Jazz Collective"),
    ("POST", "/categories", {"name": "Commit Cat"}, "Commit Cat"),
    ("PATCH", f"/categories/{JAZZ}", {"description": "x"}, "Jazz"),
    ("POST", "/tags", {"name": "Commit Tag"}, "Commit Tag"),
    ("DELETE", f"/tags/{TWENTY_ONE}", None, "21+"),
    ("DELETE", f"/venues/{BLUE_LANTERN}", None, "The Blue Lantern"),
])
def test_commit_for_every_collection(client, auth, content, method, path, body, name):
    start = commits(content)
    response = client.open(BASE + path, method=method, headers=auth("editor"), json=body)
    assert response.status_code in (200, 201), response.get_json()
    record_id = response.get_json()["id"]
    assert commits(content) == start + 1
    assert head(content, "%an") == "editor"
    collection = path.split("/")[1]
    subject = head(content, "%s")
    assert subject.startswith(f"{collection}: ")
    assert name in subject and f"#{record_id}" in subject
    assert git(content.parent, "status", "--porcelain") == ""


def test_failed_write_makes_no_commit(client, admin, content):
    start = commits(content)
    for body in ({"title": ""}, {"start_date": "nonsense"}, {"venue": 999999},
                 {"featured": "maybe"}):
        response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json=body)
        assert response.status_code == 400
    assert commits(content) == start
    assert git(content.parent, "status", "--porcelain") == ""


def test_no_op_update_does_not_fail(client, admin, content):
    response = client.patch(f"{BASE}/tags/{LIVE_MUSIC}", headers=admin, json={})
    assert response.status_code == 200
    assert git(content.parent, "status", "--porcelain") == ""


# -- atomicity -------------------------------------------------------------------------------
def test_no_temporary_files_left(client, admin, content):
    made = client.post(f"{BASE}/events", headers=admin, json=new_event()).get_json()
    client.patch(f"{BASE}/events/{made['id']}", headers=admin, json={"slug": "other-slug"})
    client.patch(f"{BASE}/venues/{BLUE_LANTERN}", headers=admin, json={"slug": "lantern"})
    client.delete(f"{BASE}/events/{made['id']}?force=true", headers=admin)
    client.delete(f"{BASE}/categories/{JAZZ}", headers=admin)
    leftovers = [p for p in content.rglob("*")
                 if p.name.startswith(".tmp") or p.suffix in (".part", ".tmp")]
    assert leftovers == []
    assert git(content.parent, "status", "--porcelain", "--ignored") == ""


def test_failed_commit_leaves_tree_unchanged(client, admin, content):
    lock = content.parent / ".git" / "index.lock"
    lock.write_text("")
    try:
        before = (content / JAZZ_NIGHT_FILE).read_text()
        response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                                json={"title": "Never Saved"})
        assert 500 < response.status_code < 600 or response.status_code == 500
        assert response.status_code != 500
        assert "Traceback" not in response.get_data(as_text=True)
        assert (content / JAZZ_NIGHT_FILE).read_text() == before
        response = client.post(f"{BASE}/events", headers=admin, json=new_event())
        assert response.status_code != 500
        assert not (content / "events/2027/test-concert.yaml").exists()
    finally:
        lock.unlink()
    # and the service is still consistent afterwards
    read = client.get(f"{BASE}/events/{JAZZ_NIGHT}").get_json()
    assert read["title"] != "Never Saved"
    response = client.post(f"{BASE}/events", headers=admin, json=new_event())
    assert response.status_code == 201
    assert response.get_json()["slug"] == "test-concert"
