"""The public submission form (`/submit/`): anonymous visitors propose an event, which
becomes a `pending` event committed by the submissions user, for editors to approve
(moderation.py).

The form's fields become an interface request body and go through `Service.create`, so
a submission is checked by the same rules, with the same messages, as a write through
the interface. Around it: CSRF (Flask-WTF), a honeypot field, a limit of accepted
submissions per client address (in the worker's memory: with N workers an address gets
at most N times the allowance), size limits, no HTML in the description beyond what
rendering keeps. The submitter's e-mail goes to `submitters.Submissions`, never into
the content tree. Plain HTML: works without JavaScript.
"""

from __future__ import annotations

import logging
import threading
import time
import zoneinfo
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_wtf import FlaskForm
from flask_wtf.csrf import CSRFError

from ..model import errors, markup
from ..model.errors import ApiError
from ..model.formats import valid_email
from ..model.records import Record
from ..model.resources import EVENTS
from ..site.i18n import N_
from ..store.users import User
from ..wiring import Calendar
from . import notify
from .language import gettext as _
from .language import service_message
from .submitters import FILE_NAME, Submissions

log = logging.getLogger(__name__)
bp = Blueprint("submit", __name__, template_folder="templates", static_folder="static",
               static_url_path="/static")

DEFAULTS = {
    "SUBMISSIONS_USER": "submissions",  # the user whose commits submissions are
    "SUBMISSIONS_FILE": None,  # the private file (submitters.py); default beside users
    "SUBMIT_LIMIT": 5,  # accepted submissions per client address ...
    "SUBMIT_WINDOW": 3600,  # ... within this many seconds, then 429
    "SUBMIT_MAX_BYTES": 64 * 1024,  # a submission's whole body
}
# A venue or organizer both chosen and typed in as new.
_NOT_BOTH = {"venue": N_("Choose a venue or name a new one, not both."),
             "organizer": N_("Choose an organizer or name a new one, not both.")}
HONEYPOT = "homepage"  # hidden from people; bots fill in fields with such names
# The pages' own policy (the interface's forbids everything): the stylesheet only.
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


@dataclass(frozen=True)
class FormField:
    name: str  # the form's name; the body's field is `target` (or the same)
    label: str
    limit: int  # characters
    control: str = "text"
    target: str = ""
    hint: str = ""
    required: bool = False


# What a visitor fills in. The body fields are the interface's (resources.EVENTS).
FIELDS = (
    FormField("title", N_("Title"), 200, required=True),
    FormField("start_date", N_("Starts"), 40, "datetime-local", required=True),
    FormField("end_date", N_("Ends"), 40, "datetime-local", required=True),
    FormField("timezone", N_("Time zone"), 64, "timezone", hint=N_("The time zone the times above "
              "are in.")),
    FormField("venue", N_("Venue"), 20, "venue", hint=N_("Choose a venue, or name a new one below.")),
    FormField("venue_name", N_("New venue's name"), 200),
    FormField("venue_address", N_("New venue's address"), 300),
    FormField("venue_city", N_("New venue's city"), 100),
    FormField("organizer", N_("Organizer"), 20, "organizer"),
    FormField("organizer_name", N_("Or a new organizer's name"), 200),
    FormField("description", N_("Description"), 10_000, "textarea",
              hint=N_("Plain text or Markdown; a blank line starts a new paragraph.")),
    FormField("website", N_("Website"), 500, "url"),
    FormField("cost", N_("Cost"), 100, hint=N_("For example 15, 10-20 or Free.")),
    FormField("category", N_("Category"), 20, "category"),
    FormField("email", N_("Your e-mail address"), 254, "email", required=True,
              hint=N_("Only the editors see it, to tell you their decision. It is never "
              "published.")),
)
BY_NAME = {f.name: f for f in FIELDS}
# Where a message about a body field is shown on the form.
_FIELD_OF = {"venue": "venue", "organizer": "organizer", "categories": "category"}


