"""The server as a clone of a shared repository (calendar_app/sync.py): writes pushed,
what others push integrated on signed webhooks and by polling, races and conflicts
merged key by key, nothing lost across a crash. Real bare repositories, a real
`git daemon` on the loopback address, the real app (over HTTP where it matters)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import BASE, NOW, REPO_ROOT, SAMPLE, git
from gitserver import GitDaemon, bare_copy
from test_reliability_concurrency import (
    Http,
    ThreadedServer,
    basic,
    free_port,
    start_gunicorn,
    wait_for_port,
)

from calendar_app.cli import main as cli_main
from calendar_app.http.app import create_app
from calendar_app.store import yamlfile
from calendar_app.store.conflicts import CONFLICTS_DIR
from calendar_app.sync.clone import prepare_clone
from calendar_app.sync.fieldmerge import merge_texts
from calendar_app.sync.settings import SyncError, SyncSettings
from calendar_app.sync.webhook import verify_webhook

SECRET = "webhook-secret-for-tests"
WEBHOOK = "/wp-json/calendar/v1/sync"
EVENT_FILE = "events/2026/family-film-matinee-december-2026.yaml"  # id 105
EVENT_ID = 105
PUSH_BODY = json.dumps({"ref": "refs/heads/main", "after": "0" * 40}).encode()


# -- repositories ------------------------------------------------------------------
@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def make_remote(tmp_path: Path) -> Path:
    """A bare repository holding the sample calendar at its root, on branch main."""
    seed = tmp_path / "seed"
    shutil.copytree(SAMPLE, seed)
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial calendar")
    bare = bare_copy(seed, tmp_path, "remote.git")
    shutil.rmtree(seed)
    return bare


def editor_push(remote_url: str, workdir: Path, edit: dict[str, str | None],
                message: str = "an editor's change") -> str:
    """Another clone (a merged pull request): change files, commit, push; its sha."""
    if not workdir.exists():
        subprocess.run(["git", "clone", "-q", remote_url, str(workdir)], check=True)
    else:
        git(workdir, "pull", "-q", "--ff-only")
    for relpath, text in edit.items():
        if text is None:
            git(workdir, "rm", "-q", relpath)
        else:
            (workdir / relpath).write_text(text)
            git(workdir, "add", relpath)
    git(workdir, "commit", "-q", "-m", message)
    git(workdir, "push", "-q", "origin", "main")
    return git(workdir, "rev-parse", "HEAD").strip()


def remote_file(remote: Path, relpath: str) -> dict:
    return yamlfile.load(git(remote, "show", f"main:{relpath}").encode())


def replace_key(text: str, key: str, line: str) -> str:
    lines = [line if ln.startswith(f"{key}:") else ln for ln in text.splitlines()]
    return "\n".join(lines) + "\n"


def make_app(tmp_path: Path, url: str, name: str = "server", **extra: object):
    config = {"CONTENT_DIR": str(tmp_path / name), "USERS_FILE": str(tmp_path / "users.yaml"),
              "CACHE_DIR": str(tmp_path / f"{name}-cache"), "NOW": NOW, "TESTING": True,
              "SYNC_REMOTE": url, "SYNC_WEBHOOK_SECRET": SECRET}
    config.update(extra)
    return create_app(config)


def started(app):
    """A test client once the app's sync thread made its first exchange (on the first
    request): what is pushed afterwards is a race with the server's next write."""
    client = app.test_client()
    client.get(f"{BASE}/")
    assert app.extensions["calendar"].remote_sync.caught_up.wait(30)
    return client


def signed(provider: str, body: bytes, secret: str = SECRET) -> dict:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"github": {"X-Hub-Signature-256": f"sha256={digest}", "X-GitHub-Event": "push"},
            "gitea": {"X-Gitea-Signature": digest, "X-Gitea-Event": "push"},
            "gitlab": {"X-Gitlab-Token": secret, "X-Gitlab-Event": "Push Hook"}}[provider]


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(list(args))
    return code, out.getvalue()


