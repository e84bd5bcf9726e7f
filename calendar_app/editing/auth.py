"""Signing in to the editing pages: user name + sign-in password, a signed session
cookie, CSRF protection on every form.

The API other blueprints use (kept small and stable):

- `init_app(app)`: called once by `http/app.py`. Sets the secret key (config
  `SECRET_KEY`, else a random key kept in `session-secret` beside the users file,
  never in the content tree), the session cookie (HttpOnly, SameSite=Lax, Secure
  when `SESSION_COOKIE_SECURE`; not opened on `/wp-json`), Flask-WTF's `CSRFProtect` for every POST/PUT/PATCH/
  DELETE of the app, and the sign-in/sign-out pages below.
- `csrf`: that `CSRFProtect`. The app exempts the HTTP interface with it
  (`csrf.exempt(blueprint)`): `/wp-json/` keeps Basic auth and needs no token.
  A form puts `<input type="hidden" name="csrf_token" value="{{ csrf_token() }}">`
  in itself; a script sends the token in the `X-CSRFToken` header.
- `current_user() -> User | None`: the signed-in user of this request. A session ends
  when the user is removed or given a new sign-in password.
- `login_required(view)`: a view decorator; anonymous visitors are sent to the sign-in
  page (303) and come back to the page they asked for.
- `SIGN_IN` / `SIGN_OUT`: endpoint names for `url_for`.

Passwords: `calendar-app users passwd NAME` (or `users add NAME --sign-in`); scrypt
hashes in the users file (store/users.py). Application passwords do not open these
pages. Failed sign-ins per address are bounded like the interface's logins
(LOGIN_MAX_FAILURES per LOGIN_WINDOW seconds).
"""

from __future__ import annotations

import functools
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Request,
    Response,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect

from ..store.users import User
from .language import gettext as _
from .language import service_message

SIGN_IN = "admin_auth.sign_in"
SIGN_OUT = "admin_auth.sign_out"
SESSION_HOURS = 12
SECRET_FILE = "session-secret"

csrf = CSRFProtect()
bp = Blueprint("admin_auth", __name__, url_prefix="/admin", template_folder="templates",
               static_folder="static", static_url_path="/static")
View = TypeVar("View", bound=Callable[..., Any])


def current_user() -> User | None:
    """The signed-in user, checked against the users file once per request."""
    if "admin_user" not in g:
        g.admin_user = _session_user()
    return g.admin_user


def _session_user() -> User | None:
    user_id, stamp = session.get("uid"), session.get("stamp")
    if not isinstance(user_id, int) or not stamp:
        return None
    users = current_app.extensions["calendar"].users
    if users.sign_in_stamp(user_id) != stamp:
        return None
    return users.get(user_id)


def login_required(view: View) -> View:
    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_user() is None:
            return redirect(url_for(SIGN_IN, next=request.full_path.rstrip("?")), 303)
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def _safe_next(target: str | None) -> str:
    """Only a path of this site: never an open redirect to another host."""
    default = url_for("admin.home") if "admin.home" in current_app.view_functions else "/admin/"
    if not target:
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") \
            or "\\" in target:
        return default
    return target


