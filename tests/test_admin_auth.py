"""Signing in to the editing pages (issue 24 item 1): sign-in passwords apart from
application passwords, signed sessions, CSRF on every form but never on /wp-json/,
no open redirect, throttling, the secret key outside the content tree."""

from __future__ import annotations

import base64
import stat

import pytest
from conftest import BASE, SIGN_IN_PASSWORD, csrf_token, git, sign_in
from flask import Blueprint, render_template

from calendar_app.cli import main
from calendar_app.editing import auth
from calendar_app.http.app import create_app
from calendar_app.store.users import UserStore


@pytest.fixture
def app(config, signed_users):
    app = create_app(config)
    probe = Blueprint("probe", __name__)

    @probe.route("/admin/probe")
    @auth.login_required
    def who() -> str:
        user = auth.current_user()
        return render_template("admin/message.html", title="Probe",
                               message=f"{user.name}:{user.role}")

    app.register_blueprint(probe)
    return app


def test_sign_in_page_is_html_with_a_token(client):
    page = client.get("/admin/sign-in")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert csrf_token(page.data)
    assert "'self'" in page.headers["Content-Security-Policy"]
    assert b'autocomplete="current-password"' in page.data


def test_anonymous_is_sent_to_sign_in_and_back(client):
    page = client.get("/admin/probe?x=1")
    assert page.status_code == 303
    assert page.headers["Location"] == "/admin/sign-in?next=/admin/probe?x%3D1"
    token = csrf_token(client.get(page.headers["Location"]).data)
    done = client.post("/admin/sign-in", data={
        "name": "editor", "password": f"{SIGN_IN_PASSWORD} editor", "csrf_token": token,
        "next": "/admin/probe?x=1"})
    assert done.status_code == 303 and done.headers["Location"] == "/admin/probe?x=1"
    probe = client.get("/admin/probe")
    assert b"editor:editor" in probe.data
    assert probe.headers["Cache-Control"] == "private, no-store"


@pytest.mark.parametrize("password", ["wrong password!", "", "x" * 5000])
def test_wrong_password_is_refused_on_the_form(client, password):
    page = sign_in(client, "author", password)
    assert page.status_code == 401
    assert b"Unknown user name or wrong password." in page.data
    assert client.get("/admin/probe").status_code == 303


def test_unknown_user_gets_the_same_message(client):
    page = sign_in(client, "nobody", "whatever password")
    assert page.status_code == 401 and b"Unknown user name or wrong password." in page.data


def test_application_password_does_not_open_the_pages(client, signed_users):
    assert sign_in(client, "administrator", signed_users["administrator"]).status_code == 401


def test_sign_in_password_does_not_open_the_interface(client):
    token = base64.b64encode(f"editor:{SIGN_IN_PASSWORD} editor".encode()).decode()
    answer = client.post(f"{BASE}/tags", json={"name": "Nope"},
                         headers={"Authorization": f"Basic {token}"})
    assert answer.status_code == 401


def test_post_without_csrf_token_is_refused(client, content):
    commits = git(content, "rev-list", "--count", "HEAD")
    page = client.post("/admin/sign-in", data={"name": "editor",
                                               "password": f"{SIGN_IN_PASSWORD} editor"})
    assert page.status_code == 400 and page.mimetype == "text/html"
    assert b"Form expired" in page.data
    assert client.get("/admin/probe").status_code == 303
    page = client.post("/admin/sign-in", data={
        "name": "editor", "password": f"{SIGN_IN_PASSWORD} editor", "csrf_token": "forged"})
    assert page.status_code == 400
    assert git(content, "rev-list", "--count", "HEAD") == commits


def test_interface_needs_no_csrf_token_even_with_a_session(client, admin):
    assert sign_in(client, "administrator").status_code == 303
    answer = client.post(f"{BASE}/tags", json={"name": "Token Free"}, headers=admin)
    assert answer.status_code == 201, answer.json


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x",
                                    "/\\evil.example", "javascript:alert(1)"])
def test_no_open_redirect(client, target):
    token = csrf_token(client.get("/admin/sign-in").data)
    done = client.post("/admin/sign-in", data={
        "name": "editor", "password": f"{SIGN_IN_PASSWORD} editor", "csrf_token": token,
        "next": target})
    assert done.status_code == 303 and done.headers["Location"] == "/admin/"


def test_sign_out_needs_the_token_and_ends_the_session(client):
    assert sign_in(client, "editor").status_code == 303
    assert client.post("/admin/sign-out").status_code == 400
    page = client.get("/admin/probe")
    assert page.status_code == 200
    assert client.post("/admin/sign-out", data={"csrf_token": csrf_token(page.data)}
                       ).status_code == 303
    assert client.get("/admin/probe").status_code == 303


def test_a_new_password_ends_older_sessions(client, tmp_path):
    assert sign_in(client, "author").status_code == 303
    assert client.get("/admin/probe").status_code == 200
    UserStore(tmp_path / "users.yaml").set_sign_in_password("author", "a brand new one")
    assert client.get("/admin/probe").status_code == 303
    assert sign_in(client, "author", "a brand new one").status_code == 303
    assert b"author:author" in client.get("/admin/probe").data