# -- pieces ------------------------------------------------------------------------
def test_webhook_signatures() -> None:
    body = b'{"ref":"refs/heads/main"}'
    for provider in ("github", "gitea", "gitlab"):
        assert verify_webhook(signed(provider, body).get, body, SECRET) == provider
        assert verify_webhook(signed(provider, body, "other").get, body, SECRET) == ""
        assert verify_webhook(signed(provider, body).get, body + b" ", SECRET) in (
            "", "gitlab")  # GitLab's token does not sign the body
    assert verify_webhook({}.get, body, SECRET) == ""
    assert verify_webhook(signed("github", body, "").get, body, "") == ""  # no secret set


def test_field_merge_keeps_both_sides_and_records_lost_values() -> None:
    base = "id: 1\ntitle: Old\ncost: '5'\nslug: a\n"
    remote = "id: 1\ntitle: Remote\ncost: '5'\nslug: a\n"
    ours = "id: 1\ntitle: Ours\ncost: '7'\nslug: a\nwebsite: https://example.org/\n"
    merged = merge_texts(base, remote, ours, "events/a.yaml")
    assert yamlfile.load(merged.text.encode()) == {
        "id": 1, "title": "Remote", "cost": "7", "slug": "a",
        "website": "https://example.org/"}
    assert merged.lost == {"title": ("Ours", "Remote")}
    # `modified` changed on both sides: the later time, no conflict.
    merged = merge_texts("modified: 2026-01-01 10:00:00\ntitle: A\n",
                         "modified: 2026-01-02 10:00:00\ntitle: B\n",
                         "modified: 2026-01-03 09:00:00\ntitle: A\n", "events/m.yaml")
    assert merged.lost == {} and yamlfile.load(merged.text.encode()) == {
        "modified": yamlfile.load(b"m: 2026-01-03 09:00:00")["m"], "title": "B"}
    # A key removed on our side only is removed; removed by both, gone.
    merged = merge_texts("a: 1\nb: 2\n", "a: 1\nb: 3\n", "b: 2\n", "events/x.yaml")
    assert merged.text == "b: 3\n" and merged.lost == {}


def test_prepare_clone_finds_the_remote_or_says_why(tmp_path: Path, remote: Path) -> None:
    clone = tmp_path / "clone"
    assert prepare_clone(clone, SyncSettings(str(remote))) == "origin"  # cloned
    git(clone, "remote", "rename", "origin", "shared")
    assert prepare_clone(clone, SyncSettings("shared")) == "shared"  # by name
    assert prepare_clone(clone, SyncSettings(str(remote))) == "shared"  # by URL
    with pytest.raises(SyncError, match="no remote named or at elsewhere"):
        prepare_clone(clone, SyncSettings("elsewhere"))
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "calendar.yaml").write_text("title: x\n")
    with pytest.raises(SyncError, match="not a git clone"):
        prepare_clone(tmp_path / "plain", SyncSettings(str(remote)))
    with pytest.raises(SyncError, match="push mode"):
        SyncSettings(str(remote), push="later")
    assert cli_main(["serve", "--remote", str(remote)]) == 2  # no folder to clone into


# -- one instance ------------------------------------------------------------------
def test_clone_on_first_start_and_write_is_pushed(tmp_path: Path, remote: Path,
                                                  admin: dict) -> None:
    app = make_app(tmp_path, str(remote))
    server = tmp_path / "server"
    assert (server / ".git").is_dir() and (server / "calendar.yaml").is_file()
    client = app.test_client()
    resp = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Pushed at once", "start_date": "2027-01-10 10:00:00",
        "end_date": "2027-01-10 11:00:00"})
    assert resp.status_code == 201, resp.json
    assert resp.headers["X-Calendar-Sync"] == "pushed"
    assert git(remote, "log", "-1", "--format=%s", "main").startswith(
        'events: create "Pushed at once"')
    assert git(remote, "rev-parse", "main") == git(server, "rev-parse", "HEAD")
    # Reads answer no sync header; `sync status` has nothing pending.
    assert "X-Calendar-Sync" not in client.get(f"{BASE}/events").headers
    app.extensions["calendar"].close()
    code, out = cli("sync", "status", "--content", str(server), "--cache-dir",
                    str(tmp_path / "server-cache"))
    assert code == 0 and "every commit is pushed" in out, out


