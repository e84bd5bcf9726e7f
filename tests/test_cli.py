"""The command line (issue 2 item 9): users add/list/remove, --help everywhere, the
CALENDAR_USERS variable, and the real server answering over HTTP."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import BASE, git, make_repo

from calendar_app.cli import main
from calendar_app.store.users import UserStore

REPO_ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, env: dict | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "CALENDAR_USERS"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "calendar_app", *args], cwd=cwd or REPO_ROOT,
                          env=full_env, capture_output=True, text=True, timeout=60,
                          check=False)


def test_users_add_prints_password_last(tmp_path):
    users = tmp_path / "users.yaml"
    result = run("users", "add", "alice", "--users", str(users))
    assert result.returncode == 0, result.stderr
    last = result.stdout.rstrip("\n").splitlines()[-1]
    store = UserStore(users)
    # some trailing part of the last line (after a space or colon) is the password
    starts = [i + 1 for i, c in enumerate(last) if c in " :"]
    found = [last[i:] for i in starts if store.authenticate("alice", last[i:]) is not None]
    assert found, last
    secret = found[0]
    user = store.authenticate("alice", secret)
    assert user.role == "administrator"  # the default role
    assert secret not in users.read_text()  # only a hash is stored


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """The same commands in-process (fast); `python -m` is exercised above and below."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_users_add_last_line_token_is_the_password(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CALENDAR_USERS", raising=False)
    users = tmp_path / "users.yaml"
    code, out, _ = cli(capsys, "users", "add", "bob", "--role", "editor", "--users", str(users))
    assert code == 0
    last = out.strip().splitlines()[-1]
    # scripts take the text after the last ": " (or the whole trailing token group)
    secret = last.rsplit(": ", 1)[-1]
    user = UserStore(users).authenticate("bob", secret)
    assert user is not None and user.role == "editor"


def test_users_list_and_remove(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CALENDAR_USERS", raising=False)
    users = str(tmp_path / "users.yaml")
    cli(capsys, "users", "add", "carol", "--users", users)
    cli(capsys, "users", "add", "dave", "--role", "author", "--users", users)
    code, out, _ = cli(capsys, "users", "list", "--users", users)
    assert code == 0
    lines = out.strip().splitlines()
    assert any("carol" in line and "administrator" in line for line in lines)
    assert any("dave" in line and "author" in line for line in lines)
    code, _, _ = cli(capsys, "users", "remove", "carol", "--users", users)
    assert code == 0
    _, out, _ = cli(capsys, "users", "list", "--users", users)
    assert "carol" not in out and "dave" in out
    code, _, err = cli(capsys, "users", "remove", "carol", "--users", users)
    assert code != 0
    assert "carol" in err


def test_users_add_rejects_unknown_role(tmp_path, capsys):
    code, _, _ = cli(capsys, "users", "add", "eve", "--role", "overlord", "--users",
                     str(tmp_path / "u.yaml"))
    assert code != 0
    assert not (tmp_path / "u.yaml").exists()


def test_calendar_users_environment_variable(tmp_path, capsys, monkeypatch):
    users = tmp_path / "from-env.yaml"
    monkeypatch.setenv("CALENDAR_USERS", str(users))
    code, _, err = cli(capsys, "users", "add", "frank")
    assert code == 0, err
    assert users.exists()
    assert "frank" in cli(capsys, "users", "list")[1]
    assert cli(capsys, "users", "remove", "frank")[0] == 0
    assert "frank" not in cli(capsys, "users", "list")[1]


def test_help_via_python_m():
    result = run("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:")
    for command in ("serve", "users"):
        assert command in result.stdout


@pytest.mark.parametrize("command", [["serve"], ["users"], ["users", "add"],
                                     ["users", "list"], ["users", "remove"]])
def test_help_for_every_command(command, capsys):
    code, out, _ = cli(capsys, *command, "--help")
    assert code == 0
    assert out.startswith("usage:")
    if command == ["serve"]:
        for option in ("--content", "--users", "--host", "--port"):
            assert option in out
    if command == ["users", "add"]:
        assert "--role" in out and "--users" in out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_real_server_create_and_read(tmp_path):
    content = make_repo(tmp_path)
    users = tmp_path / "users.yaml"
    added = run("users", "add", "server-admin", "--users", str(users))
    password = added.stdout.strip().splitlines()[-1].rsplit(": ", 1)[-1]
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "calendar_app", "serve", "--content", str(content),
         "--users", str(users), "--port", str(port)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    root = f"http://127.0.0.1:{port}{BASE}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{root}/", timeout=2) as response:
                    assert response.status == 200
                    break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.05)
        token = base64.b64encode(f"server-admin:{password}".encode()).decode()
        request = urllib.request.Request(
            f"{root}/events", method="POST",
            data=json.dumps({"title": "Over The Wire", "start_date": "2027-05-01 18:00:00",
                             "end_date": "2027-05-01 20:00:00"}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 201
            assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
            created = json.load(response)
        assert created["title"] == "Over The Wire"
        with urllib.request.urlopen(f"{root}/events/{created['id']}", timeout=10) as response:
            assert response.status == 200
            read = json.load(response)
        assert read["id"] == created["id"]
        assert read["slug"] == "over-the-wire"
        assert read["rest_url"] == f"{root}/events/{created['id']}"
        assert (content / "events/2027/over-the-wire.yaml").exists()
        log = git(content.parent, "log", "-1", "--format=%an|%s")
        assert log.strip() == f'server-admin|events: create "Over The Wire" (#{created["id"]})'
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(urllib.request.Request(
                f"{root}/events", method="POST", data=json.dumps({
                    "title": "Anonymous", "start_date": "2027-05-01 18:00:00",
                    "end_date": "2027-05-01 20:00:00"}).encode(),
                headers={"Content-Type": "application/json"}), timeout=10)
        assert denied.value.code == 401
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
