"""A hand-written record without `date` is dated by its file's first commit (or, not yet
committed, its modification time), not 1970-01-01."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from conftest import BASE, NOW, git, make_repo

from calendar_app.http.app import create_app
from calendar_app.store import firstseen

COMMITTED = "2025-03-04T05:06:07Z"
EVENT = "id: {id}\ntitle: {title}\nstart_date: 2027-05-01 10:00\nend_date: 2027-05-01 11:00\n"


def commit_at(repo: Path, when: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", when)
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """An empty calendar in a git repository, in UTC."""
    return make_repo(tmp_path, source=None)


def write_event(content: Path, slug: str, record_id: int) -> Path:
    path = content / "events" / f"{slug}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EVENT.format(id=record_id, title=slug), encoding="utf-8")
    return path


def served_dates(tmp_path: Path, content: Path, record_id: int) -> tuple[str, str]:
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "u.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True})
    body = app.test_client().get(f"{BASE}/events/{record_id}").get_json()
    return body["date"], body["modified"]


def test_a_committed_file_shows_its_first_commit(tmp_path, content, monkeypatch):
    write_event(content, "hand-written", 1)
    commit_at(content.parent, COMMITTED, "add a hand-written event", monkeypatch)
    # A later commit touching the file does not move its date.
    (content / "events/hand-written.yaml").write_text(
        EVENT.format(id=1, title="Hand-written, edited"), encoding="utf-8")
    commit_at(content.parent, "2025-06-01T00:00:00Z", "edit it", monkeypatch)
    assert served_dates(tmp_path, content, 1) == ("2025-03-04 05:06:07",) * 2


def test_an_uncommitted_file_shows_its_mtime(tmp_path, content):
    path = write_event(content, "not-committed-yet", 2)
    when = dt.datetime(2024, 7, 8, 9, 10, 11, tzinfo=dt.UTC).timestamp()
    os.utime(path, (when, when))
    assert served_dates(tmp_path, content, 2)[0] == "2024-07-08 09:10:11"


def test_the_date_is_in_the_calendars_timezone(tmp_path, content, monkeypatch):
    (content / "calendar.yaml").write_text("title: Test\ntimezone: America/Los_Angeles\n")
    write_event(content, "pacific", 3)
    commit_at(content.parent, COMMITTED, "add", monkeypatch)
    assert served_dates(tmp_path, content, 3)[0] == "2025-03-03 21:06:07"


def test_a_renamed_file_keeps_its_first_commit(tmp_path, content, monkeypatch):
    write_event(content, "old-name", 4)
    commit_at(content.parent, COMMITTED, "add", monkeypatch)
    git(content.parent, "mv", "content/events/old-name.yaml", "content/events/new-name.yaml")
    commit_at(content.parent, "2025-09-09T00:00:00Z", "rename", monkeypatch)
    seen = firstseen.load(content.resolve(), tmp_path / "cache")
    assert seen.local("events/new-name.yaml", dt.UTC) == dt.datetime(2025, 3, 4, 5, 6, 7)


def test_one_scan_per_head_then_only_new_commits(tmp_path, content, monkeypatch):
    write_event(content, "first", 5)
    commit_at(content.parent, COMMITTED, "add", monkeypatch)
    root, cache = content.resolve(), tmp_path / "cache"
    firstseen.load(root, cache)
    scanned: list[str] = []
    real_scan = firstseen._scan
    monkeypatch.setattr(firstseen, "_scan", lambda r, revs, times: (
        scanned.append(revs), real_scan(r, revs, times)))
    firstseen.load(root, cache)
    assert scanned == []  # same HEAD: read from the cache folder
    write_event(content, "second", 6)
    commit_at(content.parent, "2025-04-01T00:00:00Z", "add another", monkeypatch)
    seen = firstseen.load(root, cache)
    assert len(scanned) == 1 and ".." in scanned[0]  # only what is new since
    assert seen.local("events/first.yaml", dt.UTC) == dt.datetime(2025, 3, 4, 5, 6, 7)
    assert seen.local("events/second.yaml", dt.UTC) == dt.datetime(2025, 4, 1)


def test_no_repository_means_mtimes(tmp_path):
    content = tmp_path / "plain"
    path = write_event(content, "loose", 7)
    os.utime(path, (86400 * 365, 86400 * 365))
    seen = firstseen.load(content, tmp_path / "cache")
    assert seen.local("events/loose.yaml", dt.UTC) == dt.datetime(1971, 1, 1)