def test_a_closed_calendar_answers_reads_and_starts_no_thread_again(
        tmp_path: Path, remote: Path) -> None:
    """Threads start on a process's first request (after a fork too); once the calendar
    is closed a later read must not start them again: nothing would stop them, and they
    would outlive the folder they work in."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    calendar = app.extensions["calendar"]
    calendar.close()
    assert client.get(f"{BASE}/events").status_code == 200
    assert calendar.remote_sync._thread is None


def test_end_to_end_over_git_daemon_with_signed_webhooks(tmp_path: Path, remote: Path,
                                                         users: dict[str, str]) -> None:
    """Over git:// and real HTTP: a write lands in the remote; a commit another clone
    pushes is visible on the very next request after each forge's signed webhook; a
    bad signature is refused with nothing fetched."""
    with GitDaemon(tmp_path) as daemon:
        url = daemon.url("remote.git")
        app = make_app(tmp_path, url)
        server_clone = tmp_path / "server"
        with ThreadedServer(app) as server:
            http = Http(server.port, basic("administrator", users["administrator"]))
            status, headers, body = http.request("POST", f"{BASE}/venues",
                                                 {"venue": "Daemon Hall"})
            assert status == 201 and headers["x-calendar-sync"] == "pushed", body
            assert git(remote, "log", "-1", "--format=%s", "main").startswith(
                'venues: create "Daemon Hall"')

            original = git(remote, "show", f"main:{EVENT_FILE}")
            for n, provider in enumerate(("github", "gitlab", "gitea")):
                title = f"Merged via {provider}"
                editor_push(url, tmp_path / "editor", {
                    EVENT_FILE: replace_key(original, "title", f"title: {title}")})
                # Refused: wrong secret, or no signature at all. Nothing is fetched.
                before = git(server_clone, "rev-parse", "refs/remotes/origin/main")
                for bad in (signed(provider, PUSH_BODY, "wrong"), {}):
                    status, _, body = http.request("POST", WEBHOOK, raw=PUSH_BODY,
                                                   headers=bad)
                    assert status == 401, body
                    assert body["code"] == "calendar_sync_unauthorized"
                    assert body["data"] == {"status": 401}
                assert git(server_clone, "rev-parse", "refs/remotes/origin/main") == before
                _, _, event = http.request("GET", f"{BASE}/events/{EVENT_ID}")
                assert event["title"] != title
                # A push to another branch (a pull request's) fetches nothing.
                other = json.dumps({"ref": "refs/heads/feature"}).encode()
                status, _, body = http.request("POST", WEBHOOK, raw=other,
                                               headers=signed(provider, other))
                assert status == 200 and body == {"state": "ignored",
                                                  "ref": "refs/heads/feature"}
                assert git(server_clone, "rev-parse", "refs/remotes/origin/main") == before
                # Signed: answered after integration, so the next read has it.
                status, _, body = http.request("POST", WEBHOOK, raw=PUSH_BODY,
                                               headers=signed(provider, PUSH_BODY))
                assert status == 200, body
                assert body["state"] == "pushed" and EVENT_FILE in body["changed"]
                _, _, event = http.request("GET", f"{BASE}/events/{EVENT_ID}")
                assert event["title"] == title, (n, provider)
                _, _, found = http.request("GET", f"{BASE}/events?search={provider}")
                assert [e["id"] for e in found["events"]] == [EVENT_ID]
        app.extensions["calendar"].close()
    assert git(server_clone, "status", "--porcelain") == ""


def test_polling_integrates_without_webhook(tmp_path: Path, remote: Path, admin: dict) -> None:
    app = make_app(tmp_path, str(remote), SYNC_POLL=0.2)
    client = started(app)
    original = git(remote, "show", f"main:{EVENT_FILE}")
    editor_push(str(remote), tmp_path / "editor",
                {EVENT_FILE: replace_key(original, "title", "title: Polled in")})
    deadline = time.monotonic() + 15
    while client.get(f"{BASE}/events/{EVENT_ID}").json["title"] != "Polled in":
        assert time.monotonic() < deadline, "polling never brought the change"
        time.sleep(0.02)
    app.extensions["calendar"].close()


def test_refused_push_is_rebased_and_retried(tmp_path: Path, remote: Path,
                                             admin: dict) -> None:
    """Another clone pushed first (another file): our push is refused, rebased on
    theirs and pushed again; the remote holds both commits, in a line."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    theirs = editor_push(str(remote), tmp_path / "editor", {
        "venues/editors-venue.yaml": "id: 9001\nname: Editor's venue\nslug: editors-venue\n"})
    resp = client.post(f"{BASE}/venues", headers=admin, json={"venue": "Server venue"})
    assert resp.status_code == 201 and resp.headers["X-Calendar-Sync"] == "pushed"
    log = git(remote, "log", "--format=%H %P %s", "main").splitlines()
    _ours, parent, *_ = log[0].split()
    assert parent == theirs and 'create "Server venue"' in log[0]
    assert git(remote, "show", "main:venues/editors-venue.yaml")
    # The editor's venue is served too (integrated into the catalog).
    assert client.get(f"{BASE}/venues/9001").status_code == 200
    app.extensions["calendar"].close()


