"""Operational hardening: deletes as the plugin does them and `empty-trash`, publication
dates, `/doc`'s server, user ids, authorship, media, file modes, git failures and
states, and request body limits over real HTTP.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BASE, REPO_ROOT, cli_here, commit_count, git, read_yaml

from calendar_app.http.app import create_app
from calendar_app.store.users import UserStore

BLUE_LANTERN = 45
JAZZ_COLLECTIVE = 61
JAZZ_NIGHT = 106
JAZZ_NIGHT_FILE = "events/2027/jazz-night-january-2027.yaml"
OLD = "2020-01-02T03:04:05+00:00"


def commits(content: Path) -> int:
    return commit_count(content.parent)


def event_body(**extra) -> dict:
    body = {"title": "Test Concert", "start_date": "2027-02-01 19:00:00",
            "end_date": "2027-02-01 21:00:00"}
    body.update(extra)
    return body


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "calendar_app", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=False)


def _empty_trash_args(content: Path, days: str) -> list[str]:
    return ["empty-trash", "--content", str(content), "--older-than", days,
            "--cache-dir", str(content.parent.parent / "cli-cache")]


def empty_trash(content: Path, days: str) -> subprocess.CompletedProcess:
    """The command in a process of its own, as it is run."""
    return run_cli(*_empty_trash_args(content, days))


# -- 1. deletes: force is ignored on events, venues and organizers ------------------------
@pytest.mark.parametrize(("collection", "record_id", "code"), [
    ("events", JAZZ_NIGHT, "event-is-in-trash"),
    ("venues", BLUE_LANTERN, "venue-is-in-trash"),
    ("organizers", JAZZ_COLLECTIVE, "organizer-is-in-trash")])
@pytest.mark.parametrize("force", ["?force=true", "?force=1", ""])
def test_force_is_ignored_delete_trashes(client, admin, content, collection, record_id, code,
                                         force):
    response = client.delete(f"{BASE}/{collection}/{record_id}{force}", headers=admin)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "trash" and body["slug"].endswith("__trashed")
    assert list((content / collection).rglob(f"{body['slug']}.yaml"))
    assert str(record_id) not in (content / ".retired-ids").read_text().split()
    second = client.delete(f"{BASE}/{collection}/{record_id}{force}", headers=admin)
    assert second.status_code == 410
    assert second.get_json()["code"] == code


def test_force_in_a_json_body_is_ignored_too(client, admin, content):
    response = client.delete(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                             json={"force": True})
    assert response.status_code == 200
    assert response.get_json()["status"] == "trash"


def _write(content: Path, relpath: str, text: str) -> None:
    path = content / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _commit_at(content: Path, when: str, message: str) -> None:
    git(content.parent, "add", "-A")
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=content.parent, check=True,
                   env={**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when})


@pytest.fixture
def trash_tree(content: Path) -> Path:
    """Two records trashed long ago (a venue an event still points at, and an event), and
    an organizer trashed just now."""
    venue = content / "venues/the-blue-lantern.yaml"
    venue.write_text(venue.read_text().replace("status: publish", "status: trash"))
    event = content / JAZZ_NIGHT_FILE
    event.write_text(event.read_text().replace("status: publish", "status: trash"))
    _commit_at(content, OLD, "trash two records by hand, long ago")
    organizer = content / "organizers/riverside-jazz-collective.yaml"
    organizer.write_text(organizer.read_text().replace("status: publish", "status: trash"))
    git(content.parent, "commit", "-q", "-am", "trash an organizer today")
    return content


def test_empty_trash_removes_old_trash_in_one_commit(trash_tree: Path, tmp_path: Path):
    content = trash_tree
    linking = [p for p in (content / "events").rglob("*.yaml")
               if "venue: the-blue-lantern\n" in p.read_text()]
    assert len(linking) > 1
    before = commits(content)
    done = empty_trash(content, "30")
    assert done.returncode == 0, done.stderr
    assert commits(content) == before + 1
    assert not (content / "venues/the-blue-lantern.yaml").exists()
    assert not (content / JAZZ_NIGHT_FILE).exists()
    assert (content / "organizers/riverside-jazz-collective.yaml").exists()  # too recent
    retired = (content / ".retired-ids").read_text().split()
    assert sorted(retired) == sorted([str(BLUE_LANTERN), str(JAZZ_NIGHT)])
    for path in linking:
        if path.exists():
            assert read_yaml(path).get("venue") is None
    changed = git(content.parent, "show", "--name-only", "--format=%s", "HEAD").split("\n")
    assert changed[0].startswith("trash: remove 2 records for good")
    assert "content/.retired-ids" in changed
    assert git(content.parent, "status", "--porcelain") == ""
    assert "2 records" in done.stdout


def test_empty_trash_with_nothing_to_do_commits_nothing(trash_tree: Path, tmp_path: Path):
    before = commits(trash_tree)
    done = cli_here(*_empty_trash_args(trash_tree, "100000"))
    assert done.returncode == 0, done.stderr
    assert commits(trash_tree) == before
    assert "nothing" in done.stdout.lower()


def test_empty_trash_keeps_files_with_uncommitted_changes(trash_tree: Path, tmp_path: Path):
    venue = trash_tree / "venues/the-blue-lantern.yaml"
    venue.write_text(venue.read_text() + "# still being looked at\n")
    done = cli_here(*_empty_trash_args(trash_tree, "30"))
    assert done.returncode == 0, done.stderr
    assert venue.exists()
    assert not (trash_tree / JAZZ_NIGHT_FILE).exists()


def test_removed_ids_are_never_handed_out_again(content: Path, config: dict, admin):
    """The highest id in the tree, once removed for good, is not given to a new record."""
    top, owner = max((int(m.group(1)), p) for p in content.rglob("*.yaml")
                     if (m := re.search(r"^id: (\d+)$", p.read_text(), re.MULTILINE)))
    owner.write_text(re.sub(r"^status: \w+$", "status: trash", owner.read_text(),
                            flags=re.MULTILINE))
    _commit_at(content, OLD, "trash the newest record")
    done = cli_here(*_empty_trash_args(content, "1"))
    assert done.returncode == 0, done.stderr
    assert not owner.exists()
    client = create_app(config).test_client()
    made = client.post(f"{BASE}/events", headers=admin, json=event_body()).get_json()
    assert made["id"] == top + 1


# -- 2. date_utc alone sets the publication date -------------------------------------------
def test_create_with_date_utc_only(client, admin):
    response = client.post(f"{BASE}/events", headers=admin,
                           json=event_body(date_utc="2025-05-02 14:15:00"))
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["date_utc"] == "2025-05-02 14:15:00"
    assert body["date"] == "2025-05-02 07:15:00"  # the calendar is in Los Angeles (PDT)


def test_update_with_date_utc_only(client, admin):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            data={"date_utc": "2026-01-05 20:00:00"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["date_utc"] == "2026-01-05 20:00:00"
    assert response.get_json()["date"] == "2026-01-05 12:00:00"


def test_bad_date_utc_is_refused_by_its_own_name(client, admin):
    response = client.post(f"{BASE}/events", headers=admin,
                           json=event_body(date_utc="not a date"))
    assert response.status_code == 400
    assert response.get_json()["message"] == "Invalid parameter(s): date_utc"


# -- 3. /doc's server keeps the port -------------------------------------------------------
@pytest.mark.parametrize(("base_url", "expected"), [
    ("http://127.0.0.1:8089/", "http://127.0.0.1:8089/wp-json/tribe/events/v1/"),
    ("http://localhost/", "http://localhost/wp-json/tribe/events/v1/"),
    ("https://[::1]:8443/", "https://[::1]:8443/wp-json/tribe/events/v1/")])
def test_doc_server_keeps_the_port(reading_client, base_url, expected):
    body = reading_client.get(f"{BASE}/doc", base_url=base_url).get_json()
    assert body["servers"] == [{"url": expected}]


def test_doc_server_follows_the_site_url(config):
    config["SITE_URL"] = "https://example.org:8443/calendar/"
    body = create_app(config).test_client().get(f"{BASE}/doc").get_json()
    assert body["servers"] == [{"url": "https://example.org:8443/calendar/wp-json/tribe/events/v1/"}]


# -- 4. user ids are never reused -----------------------------------------------------------
def test_removed_user_ids_are_never_reused(tmp_path: Path):
    store = UserStore(tmp_path / "users.yaml")
    store.add("ada")
    store.add("bob", "author")
    bob = next(u for u in store.users() if u.name == "bob")
    assert store.remove("bob")
    store.add("cyd", "author")
    cyd = next(u for u in store.users() if u.name == "cyd")
    assert cyd.id == bob.id + 1  # never bob's: his records would become cyd's
    assert store.remove("cyd") and store.remove("ada")
    store.add("dee")
    assert [u.id for u in UserStore(tmp_path / "users.yaml").users()] == [cyd.id + 1]


def test_user_id_mark_survives_an_old_users_file(tmp_path: Path):
    path = tmp_path / "users.yaml"
    path.write_text("users:\n- id: 7\n  name: old\n  role: editor\n")
    store = UserStore(path)
    store.add("new")
    assert {u.name: u.id for u in store.users()} == {"old": 7, "new": 8}
    store.remove("new")
    store.add("newer")
    assert {u.name: u.id for u in store.users()} == {"old": 7, "newer": 9}


# -- 5. an author cannot give a record to someone else ---------------------------------------
def _user_id(users_file: Path, name: str) -> int:
    return next(u.id for u in UserStore(users_file).users() if u.name == name)


CANNOT = {"code": "rest_cannot_edit_others", "data": {"status": 403}}


@pytest.mark.parametrize("collection", ["events", "venues", "organizers"])
def test_author_cannot_create_as_someone_else(client, auth, config, content, collection):
    editor = _user_id(Path(config["USERS_FILE"]), "editor")
    title = {"events": "title", "venues": "venue", "organizers": "organizer"}[collection]
    body = {**event_body(), title: "Not Mine", "author": editor}
    before = commits(content)
    response = client.post(f"{BASE}/{collection}", headers=auth("author"), json=body)
    assert response.status_code == 403
    error = response.get_json()
    assert {k: error[k] for k in CANNOT} == CANNOT
    assert error["message"] == f"Sorry, you are not allowed to create {collection} as this user."
    assert commits(content) == before


def test_author_cannot_give_an_own_record_away(client, auth, config, content):
    author = _user_id(Path(config["USERS_FILE"]), "author")
    editor = _user_id(Path(config["USERS_FILE"]), "editor")
    made = client.post(f"{BASE}/events", headers=auth("author"), json=event_body()).get_json()
    assert made["author"] == str(author)
    before = commits(content)
    response = client.patch(f"{BASE}/events/{made['id']}", headers=auth("author"),
                            json={"author": editor})
    assert response.status_code == 403
    assert response.get_json()["code"] == "rest_cannot_edit_others"
    assert response.get_json()["message"] == (
        "Sorry, you are not allowed to update events as this user.")
    assert commits(content) == before
    same = client.patch(f"{BASE}/events/{made['id']}", headers=auth("author"),
                        json={"author": author, "title": "Still Mine"})
    assert same.status_code == 200


def test_inline_venue_cannot_be_given_away(client, auth, config):
    editor = _user_id(Path(config["USERS_FILE"]), "editor")
    response = client.post(f"{BASE}/events", headers=auth("author"), json=event_body(
        venue={"venue": "Someone Else's Hall", "author": editor}))
    assert response.status_code == 403
    assert response.get_json()["code"] == "rest_cannot_edit_others"


def test_editor_may_create_and_update_for_someone_else(client, auth, config):
    author = _user_id(Path(config["USERS_FILE"]), "author")
    made = client.post(f"{BASE}/events", headers=auth("editor"),
                       json=event_body(author=author))
    assert made.status_code == 201 and made.get_json()["author"] == str(author)
    moved = client.patch(f"{BASE}/events/{made.get_json()['id']}", headers=auth("editor"),
                         json={"author": _user_id(Path(config["USERS_FILE"]), "editor")})
    assert moved.status_code == 200


# -- 6. media: regular files inside media/ only; check reports symlinks ---------------------
@pytest.fixture
def linked_media(content: Path) -> Path:
    media = content / "media"
    (media / "logo.png").symlink_to("/etc/hostname")
    (media / "etc").symlink_to("/etc")
    (media / "inside.png").symlink_to(media / "jazz-night.png")  # a link, even inside
    (media / "folder").mkdir()
    return content


@pytest.mark.parametrize("path", ["logo.png", "etc/hostname", "inside.png", "folder",
                                  "folder/", "../calendar.yaml", "%2e%2e/calendar.yaml"])
def test_media_serves_no_symlink_nor_folder(client, linked_media, path):
    response = client.get(f"/media/{path}")
    assert response.status_code == 404
    assert response.get_json()["data"] == {"status": 404}


def test_media_serves_regular_files(client, linked_media):
    response = client.get("/media/jazz-night.png")
    assert response.status_code == 200
    assert response.data == (linked_media / "media/jazz-night.png").read_bytes()


def test_image_pointing_at_a_symlink_is_refused_and_not_measured(client, admin, linked_media):
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"image": "media/logo.png"})
    assert response.status_code == 400


def test_check_reports_symlinks(linked_media: Path, capsys):
    from calendar_app.cli import main

    (linked_media / "events/2027/stolen.yaml").symlink_to("/etc/hostname")
    code = main(["check", str(linked_media), "--format", "json"])
    out = capsys.readouterr().out
    assert code != 0
    found = {(os.path.relpath(f["path"], linked_media), f["code"])
             for f in json.loads(out)["findings"]}
    for path in ("media/logo.png", "media/etc", "media/inside.png", "events/2027/stolen.yaml"):
        assert (path, "symlink") in found, found


# -- 7. file modes ------------------------------------------------------------------------------
@pytest.fixture
def umask():
    def set_mask(mask: int) -> None:
        os.umask(mask)

    old = os.umask(0o022)
    yield set_mask
    os.umask(old)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640)])
def test_new_files_honour_the_umask(client, admin, content, umask, mask, expected):
    umask(mask)
    made = client.post(f"{BASE}/events", headers=admin, json=event_body())
    assert made.status_code == 201
    assert _mode(content / "events/2027/test-concert.yaml") == expected


def test_updates_keep_the_mode_of_the_file(client, admin, content, umask):
    path = content / JAZZ_NIGHT_FILE
    path.chmod(0o640)
    response = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                            json={"title": "Mode Kept"})
    assert response.status_code == 200
    assert "Mode Kept" in path.read_text()
    assert _mode(path) == 0o640
    path.chmod(0o664)
    client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin, json={"title": "Again"})
    assert _mode(path) == 0o664


# -- 8. git failures: 503 saying what to do, git's stderr in the log -------------------------
def _try_write(client, admin, content: Path):
    """A create and an update; returns both responses after checking nothing changed."""
    before_commits, before_text = commits(content), (content / JAZZ_NIGHT_FILE).read_text()
    created = client.post(f"{BASE}/events", headers=admin, json=event_body())
    updated = client.patch(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin,
                           json={"title": "Never Saved"})
    assert commits(content) == before_commits
    assert (content / JAZZ_NIGHT_FILE).read_text() == before_text
    assert not (content / "events/2027/test-concert.yaml").exists()
    assert git(content.parent, "diff", "--cached", "--name-only", "--", "content") == ""
    return created, updated


def _storage_error(response, *phrases: str) -> None:
    assert response.status_code == 503
    body = response.get_json()
    assert body["code"] == "calendar-storage-unavailable"
    assert body["data"] == {"status": 503}
    for phrase in phrases:
        assert phrase in body["message"], body["message"]


def _logged(caplog, *phrases: str) -> None:
    records = [r for r in caplog.records if r.exc_info and r.levelname == "ERROR"]
    assert records, "nothing logged"
    text = caplog.text
    for phrase in phrases:
        assert phrase in text, text
    assert "Traceback" in text


def test_stale_index_lock(client, admin, content, caplog):
    (content.parent / ".git/index.lock").write_text("")
    for response in _try_write(client, admin, content):
        _storage_error(response, "remove the stale .git/index.lock")
    _logged(caplog, "index.lock': File exists")
    (content.parent / ".git/index.lock").unlink()
    assert client.post(f"{BASE}/events", headers=admin, json=event_body()).status_code == 201


def test_commit_signing_without_a_key(client, admin, content, caplog):
    git(content.parent, "config", "commit.gpgsign", "true")
    git(content.parent, "config", "user.signingkey", "no-such-key@example.invalid")
    git(content.parent, "config", "gpg.program", str(content.parent / "no-gpg-here"))
    for response in _try_write(client, admin, content):
        _storage_error(response, "commit.gpgsign")
    _logged(caplog, "gpg failed to sign the data")


def _hook(content: Path, name: str, output: str) -> None:
    hook = content.parent / ".git/hooks" / name
    hook.write_text(f"#!/bin/sh\necho '{output}' >&2\necho 'second line' >&2\nexit 1\n")
    hook.chmod(0o755)


def test_a_hook_that_refuses_the_commit(client, admin, content, caplog):
    _hook(content, "prepare-commit-msg", "Refused: commits need a ticket number")
    for response in _try_write(client, admin, content):
        _storage_error(response,
                       "a git hook refused the commit: Refused: commits need a ticket number")
        assert "second line" not in response.get_json()["message"]
    _logged(caplog, "Refused: commits need a ticket number", "second line")


def test_pre_commit_hooks_are_for_people_not_the_interface(client, admin, content):
    """Interface writes are validated already; the editorial pre-commit hook (`check`
    over the tree) is skipped for them, as it always was (--no-verify)."""
    _hook(content, "pre-commit", "Refused by pre-commit")
    assert client.post(f"{BASE}/events", headers=admin, json=event_body()).status_code == 201


# -- 9. git states that block writes: 409 naming the state -----------------------------------
def _conflicting_branch(repo: Path) -> None:
    """`side` and `main` change the same line of a file outside the content tree."""
    (repo / "NOTES").write_text("base\n")
    git(repo, "add", "NOTES")
    git(repo, "commit", "-qm", "notes")
    git(repo, "checkout", "-qb", "side")
    (repo / "NOTES").write_text("side\n")
    git(repo, "commit", "-qam", "side notes")
    git(repo, "checkout", "-q", "main")
    (repo / "NOTES").write_text("main\n")
    git(repo, "commit", "-qam", "main notes")


def _rebase(repo: Path) -> None:
    subprocess.run(["git", "rebase", "side"], cwd=repo, capture_output=True, check=False)
    assert (repo / ".git/rebase-merge").exists() or (repo / ".git/rebase-apply").exists()


def _cherry_pick(repo: Path) -> None:
    subprocess.run(["git", "cherry-pick", "side"], cwd=repo, capture_output=True, check=False)
    assert (repo / ".git/CHERRY_PICK_HEAD").exists()


def _revert(repo: Path) -> None:
    (repo / "NOTES").write_text("later\n")
    git(repo, "commit", "-qam", "later notes")
    subprocess.run(["git", "revert", "--no-edit", "HEAD~1"], cwd=repo, capture_output=True,
                   check=False)
    assert (repo / ".git/REVERT_HEAD").exists()


def _merge(repo: Path) -> None:
    subprocess.run(["git", "merge", "side"], cwd=repo, capture_output=True, check=False)
    assert (repo / ".git/MERGE_HEAD").exists()


def _bisect(repo: Path) -> None:
    git(repo, "bisect", "start")
    git(repo, "bisect", "bad")


def _detached(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")


@pytest.mark.parametrize(("setup", "phrase"), [
    (_rebase, "a rebase is in progress"), (_cherry_pick, "a cherry-pick is in progress"),
    (_revert, "a revert is in progress"), (_merge, "a merge is in progress"),
    (_bisect, "a bisect is in progress"), (_detached, "HEAD is detached")])
def test_git_states_that_block_writes(client, admin, content, setup, phrase):
    repo = content.parent
    _conflicting_branch(repo)
    setup(repo)
    for response in _try_write(client, admin, content):
        assert response.status_code == 409, response.get_json()
        body = response.get_json()
        assert body["code"] == "rest_conflict" and body["data"] == {"status": 409}
        assert phrase in body["message"], body["message"]
    deleted = client.delete(f"{BASE}/events/{JAZZ_NIGHT}", headers=admin)
    assert deleted.status_code == 409
    assert (content / JAZZ_NIGHT_FILE).exists()


# -- 10. chunked request bodies over real HTTP, both servers ----------------------------------
LIMIT = 1 << 20


def _serve(server: str, content: Path, users_file: Path, cache: Path, port: int,
           log: Path) -> subprocess.Popen:
    from test_reliability_concurrency import start_gunicorn

    if server == "gunicorn":
        return start_gunicorn(content, users_file, cache, port, workers=1, log=log)
    out = open(log, "ab")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        [sys.executable, "-m", "calendar_app", "serve", "--content", str(content),
         "--users", str(users_file), "--port", str(port)],
        cwd=REPO_ROOT, stdout=out, stderr=out, start_new_session=True)


@pytest.fixture(params=["werkzeug", "gunicorn"])
def http_server(request, tmp_path: Path, content: Path, users: dict):
    from test_reliability_concurrency import free_port, stop, wait_for_port

    port = free_port()
    log = tmp_path / "server.log"
    proc = _serve(request.param, content, tmp_path / "users.yaml", tmp_path / "cache", port,
                  log)
    try:
        wait_for_port(port, proc, log=log)
        yield port
    finally:
        stop(proc)


def _chunked(port: int, headers: dict, body: bytes, piece: int = 64 * 1024):
    """POST /events with `Transfer-Encoding: chunked`; returns (status, JSON body)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        chunks = (body[i:i + piece] for i in range(0, len(body), piece))
        conn.request("POST", f"{BASE}/events", body=chunks, encode_chunked=True,
                     headers={**headers, "Transfer-Encoding": "chunked"})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def _form(**fields: str) -> bytes:
    from urllib.parse import urlencode

    return urlencode(fields).encode()


def test_chunked_bodies_over_the_limit_are_413(http_server: int, auth, content: Path):
    before = commits(content)
    admin = auth("administrator")
    form = {**admin, "Content-Type": "application/x-www-form-urlencoded"}
    big_form = _form(**event_body(title="Chunked Form", description="f" * (LIMIT * 3 // 2)))
    status, body = _chunked(http_server, form, big_form)
    assert status == 413, body
    assert body["code"] == "rest_request_too_large" and body["data"] == {"status": 413}
    as_json = {**admin, "Content-Type": "application/json"}
    big_json = json.dumps(event_body(title="Chunked JSON", description="j" * 3 * LIMIT))
    status, body = _chunked(http_server, as_json, big_json.encode())
    assert status == 413, body
    assert body == {"code": "rest_request_too_large", "message": body["message"],
                    "data": {"status": 413}}
    assert commits(content) == before
    assert not list((content / "events").rglob("chunked-*.yaml"))
    # Under the limit, a chunked body is read in full.
    fits = json.dumps(event_body(title="Chunked Fits", description="k" * (LIMIT - 1000)))
    status, body = _chunked(http_server, as_json, fits.encode())
    assert status == 201, body
    assert body["description"].count("k") == LIMIT - 1000