def test_removed_user_is_signed_out(client, tmp_path):
    assert sign_in(client, "contributor").status_code == 303
    UserStore(tmp_path / "users.yaml").remove("contributor")
    assert client.get("/admin/probe").status_code == 303


def test_forged_session_cookie_is_ignored(client):
    client.set_cookie("calendar_session", "eyJ1aWQiOjF9.forged.signature")
    assert client.get("/admin/probe").status_code == 303


def test_failed_sign_ins_are_throttled(config, signed_users):
    app = create_app({**config, "LOGIN_MAX_FAILURES": 2})
    client = app.test_client()
    assert sign_in(client, "editor", "wrong one here").status_code == 401
    assert sign_in(client, "editor", "wrong one here").status_code == 401
    page = sign_in(client, "editor")  # even the right password waits now
    assert page.status_code == 429 and b"Too many failed sign-ins" in page.data


def test_same_site_form_post_passes_the_origin_check(client):
    token = csrf_token(client.get("/admin/sign-in").data)
    done = client.post("/admin/sign-in", headers={"Origin": "http://localhost"}, data={
        "name": "editor", "password": f"{SIGN_IN_PASSWORD} editor", "csrf_token": token})
    assert done.status_code == 303
    foreign = client.post(f"{BASE}/tags", json={"name": "X"},
                          headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403


def test_secret_key_is_made_once_beside_the_users_file(config, signed_users, tmp_path, content):
    first = create_app(config)
    key_file = tmp_path / auth.SECRET_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert first.config["SECRET_KEY"] == key_file.read_text().strip()
    assert create_app(config).config["SECRET_KEY"] == first.config["SECRET_KEY"]
    assert not list(content.rglob(auth.SECRET_FILE))
    assert create_app({**config, "SECRET_KEY": "given"}).config["SECRET_KEY"] == "given"


def test_cli_sets_a_sign_in_password(tmp_path, monkeypatch, capsys):
    users = tmp_path / "u.yaml"
    monkeypatch.setattr("sys.stdin", _Stdin("my sign-in words\n"))
    assert main(["users", "add", "erin", "--role", "author", "--sign-in",
                 "--users", str(users)]) == 0
    assert UserStore(users).check_sign_in("erin", "my sign-in words").role == "author"
    monkeypatch.setattr("sys.stdin", _Stdin("changed words here\n"))
    assert main(["users", "passwd", "erin", "--users", str(users)]) == 0
    assert UserStore(users).check_sign_in("erin", "my sign-in words") is None
    assert UserStore(users).check_sign_in("erin", "changed words here") is not None
    monkeypatch.setattr("sys.stdin", _Stdin("short\n"))
    assert main(["users", "passwd", "erin", "--users", str(users)]) == 2
    monkeypatch.setattr("sys.stdin", _Stdin("long enough words\n"))
    assert main(["users", "passwd", "ghost", "--users", str(users)]) == 2
    assert "no user named 'ghost'" in capsys.readouterr().err
    assert "changed words here" not in users.read_text()


class _Stdin:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        return self.lines.pop(0) if self.lines else ""


def test_the_interface_neither_reads_nor_refreshes_the_pages_session(client):
    """The session is the editing pages': `/wp-json` answers a signed-in browser as
    anyone (Basic auth decides there) and sends no cookie back, while the pages still
    refresh it."""
    assert sign_in(client, "editor").status_code == 303
    page = client.get("/admin/probe")
    assert b"editor:editor" in page.data and "Set-Cookie" in page.headers
    for path in ("/wp-json/tribe/events/v1/events", "/wp-json/tribe/events/v1/events/999999",
                 "/WP-JSON/tribe/events/v1/", "/wp-json/nowhere"):
        answer = client.get(path)
        assert "Set-Cookie" not in answer.headers, path
        assert "Cookie" not in answer.headers.get("Vary", ""), path
    listed = client.get("/wp-json/tribe/events/v1/events")
    assert listed.status_code == 200 and listed.headers["Allow"] == "GET"
    assert listed.headers["Cache-Control"] == "public, max-age=10, must-revalidate"
    assert b"editor:editor" in client.get("/admin/probe").data  # still signed in


def test_session_cookie_is_named_and_same_site(client):
    """The cookie is the calendar's own (not Flask's generic `session`, which another
    app on the host could also use) and is not sent along on cross-site requests."""
    done = sign_in(client, "editor")
    cookie = done.headers["Set-Cookie"]
    assert cookie.startswith("calendar_session=")
    assert "SameSite=Lax" in cookie and "HttpOnly" in cookie


def test_a_deployment_keeps_its_own_cookie_settings(config, signed_users):
    app = create_app({**config, "SESSION_COOKIE_NAME": "ours",
                      "SESSION_COOKIE_SAMESITE": "Strict"})
    done = sign_in(app.test_client(), "editor")
    assert done.headers["Set-Cookie"].startswith("ours=")
    assert "SameSite=Strict" in done.headers["Set-Cookie"]