def test_push_that_loses_the_ref_update_race_is_retried(tmp_path: Path, remote: Path,
                                                        admin: dict) -> None:
    """Two pushes arriving together at one server: ours passes the fast-forward check,
    then finds the branch moved before its ref update ("cannot lock ref ... but
    expected", "[remote rejected] (failed to update ref)"). That is a lost race, as a
    non-fast-forward is: fetch, rebase, push again, not a failed sync. A pre-receive
    hook on the remote moves the branch once, exactly in that window."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    editor = tmp_path / "editor"
    subprocess.run(["git", "clone", "-q", str(remote), str(editor)], check=True)
    (editor / "venues/racing-venue.yaml").write_text(
        "id: 9002\nname: Racing venue\nslug: racing-venue\n")
    git(editor, "add", "-A")
    git(editor, "commit", "-q", "-m", "the other push")
    git(editor, "push", "-q", "origin", "HEAD:refs/heads/racer")
    theirs = git(editor, "rev-parse", "HEAD").strip()
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\n[ -e race-done ] && exit 0\ntouch race-done\n"
                    # Outside the push's quarantine, as another push's update would be.
                    "env -u GIT_QUARANTINE_PATH git update-ref refs/heads/main refs/heads/racer\n")
    hook.chmod(0o755)
    resp = client.post(f"{BASE}/venues", headers=admin, json={"venue": "Server venue"})
    assert resp.status_code == 201, resp.json
    assert resp.headers["X-Calendar-Sync"] == "pushed"
    assert (remote / "race-done").exists()  # the race did happen
    _ours, parent, *_ = git(remote, "log", "-1", "--format=%H %P", "main").split()
    assert parent == theirs  # rebased on the commit that won the race
    assert git(remote, "show", "main:venues/racing-venue.yaml")
    app.extensions["calendar"].close()


def test_same_record_different_keys_keeps_both(tmp_path: Path, remote: Path,
                                               admin: dict) -> None:
    app = make_app(tmp_path, str(remote))
    client = started(app)
    original = git(remote, "show", f"main:{EVENT_FILE}")
    editor_push(str(remote), tmp_path / "editor",
                {EVENT_FILE: replace_key(original, "cost", "cost: '12'")})
    resp = client.patch(f"{BASE}/events/{EVENT_ID}", headers=admin,
                        json={"title": "Matinee, retitled here"})
    assert resp.status_code == 200 and resp.headers["X-Calendar-Sync"] == "pushed"
    data = remote_file(remote, EVENT_FILE)
    assert data["title"] == "Matinee, retitled here" and str(data["cost"]) == "12"
    event = client.get(f"{BASE}/events/{EVENT_ID}").json
    assert event["title"] == "Matinee, retitled here" and event["cost"].endswith("12")
    assert not (tmp_path / "server" / CONFLICTS_DIR).exists()
    app.extensions["calendar"].close()


def test_same_key_remote_wins_and_ours_is_kept(tmp_path: Path, remote: Path,
                                               admin: dict) -> None:
    app = make_app(tmp_path, str(remote))
    client = started(app)
    original = git(remote, "show", f"main:{EVENT_FILE}")
    editor_push(str(remote), tmp_path / "editor", {EVENT_FILE: replace_key(
        replace_key(original, "title", "title: Remote title"), "cost", "cost: '3'")})
    resp = client.patch(f"{BASE}/events/{EVENT_ID}", headers=admin,
                        json={"title": "Our title", "website": "https://example.org/x"})
    assert resp.status_code == 200 and resp.headers["X-Calendar-Sync"] == "pushed"
    data = remote_file(remote, EVENT_FILE)
    assert data["title"] == "Remote title" and data["website"] == "https://example.org/x"
    assert str(data["cost"]) == "3"
    assert client.get(f"{BASE}/events/{EVENT_ID}").json["title"] == "Remote title"
    # The lost value is in a conflict record, committed and pushed.
    server = tmp_path / "server"
    records = sorted((server / CONFLICTS_DIR).glob("*.yaml"))
    assert len(records) == 1
    record = yamlfile.load(records[0].read_bytes())
    assert record["record"] == EVENT_FILE
    assert record["keys"] == {"title": {"ours": "Our title", "remote": "Remote title"}}
    assert git(remote, "ls-tree", "--name-only", "main", f"{CONFLICTS_DIR}/").strip() == (
        f"{CONFLICTS_DIR}/{records[0].name}")
    app.extensions["calendar"].close()
    code, out = cli("sync", "status", "--content", str(server), "--cache-dir",
                    str(tmp_path / "server-cache"))
    assert code == 1 and "1 conflict record(s)" in out and EVENT_FILE in out, out
    code, out = cli("check", str(server))
    assert "sync-conflict" in out and records[0].name in out, out


def test_record_deleted_remotely_and_edited_here(tmp_path: Path, remote: Path,
                                                 admin: dict) -> None:
    """A modify/delete stop of the rebase: the remote's deletion is kept, our edited
    file goes whole into a conflict record; the record is gone from the interface."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    editor_push(str(remote), tmp_path / "editor", {EVENT_FILE: None}, "drop the matinee")
    resp = client.patch(f"{BASE}/events/{EVENT_ID}", headers=admin,
                        json={"title": "Edited here"})
    assert resp.status_code == 200 and resp.headers["X-Calendar-Sync"] == "pushed"
    assert EVENT_FILE not in git(remote, "ls-tree", "-r", "--name-only", "main")
    assert client.get(f"{BASE}/events/{EVENT_ID}").status_code == 404
    server = tmp_path / "server"
    [record_file] = (server / CONFLICTS_DIR).glob("*.yaml")
    record = yamlfile.load(record_file.read_bytes())
    assert record["record"] == EVENT_FILE
    assert yamlfile.load(record["ours_file"].encode())["title"] == "Edited here"
    assert git(server, "status", "--porcelain") == ""
    assert git(remote, "rev-parse", "main") == git(server, "rev-parse", "HEAD")
    app.extensions["calendar"].close()


