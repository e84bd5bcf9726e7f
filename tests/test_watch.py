"""Edits on disk (editor saves, renames, invalid YAML, git checkout) reach the lists
through the watchdog observer, as one batch, within a second."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from calendar_app.http.app import create_app

FIXTURE = Path(__file__).parent / "fixtures" / "lists"
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE = "/wp-json/tribe/events/v1"
ALL = "/events?start_date=2000-01-01&end_date=2100-01-01&per_page=50"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def watched(tmp_path: Path, users: dict[str, str]):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo / "content")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    app = create_app({"CONTENT_DIR": str(repo / "content"),
                      "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "WATCH": True, "INDEX_IN_BACKGROUND": True})
    client = app.test_client()
    client.get(BASE + "/events")  # the first request starts the watcher and the indexer
    yield repo, repo / "content", client
    app.extensions["calendar"].close()


def eventually(check, timeout: float = 1.0):
    """The issue's promise: visible within one second of the write finishing."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def titles(client, path: str = ALL) -> list[str]:
    return [e["title"] for e in client.get(BASE + path).get_json()["events"]]


def test_create_change_delete_rename(watched) -> None:
    _repo, content, client = watched
    new = content / "events" / "new-gig.yaml"
    new.write_text("id: 150\ntitle: New Gig\nstart_date: 2027-08-01 20:00\n"
                   "end_date: 2027-08-01 22:00\ncategories: [workshops]\n")
    assert eventually(lambda: "New Gig" in titles(client))
    assert eventually(lambda: [e["id"] for e in client.get(
        BASE + "/events?search=gig").get_json()["events"]] == [150])
    new.write_text(new.read_text().replace("New Gig", "Changed Gig"))
    assert eventually(lambda: "Changed Gig" in titles(client) and "New Gig" not in titles(
        client))
    new.rename(content / "events" / "renamed-gig.yaml")
    assert eventually(lambda: client.get(BASE + "/events/150").get_json().get("slug")
                      == "renamed-gig")
    assert titles(client).count("Changed Gig") == 1
    (content / "events" / "renamed-gig.yaml").unlink()
    assert eventually(lambda: "Changed Gig" not in titles(client))
    assert client.get(BASE + "/events/150").status_code == 404


def test_term_counts_follow(watched) -> None:
    _repo, content, client = watched

    def count(slug: str) -> int:
        terms = client.get(BASE + "/categories?hide_empty=0").get_json()["categories"]
        return next(t["count"] for t in terms if t["slug"] == slug)

    assert count("workshops") == 2
    (content / "events" / "pottery-class.yaml").unlink()
    assert eventually(lambda: count("workshops") == 1)
    path = content / "events" / "early-birds.yaml"
    path.write_text(path.read_text().replace("[workshops]", "[empty-cat]"))
    assert eventually(lambda: count("workshops") == 0 and count("empty-cat") == 1)


def test_invalid_yaml_is_left_out_and_comes_back(watched, caplog) -> None:
    _repo, content, client = watched
    path = content / "events" / "jazz-brunch.yaml"
    good = path.read_text()
    path.write_text(good + "venue: [unclosed\n")
    assert eventually(lambda: "Jazz Brunch" not in titles(client))
    cal = client.application.extensions["calendar"]
    problem = cal.catalog.problems["events/jazz-brunch.yaml"]
    assert problem.line > 0 and "events/jazz-brunch.yaml" in caplog.text
    assert "Jazz Night" in titles(client)  # the rest keeps being served
    path.write_text(good)
    assert eventually(lambda: "Jazz Brunch" in titles(client))
    assert "events/jazz-brunch.yaml" not in cal.catalog.problems


def test_git_checkout_of_another_branch(watched) -> None:
    repo, content, client = watched
    git(repo, "checkout", "-q", "-b", "other")
    for i in range(300):
        (content / "events" / f"bulk-{i}.yaml").write_text(
            f"id: {1000 + i}\ntitle: Bulk {i}\nstart_date: 2027-09-01 10:00\n"
            "end_date: 2027-09-01 11:00\n")
    (content / "events" / "jazz-night.yaml").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bulk")
    assert eventually(lambda: client.get(BASE + ALL).get_json()["total"] == 307, 3.0)
    cal = client.application.extensions["calendar"]
    batches = cal.watcher.batches
    git(repo, "checkout", "-q", "main")
    assert eventually(lambda: client.get(BASE + ALL).get_json()["total"] == 8)
    assert "Jazz Night" in titles(client)
    assert cal.watcher.batches - batches <= 3  # hundreds of file events, few batches
    cal.index.flush()
    assert [e["id"] for e in client.get(BASE + "/events?search=bulk").get_json()[
        "events"]] == []


def test_reads_in_the_tree_reach_the_watcher_not_at_all(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only changes are asked of the OS: the catalog, the builder and git reading files
    cost the watchdog threads nothing (each read was two events in every worker). A
    write after the reads is seen, and its events come after theirs would have."""
    from calendar_app.catalog import watcher as watching

    (tmp_path / "events").mkdir()
    record = tmp_path / "events" / "gig.yaml"
    record.write_text("id: 150\n")
    seen: list[str] = []
    handle = watching._Handler.on_any_event
    monkeypatch.setattr(watching._Handler, "on_any_event",
                        lambda self, event: seen.append(event.event_type) or handle(self, event))
    batches: list[set[str]] = []
    follower = watching.Watcher(tmp_path, lambda paths, _rescan: batches.append(paths),
                                ["events"], quiet=0.02)
    follower.start()  # its watches are in place when it returns
    try:
        for _ in range(20):
            record.read_bytes()
        record.write_text("id: 150\ntitle: Gig\n")
        assert eventually(lambda: any("events/gig.yaml" in b for b in batches), timeout=5)
        assert seen and not {"opened", "closed_no_write"} & set(seen), seen
    finally:
        follower.stop()
