"""A hand-added file with an id already in use (issue 13, item 4): the record already
served keeps its id; at start, the file whose id was committed first keeps it, whatever
the names sort as; the other is reported with file and line. Real git repositories."""

from __future__ import annotations

from pathlib import Path

from conftest import BASE, NOW, git, make_repo

from calendar_app.http.app import create_app

ORIGINAL = "events/2026/december-makers-market-2026.yaml"  # id 102
NEWCOMER = "events/2026/aaa-copycat.yaml"  # sorts first


def add_newcomer(content: Path, commit: bool) -> None:
    text = (content / ORIGINAL).read_text()
    text = text.replace("slug: december-makers-market-2026", "slug: aaa-copycat")
    text = text.replace("title: December Makers Market", "title: Copycat Market")
    (content / NEWCOMER).write_text(text)
    if commit:
        git(content.parent, "add", "-A")
        git(content.parent, "commit", "-q", "-m", "a copy with the same id")


def open_app(tmp_path: Path, content: Path):
    return create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                       "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True})


def title_of_102(app) -> str:
    return app.test_client().get(f"{BASE}/events/102").get_json()["title"]


def test_at_start_the_id_committed_first_wins_and_stays(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    add_newcomer(content, commit=True)
    for _restart in range(2):  # with and without the start-up cache
        app = open_app(tmp_path, content)
        catalog = app.extensions["calendar"].catalog
        assert title_of_102(app) == "December Makers Market"
        problem = catalog.problems[NEWCOMER]
        assert problem.line == 1 and f"id 102 is already used by {ORIGINAL}" in (
            problem.message)
        assert ORIGINAL not in catalog.problems
        app.extensions["calendar"].close()


def test_a_newcomer_never_takes_the_id_of_a_record_being_served(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    app = open_app(tmp_path, content)
    catalog = app.extensions["calendar"].catalog
    add_newcomer(content, commit=False)
    catalog.refresh([NEWCOMER])
    assert title_of_102(app) == "December Makers Market"
    # Both files changed at once (a checkout): the one served keeps the id.
    catalog.refresh([NEWCOMER, ORIGINAL])
    assert title_of_102(app) == "December Makers Market"
    assert NEWCOMER in catalog.problems and ORIGINAL not in catalog.problems
    # Uncommitted, the newcomer loses at the next start too.
    app.extensions["calendar"].close()
    again = open_app(tmp_path, content)
    assert title_of_102(again) == "December Makers Market"
    again.extensions["calendar"].close()