def test_record_deleted_here_and_edited_remotely(tmp_path: Path, remote: Path,
                                                 admin: dict) -> None:
    """The other way round: we removed a tag the other side edited. The remote's
    edited tag stays and is served; the conflict record says we deleted it."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    tag = "tags/online.yaml"
    editor_push(str(remote), tmp_path / "editor", {tag: replace_key(
        git(remote, "show", f"main:{tag}"), "description", "description: Streamed too")})
    resp = client.delete(f"{BASE}/tags/29", headers=admin)
    assert resp.status_code == 200 and resp.headers["X-Calendar-Sync"] == "pushed"
    assert remote_file(remote, tag)["description"] == "Streamed too"
    assert client.get(f"{BASE}/tags/29").json["description"] == "Streamed too"
    [record_file] = (tmp_path / "server" / CONFLICTS_DIR).glob("*.yaml")
    record = yamlfile.load(record_file.read_bytes())
    assert record["record"] == tag and record["ours_deleted"] is True
    assert git(remote, "rev-parse", "main") == git(tmp_path / "server", "rev-parse", "HEAD")
    app.extensions["calendar"].close()


def test_unreadable_remote_file_keeps_ours_whole(tmp_path: Path, remote: Path,
                                                 admin: dict) -> None:
    """The other side pushed a record file that is not valid YAML while we edited it:
    no key-by-key merge is possible; the remote's file is kept (reported by `check`,
    left out by the interface, the rest served) and ours is in the conflict record."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    broken = git(remote, "show", f"main:{EVENT_FILE}").replace("title:", "title: [oops", 1)
    editor_push(str(remote), tmp_path / "editor", {EVENT_FILE: broken})
    resp = client.patch(f"{BASE}/events/{EVENT_ID}", headers=admin, json={"cost": "9"})
    assert resp.status_code == 200 and resp.headers["X-Calendar-Sync"] == "pushed"
    assert git(remote, "show", f"main:{EVENT_FILE}") == broken
    assert client.get(f"{BASE}/events/{EVENT_ID}").status_code == 404
    assert client.get(f"{BASE}/events").status_code == 200
    server = tmp_path / "server"
    [record_file] = (server / CONFLICTS_DIR).glob("*.yaml")
    ours = yamlfile.load(yamlfile.load(record_file.read_bytes())["ours_file"].encode())
    assert str(ours["cost"]) == "9"
    assert git(server, "status", "--porcelain") == ""
    app.extensions["calendar"].close()
    code, out = cli("check", str(server))
    assert code == 1 and EVENT_FILE in out and "sync-conflict" in out, out


def test_merge_leaving_a_dangling_link_is_reported_and_the_rest_served(
        tmp_path: Path, remote: Path, admin: dict) -> None:
    """The other side deleted a venue our new event links to: the rebase is clean
    (different files), `check` reports the link, the interface serves the rest."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    editor_push(str(remote), tmp_path / "editor",
                {"venues/the-blue-lantern.yaml": None}, "remove a venue")
    resp = client.post(f"{BASE}/events", headers=admin, json={
        "title": "At the lantern", "start_date": "2027-02-01 19:00:00",
        "end_date": "2027-02-01 21:00:00", "venue": 45})  # the-blue-lantern
    assert resp.status_code == 201, resp.json
    new_id = resp.json["id"]
    assert git(remote, "log", "-1", "--format=%s", "main").startswith("events: create")
    served = client.get(f"{BASE}/events/{new_id}")
    assert served.status_code == 200 and not served.json["venue"], served.json["venue"]
    assert client.get(f"{BASE}/events/{EVENT_ID}").status_code == 200
    assert client.get(f"{BASE}/events").status_code == 200
    app.extensions["calendar"].close()
    code, out = cli("check", str(tmp_path / "server"))
    assert code == 1 and "the-blue-lantern" in out, out


def test_three_clones_editing_at_once_converge(tmp_path: Path, remote: Path,
                                               admin: dict) -> None:
    """Three servers, each its own clone, edit different events at the same time:
    pushes are refused, rebased and retried; afterwards the remote has every edit,
    each in its own commit, and every clone the remote's tree."""
    apps = [make_app(tmp_path, str(remote), name=f"server{n}") for n in range(3)]
    clients = [started(app) for app in apps]
    ids = sorted(clients[0].get(f"{BASE}/events?per_page=50").json["events"],
                 key=lambda e: e["id"])
    targets = [[e["id"] for e in ids[n::3][:6]] for n in range(3)]
    answers: list[str] = []

    def edit(n: int) -> None:
        for event_id in targets[n]:
            resp = clients[n].patch(f"{BASE}/events/{event_id}", headers=admin,
                                    json={"title": f"Edited by server {n}: {event_id}"})
            assert resp.status_code == 200, resp.json
            answers.append(resp.headers["X-Calendar-Sync"])

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 18 and set(answers) <= {"pushed", "queued"}
    for app in apps:  # a queued one is pushed by the next exchange
        assert app.extensions["calendar"].remote_sync.exchange().state == "pushed"
    for app in apps:
        app.extensions["calendar"].remote_sync.exchange()
    head_tree = git(remote, "rev-parse", "main^{tree}")
    for n, client in enumerate(clients):
        assert git(tmp_path / f"server{n}", "rev-parse", "HEAD^{tree}") == head_tree
        for m in range(3):
            for event_id in targets[m]:
                assert client.get(f"{BASE}/events/{event_id}").json["title"] == (
                    f"Edited by server {m}: {event_id}")
    subjects = git(remote, "log", "--format=%s", "main").splitlines()
    assert sum(s.startswith("events: update") for s in subjects) == 18
    assert git(remote, "rev-list", "--merges", "--count", "main").strip() == "0"
    assert not (tmp_path / "server0" / CONFLICTS_DIR).exists()
    for app in apps:
        app.extensions["calendar"].close()


def test_unpushed_commit_is_pushed_after_restart(tmp_path: Path, remote: Path,
                                                 admin: dict) -> None:
    """The remote is unreachable: the write is committed and answered as queued,
    `sync status` says what waits and why; the next start pushes it."""
    app = make_app(tmp_path, str(remote))
    client = started(app)
    client.get(f"{BASE}/events")
    hidden = tmp_path / "away.git"
    remote.rename(hidden)
    resp = client.post(f"{BASE}/venues", headers=admin, json={"venue": "Offline venue"})
    assert resp.status_code == 201 and resp.headers["X-Calendar-Sync"] == "queued"
    app.extensions["calendar"].close()
    status_args = ("sync", "status", "--content", str(tmp_path / "server"), "--cache-dir",
                   str(tmp_path / "server-cache"))
    code, out = cli(*status_args)
    assert code == 1 and "1 commit(s) not pushed yet" in out and "Offline venue" in out
    assert "last error" in out and "does not appear to be a git repository" in out, out
    hidden.rename(remote)
    app = make_app(tmp_path, str(remote))
    app.test_client().get(f"{BASE}/events")  # the start: the thread's first exchange
    deadline = time.monotonic() + 15
    while "Offline venue" not in git(remote, "log", "-1", "--format=%s", "main"):
        assert time.monotonic() < deadline, "not pushed after the restart"
        time.sleep(0.05)
    app.extensions["calendar"].close()
    code, out = cli(*status_args)
    assert code == 0 and "every commit is pushed" in out, out


def test_serve_pushes_what_was_left_at_start_without_a_request(
        tmp_path: Path, remote: Path, users: dict[str, str]) -> None:
    """`serve --remote` on a clone holding a commit the remote lacks (a crash after a
    commit): pushed at start, before any request; then writes are pushed over HTTP."""
    clone = tmp_path / "server"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    (clone / "venues" / "left-over.yaml").write_text("id: 9100\nname: Left over\n"
                                                     "slug: left-over\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "committed, never pushed")
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "calendar_app", "serve", "--content", str(clone),
             "--users", str(tmp_path / "users.yaml"), "--port", str(port),
             "--remote", "origin", "--webhook-secret", SECRET],
            cwd=REPO_ROOT, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 30
        while git(remote, "log", "-1", "--format=%s", "main").strip() != (
                "committed, never pushed"):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.05)
        wait_for_port(port, proc, log=log)
        http = Http(port, basic("administrator", users["administrator"]))
        status, headers, _ = http.request("POST", f"{BASE}/venues", {"venue": "Over CLI"})
        assert status == 201 and headers["x-calendar-sync"] == "pushed"
        assert "Over CLI" in git(remote, "log", "-1", "--format=%s", "main")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "Shared repository: origin (origin), branch main" in log.read_text()