class SubmissionForm(FlaskForm):
    """Flask-WTF for the CSRF token; the fields are read and checked below."""


class _Limiter:
    """Accepted submissions per client address within a sliding window."""

    def __init__(self) -> None:
        self._times: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait(self, client: str, limit: int, window: float) -> float:
        """Seconds to wait before the next submission (0: allowed now)."""
        now = time.monotonic()
        with self._lock:
            times = self._times.get(client, deque())
            while times and times[0] <= now - window:
                times.popleft()
            if not times:
                self._times.pop(client, None)
            return times[0] + window - now if len(times) >= limit else 0.0

    def add(self, client: str) -> None:
        with self._lock:
            self._times.setdefault(client, deque()).append(time.monotonic())
            if len(self._times) > 100_000:  # bound memory under a flood of addresses
                self._times.pop(next(iter(self._times)))


@dataclass
class Outcome:
    """What checking a posted form found: messages by form field, and for the form."""

    fields: dict[str, str] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    status: int = 400


def _calendar() -> Calendar:
    return current_app.extensions["calendar"]


def submissions() -> Submissions:
    """The private file of this app's submissions (submitters.py)."""
    found = current_app.extensions.get("submissions")
    if found is None:
        path = current_app.config["SUBMISSIONS_FILE"] or (
            _calendar().users.path.with_name(FILE_NAME))
        found = current_app.extensions["submissions"] = Submissions(path)
    return found


def submissions_user(calendar: Calendar, name: str) -> User:
    """The user submissions are committed as, made on first use as a contributor: the
    role whose events the service keeps `pending` and that can neither publish, edit
    others' records nor make terms. Its password is drawn and thrown away, so nobody
    signs in as it. A user of that name who may publish is refused, not demoted."""
    user = next((u for u in calendar.users.users() if u.name == name), None)
    if user is None:
        calendar.users.add(name, "contributor")
        user = next(u for u in calendar.users.users() if u.name == name)
    if user.can("publish"):
        raise ApiError(503, "submissions-closed", "Submissions are closed: the submissions "
                       f"user {name!r} may publish; give it the contributor role.")
    return user


@lru_cache(maxsize=1)
def time_zones() -> tuple[str, ...]:
    return (*sorted(z for z in zoneinfo.available_timezones()
                    if "/" in z and not z.startswith(("Etc/", "SystemV/", "posix/", "right/"))),
            "UTC")


def choices(calendar: Calendar) -> dict[str, list[tuple[int, str]]]:
    """Published venues and organizers, and the categories, by name (the select boxes)."""
    catalog = calendar.catalog

    def listed(collection: str) -> list[tuple[int, str]]:
        return sorted(((r.id, r.name) for r in catalog.all(collection)
                       if r.resource.is_term or r.status == "publish"),
                      key=lambda item: item[1].lower())

    return {"venue": listed("venues"), "organizer": listed("organizers"),
            "category": listed("categories")}


def _posted() -> dict[str, str]:
    return {f.name: request.form.get(f.name, "").replace("\r\n", "\n") for f in FIELDS}


def check_form(values: dict[str, str]) -> Outcome:
    """What the form itself refuses before the service sees a body: sizes, the e-mail,
    HTML the description may not hold, a venue both chosen and named."""
    out = Outcome()
    for f in FIELDS:
        if len(values[f.name]) > f.limit:
            out.fields[f.name] = _("At most %(limit)s characters.", limit=f.limit)
    if not values["email"].strip():
        out.fields.setdefault("email", service_message("Missing parameter(s): email"))
    elif not valid_email(values["email"].strip()):
        out.fields.setdefault("email", service_message("Invalid parameter."))
    dropped = markup.disallowed_tags(values["description"])
    if dropped:
        out.fields.setdefault("description", _("HTML not allowed in descriptions: %(tags)s.",
                                               tags=", ".join(f"<{t}>" for t in dropped)))
    for link in ("venue", "organizer"):
        if values[link].strip() and values[f"{link}_name"].strip():
            out.fields.setdefault(f"{link}_name", _(_NOT_BOTH[link]))
    if values["venue_name"].strip() == "" and (values["venue_address"].strip()
                                               or values["venue_city"].strip()):
        out.fields.setdefault("venue_name", _("Name the new venue whose address you gave."))
    return out