class _Failures:
    """Failed sign-ins per client address within a sliding window (this process)."""

    def __init__(self) -> None:
        self._times: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def recent(self, client: str, window: float) -> int:
        now = time.monotonic()
        with self._lock:
            kept = [t for t in self._times.get(client, []) if t > now - window]
            if kept:
                self._times[client] = kept
            else:
                self._times.pop(client, None)
            return len(kept)

    def add(self, client: str) -> None:
        with self._lock:
            self._times.setdefault(client, []).append(time.monotonic())
            if len(self._times) > 100_000:  # bound memory under a flood of addresses
                self._times.pop(next(iter(self._times)))


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in() -> Any:
    target = _safe_next(request.values.get("next"))
    if request.method == "GET":
        if current_user() is not None:
            return redirect(target, 303)
        return render_template("admin/sign_in.html", next=target, error=None, name="")
    failures: _Failures = current_app.extensions["admin_sign_in_failures"]
    client = request.remote_addr or "unknown"
    window = float(current_app.config.get("LOGIN_WINDOW", 300))
    name = request.form.get("name", "")[:200]
    if failures.recent(client, window) >= int(current_app.config.get("LOGIN_MAX_FAILURES", 10)):
        return render_template("admin/sign_in.html", next=target, name=name,
                               error=_("Too many failed sign-ins; try again later.")), 429
    user = current_app.extensions["calendar"].users.check_sign_in(
        name, request.form.get("password", ""))
    if user is None:
        failures.add(client)
        return render_template("admin/sign_in.html", next=target, name=name,
                               error=_("Unknown user name or wrong password.")), 401
    session.clear()  # a fresh session: nothing carried over from before signing in
    session.permanent = True
    session["uid"] = user.id
    session["stamp"] = current_app.extensions["calendar"].users.sign_in_stamp(user.id)
    return redirect(target, 303)


@bp.route("/sign-out", methods=["POST"])
def sign_out() -> Any:
    session.clear()
    return redirect(url_for(SIGN_IN), 303)


@bp.app_context_processor
def _template_globals() -> dict[str, Any]:
    return {"current_user": current_user}


def _csrf_failed(error: CSRFError) -> Any:
    return render_template("admin/message.html", title=_("Form expired"), message=_(
        "The form was too old or not sent from this site (%(reason)s). Go back, reload it "
        "and send it again.", reason=service_message(error.description))), 400


PAGE_CSP = ("default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'")


def _page_headers(response: Response) -> Response:
    """HTML pages load their own CSS and script (the interface's policy allows nothing);
    a signed-in user's pages are never stored by a cache."""
    if response.mimetype == "text/html" and not request.path.startswith(("/wp-json", "/media/")):
        response.headers["Content-Security-Policy"] = PAGE_CSP
        # With no-referrer (the interface's), browsers post forms with `Origin: null`.
        response.headers["Referrer-Policy"] = "same-origin"
        if "uid" in session:
            response.headers["Cache-Control"] = "private, no-store"
            response.headers["Vary"] = "Cookie"
    return response


def _secret_key(users_file: Path) -> str:
    """A random key made once and kept beside the users file (mode 0600)."""
    path = users_file.parent / SECRET_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another worker made it first: use theirs
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    return key


class _PagesSession(SecureCookieSessionInterface):
    """Sessions are the editing pages': the interface (`/wp-json`) authenticates every
    request itself (Basic), so its requests neither read the cookie nor send it back
    refreshed (a public, cacheable answer carries no Set-Cookie), and save a signer's
    set-up per request."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if request.path.startswith("/wp-json"):
            return None  # Flask's null session: empty, never saved
        return super().open_session(app, request)


def init_app(app: Flask) -> None:
    import datetime as dt

    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app.extensions["calendar"].users.path)
    # Flask's own defaults ("session", no SameSite) are always in app.config, so a
    # setdefault would never apply ours: a deployment's choice is what differs from them.
    if app.config["SESSION_COOKIE_SAMESITE"] is None:
        app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    if app.config["SESSION_COOKIE_NAME"] == "session":
        app.config["SESSION_COOKIE_NAME"] = "calendar_session"
    app.config["PERMANENT_SESSION_LIFETIME"] = dt.timedelta(hours=SESSION_HOURS)
    app.session_interface = _PagesSession()
    # A token lives as long as the session: a form left open for an afternoon still saves.
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", SESSION_HOURS * 3600)
    app.extensions["admin_sign_in_failures"] = _Failures()
    csrf.init_app(app)
    app.register_blueprint(bp)
    app.after_request(_page_headers)
    app.register_error_handler(CSRFError, _csrf_failed)  # every page's forms, not only ours