def test_sigkill_with_queued_pushes_loses_nothing(tmp_path: Path, remote: Path,
                                                  users: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """gunicorn (2 workers, configured by the environment, pushes queued) is killed
    with SIGKILL right after answering writes whose pushes could not happen yet;
    started again, it pushes every one of them."""
    hidden = tmp_path / "away.git"
    port = free_port()
    for key, value in (("CALENDAR_REMOTE", str(remote)), ("CALENDAR_PUSH", "queue"),
                       ("CALENDAR_WEBHOOK_SECRET", SECRET)):
        monkeypatch.setenv(key, value)
    content, cache, log = tmp_path / "server", tmp_path / "cache", tmp_path / "gunicorn.log"
    proc = start_gunicorn(content, tmp_path / "users.yaml", cache, port, log=log)
    try:
        wait_for_port(port, proc, log=log)
        remote.rename(hidden)  # unreachable: the pushes stay queued
        http = Http(port, basic("administrator", users["administrator"]))
        names = [f"Killed venue {n}" for n in range(6)]
        for name in names:
            status, headers, body = http.request("POST", f"{BASE}/venues", {"venue": name})
            assert status == 201 and headers["x-calendar-sync"] == "queued", body
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        hidden.rename(remote)
        proc = start_gunicorn(content, tmp_path / "users.yaml", cache, port, log=log)
        wait_for_port(port, proc, log=log)
        deadline = time.monotonic() + 30
        while git(remote, "rev-parse", "main") != git(content, "rev-parse", "HEAD"):
            assert time.monotonic() < deadline, "queued commits not pushed after restart"
            time.sleep(0.05)
        subjects = git(remote, "log", "--format=%s", "main")
        assert all(f'create "{name}"' in subjects for name in names)
        # A merged pull request, announced to one worker, is seen by both at once.
        original = git(remote, "show", f"main:{EVENT_FILE}")
        editor_push(str(remote), tmp_path / "editor",
                    {EVENT_FILE: replace_key(original, "title", "title: Seen by all")})
        status, _, body = http.request("POST", WEBHOOK, raw=PUSH_BODY,
                                       headers=signed("github", PUSH_BODY))
        # The webhook integrates the pull request, unless the restarted workers' own
        # exchange (pushing what the kill left queued) fetched it a moment before:
        # either way it is in the tree when the webhook answers.
        assert status == 200 and body["state"] == "pushed", body
        git(content, "merge-base", "--is-ancestor",  # raises if the tree lacks it
            git(remote, "rev-parse", "main").strip(), "HEAD")
        assert "title: Seen by all" in (content / EVENT_FILE).read_text()
        titles = {http.request("GET", f"{BASE}/events/{EVENT_ID}")[2]["title"]
                  for _ in range(12)}
        assert titles == {"Seen by all"}
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    assert "Traceback" not in log.read_text()