def event_body(values: dict[str, str], zone: str) -> dict:
    """The interface request body the form stands for (empty fields left out, so the
    service reports what is missing in its own words)."""
    body: dict = {"status": "pending", "timezone": values["timezone"].strip() or zone}
    for name in ("title", "description", "website", "cost"):
        if values[name].strip():
            body[name] = values[name].strip() if name != "description" else values[name]
    for name in ("start_date", "end_date"):
        if values[name].strip():
            body[name] = values[name].strip().replace("T", " ")
    if values["venue_name"].strip():
        venue = {"venue": values["venue_name"].strip()}
        for key in ("address", "city"):
            if values[f"venue_{key}"].strip():
                venue[key] = values[f"venue_{key}"].strip()
        body["venue"] = venue
    elif values["venue"].strip():
        body["venue"] = values["venue"].strip()
    if values["organizer_name"].strip():
        body["organizer"] = [{"organizer": values["organizer_name"].strip()}]
    elif values["organizer"].strip():
        body["organizer"] = [values["organizer"].strip()]
    if values["category"].strip():  # an id among those offered (_check_choices)
        body["categories"] = [values["category"].strip()]
    return body


def service_messages(exc: ApiError) -> Outcome:
    """The service's refusal as form messages, in its words."""
    out = Outcome(status=exc.status)
    params = exc.data.get("params")
    if isinstance(params, dict):
        for name, text in params.items():
            out.fields.setdefault(_FIELD_OF.get(name, name if name in BY_NAME else ""),
                                  service_message(str(text)))
        out.fields.pop("", None)
    elif isinstance(params, list):  # missing fields
        for name in params:
            out.fields.setdefault(_FIELD_OF.get(name, name), service_message(exc.message))
    if not out.fields:
        out.general.append(service_message(exc.message))
    return out


def _render(values: dict[str, str], outcome: Outcome | None, form: SubmissionForm) -> Response:
    calendar = _calendar()
    zone = str(calendar.catalog.settings.get("timezone") or "UTC")
    values = {**values, "timezone": values.get("timezone") or zone}
    page = render_template("submit/form.html", fields_by_name=BY_NAME, values=values,
                           outcome=outcome or Outcome(), form=form, zones=time_zones(),
                           choices=choices(calendar), honeypot=HONEYPOT,
                           site_title=calendar.catalog.settings.get("title") or _("Calendar"))
    return make_response(page, outcome.status if outcome else 200)


@bp.get("/")
def form_page() -> Response:
    return _render({f.name: "" for f in FIELDS}, None, SubmissionForm())


@bp.post("/")
def submit() -> Response:
    config = current_app.config
    if (request.content_length or 0) > config["SUBMIT_MAX_BYTES"]:
        return _refused(413, _("The submission is larger than %(limit)s bytes; shorten the "
                               "description.", limit=config["SUBMIT_MAX_BYTES"]))
    form = SubmissionForm()
    values = _posted()
    if not form.validate_on_submit():
        reason = " ".join(service_message(e) for errs in form.errors.values() for e in errs)
        message = _("The form could not be checked (%(reason)s); send it again.",
                    reason=reason)
        return _render(values, Outcome(general=[message]), form)
    client = request.remote_addr or "unknown"
    limiter: _Limiter = current_app.extensions["submit_limiter"]
    wait = limiter.wait(client, int(config["SUBMIT_LIMIT"]), float(config["SUBMIT_WINDOW"]))
    if wait:
        response = _refused(429, _("Too many submissions from your address; try again later."))
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    if request.form.get(HONEYPOT, ""):
        limiter.add(client)  # a bot: answered as a success, nothing kept
        log.info("submission from %s dropped: honeypot filled", client)
        return redirect(url_for("submit.thanks"), 303)
    outcome = check_form(values)
    _check_choices(values, outcome)
    _precheck(values, outcome)
    if outcome.fields or outcome.general:
        return _render(values, outcome, form)
    try:
        _create(values)
    except ApiError as exc:
        return _render(values, service_messages(exc), form)
    limiter.add(client)
    return redirect(url_for("submit.thanks"), 303)


def _check_choices(values: dict[str, str], outcome: Outcome) -> None:
    """A select's value must be one it offered: no draft venue by its id, no category
    made up by a visitor."""
    for name, offered in choices(_calendar()).items():
        chosen = values[name].strip()
        if chosen and chosen not in {str(record_id) for record_id, _name in offered}:
            outcome.fields.setdefault(name, service_message("Invalid parameter."))


def _precheck(values: dict[str, str], outcome: Outcome) -> None:
    """The service's verdict on the body, without writing: with the form's own, every
    problem is shown at once."""
    calendar = _calendar()
    body = event_body(values, str(calendar.catalog.settings.get("timezone") or "UTC"))
    missing = [name for name in EVENTS.required_fields if body.get(name) is None]
    found = [service_messages(errors.missing(missing))] if missing else []
    try:
        calendar.service.check_body(EVENTS, body, None)
    except ApiError as exc:
        found.append(service_messages(exc))
    for each in found:
        for name, message in each.fields.items():
            outcome.fields.setdefault(name, message)
        outcome.general.extend(each.general)


def _create(values: dict[str, str]) -> Record:
    calendar = _calendar()
    user = submissions_user(calendar, current_app.config["SUBMISSIONS_USER"])
    zone = str(calendar.catalog.settings.get("timezone") or "UTC")
    body = event_body(values, zone)
    record, _new = calendar.service.create(EVENTS.name, body, user)
    email = values["email"].strip()
    submissions().add(record.id, email, calendar.clock())
    _tell_editors(calendar, record)
    return record


def _tell_editors(calendar: Calendar, record: Record) -> None:
    editors = [u.email for u in calendar.users.users()
               if u.can("edit_others") and u.can("publish")]
    settings = notify.smtp_settings(calendar.catalog.settings)
    queue = url_for("moderation.queue", _external=True) if (
        "moderation.queue" in current_app.view_functions) else ""
    body = (_("A visitor proposed an event:") + f"\n\n  {record.name}\n  "
            f"{record.get('start_date')} ({record.get('timezone')})\n\n"
            + (_("Review it in the moderation queue: %(address)s", address=queue) + "\n"
               if queue else ""))
    current_app.extensions["mailer"].send(
        settings, editors, _("New event submitted: %(name)s", name=record.name), body)


def _refused(status: int, message: str) -> Response:
    page = render_template("submit/refused.html", message=message, status=status)
    return make_response(page, status)


@bp.get("/thanks/")
def thanks() -> Response:
    return make_response(render_template("submit/thanks.html"))


@bp.errorhandler(CSRFError)
def _csrf_failed(error: CSRFError) -> Response:
    """The app-wide CSRF check (editing/auth.py) refused the post: the form again, filled."""
    message = _("The form could not be checked (%(reason)s); send it again.",
                reason=service_message(error.description))
    return _render(_posted(), Outcome(general=[message]), SubmissionForm())


@bp.after_request
def _policy(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def install(app: Flask) -> None:
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    app.extensions["submit_limiter"] = _Limiter()
    app.extensions.setdefault("mailer", notify.Mailer())
    app.register_blueprint(bp, url_prefix="/submit")
