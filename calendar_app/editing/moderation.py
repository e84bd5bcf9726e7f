"""The moderation queue (`/admin/pending/`): pending events with what `check` says about
each and the events they may duplicate; approve (publish), edit then approve, or reject
(trash, with a reason). Editors and administrators only.

A decision is one commit by the signed-in editor (`Service.change_together`): the event
and the venue and organizers its submission created, which the submissions user could
only make as drafts. The submitter hears of it by e-mail when SMTP is set (notify.py).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    flash,
    get_flashed_messages,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_wtf.csrf import CSRFError

from ..editorial.check import check_tree
from ..editorial.snapshot import Snapshot
from ..model import markup
from ..model.errors import ApiError
from ..model.findings import Finding
from ..model.records import Record
from ..store.content import RETIRED_IDS_FILE, SETTINGS_FILE
from ..store.users import User
from ..wiring import Calendar
from . import notify
from .auth import current_user, login_required
from .language import gettext as _
from .language import service_message
from .submit import submissions

bp = Blueprint("moderation", __name__, template_folder="templates")
REASON_LIMIT = 1000  # characters of a rejection's reason
_WORDS = re.compile(r"[^\w]+")


@dataclass
class Entry:
    """One pending event as the queue shows it."""

    record: Record
    token: str  # what the editor saw: a decision on a changed event is refused
    findings: list[Finding] = field(default_factory=list)
    duplicates: list[Record] = field(default_factory=list)
    brought: list[Record] = field(default_factory=list)  # drafts its submission made
    email: str = ""  # the submitter's (editors only)
    author: str = ""


def _calendar() -> Calendar:
    return current_app.extensions["calendar"]


def may_moderate(user: User | None) -> bool:
    """Approving publishes others' events: what editors and administrators may do."""
    return user is not None and user.can("publish") and user.can("edit_others")


def token(record: Record) -> str:
    return hashlib.sha256(repr(sorted(record.data.items())).encode()).hexdigest()[:16]


def brought_along(calendar: Calendar, event: Record) -> list[Record]:
    """The venue and organizers an event's author made with it that are not published:
    approved with it, or trashed with it when no other record links to them."""
    catalog = calendar.catalog
    linked = [*catalog.resolve("venues", event.get("venue")),
              *catalog.resolve("organizers", event.get("organizer"))]
    return [r for r in linked if r.status in ("draft", "pending")
            and r.get("author") == event.get("author")]


def _normal(title: str) -> str:
    words = _WORDS.sub(" ", title.lower()).split()
    return " ".join(w for w in words if w not in ("the", "a", "an"))


def likely_duplicates(calendar: Calendar, event: Record) -> list[Record]:
    """Other events on the same day with a similar title or at the same venue."""
    day = event.get("start_date").date()
    title = _normal(event.name)
    found = []
    for other in calendar.catalog.all("events"):
        if other.id == event.id or other.status == "trash":
            continue
        start = other.get("start_date")
        if start is None or start.date() != day:
            continue
        theirs = _normal(other.name)
        similar = title and theirs and (title in theirs or theirs in title or (
            difflib.SequenceMatcher(None, title, theirs).ratio() >= 0.75))
        same_venue = event.get("venue") and other.get("venue") == event.get("venue")
        if similar or same_venue:
            found.append(other)
    return sorted(found, key=lambda r: (r.get("start_date"), r.id))


def check_findings(calendar: Calendar, events: list[Record]) -> dict[str, list[Finding]]:
    """What `check` reports about these event files, in its words: the files are
    checked with the venues, organizers and terms they may link to."""
    tree = calendar.catalog.tree
    snap = Snapshot("pending")
    wanted = [*events, *(r for c in ("venues", "organizers", "categories", "tags")
                         for r in calendar.catalog.all(c))]
    for record in wanted:
        try:
            snap.records[record.path] = tree.read_bytes(record.path)
        except FileNotFoundError:  # removed since this version: the next view tells
            continue
    for name, attr in ((SETTINGS_FILE, "settings"), (RETIRED_IDS_FILE, "retired")):
        if tree.exists(name):
            setattr(snap, attr, tree.read_bytes(name))
    paths = {e.path for e in events}
    out: dict[str, list[Finding]] = {p: [] for p in paths}
    for finding in check_tree(snap).findings:
        if finding.path in paths:
            out[finding.path].append(finding)
    return out


def entries(calendar: Calendar) -> list[Entry]:
    pending = sorted((r for r in calendar.catalog.all("events") if r.status == "pending"),
                     key=lambda r: (r.get("start_date"), r.id))
    findings = check_findings(calendar, pending) if pending else {}
    store = submissions()
    out = []
    for record in pending:
        kept = store.get(record.id)
        author = calendar.users.get(int(record.get("author") or 0))
        out.append(Entry(record, token(record), findings.get(record.path, []),
                         likely_duplicates(calendar, record), brought_along(calendar, record),
                         kept.email if kept else "", author.name if author else ""))
    return out


def _page(status: int = 200, errors: dict[int, str] | None = None,
          reasons: dict[int, str] | None = None, general: str = "") -> Response:
    calendar = _calendar()
    edit = "admin.edit"  # the editing pages' (views.py), when the app has them
    page = render_template(
        "moderation/queue.html", title=_("Pending events"), entries=entries(calendar),
        errors=errors or {}, reasons=reasons or {}, notices=get_flashed_messages(),
        general=general,
        render_html=markup.render_html, catalog=calendar.catalog,
        edit_url=(lambda r: url_for(edit, collection="events", record_id=r.id)) if (
            edit in current_app.view_functions) else None)
    return make_response(page, status)


def _refused(status: int, title: str, message: str) -> Response:
    return make_response(render_template("admin/message.html", title=title, message=message),
                         status)


@bp.get("/")
@login_required
def queue() -> Response:
    if not may_moderate(current_user()):
        return _refused(403, _("Not allowed"), _("Only editors and administrators moderate "
                                                 "submissions."))
    return _page()


def _pending(event_id: int) -> tuple[Record | None, Response | None]:
    """The pending event a decision is about, or the page refusing the decision."""
    if not may_moderate(current_user()):
        return None, _refused(403, _("Not allowed"), _("Only editors and administrators "
                                                         "moderate submissions."))
    record = _calendar().catalog.get(event_id, "events")
    if record is None or record.status != "pending":
        return None, _page(409, general=_("Event #%(id)s is no longer pending: someone "
                                          "decided on it already, or it was removed.",
                                          id=event_id))
    return record, None


def _precondition(expected: str):
    def check(current: Record) -> None:
        if token(current) != expected:
            raise ApiError(409, "rest_conflict", _("The event changed since this page was "
                                                   "loaded; review it again below."))
    return check


@bp.post("/<int:event_id>/approve")
@login_required
def approve(event_id: int) -> Response:
    record, refusal = _pending(event_id)
    if refusal is not None:
        return refusal
    calendar, editor = _calendar(), current_user()
    changes = [(record, {"status": "publish"}),
               *((r, {"status": "publish"}) for r in brought_along(calendar, record))]
    message = f'events: approve "{record.name}" (#{record.id})'
    try:
        calendar.service.change_together(changes, editor, message,
                                         _precondition(request.form.get("token", "")))
    except ApiError as exc:
        return _page(exc.status, {event_id: service_message(exc.message)})
    _decided(calendar, record, "approved", editor, "")
    flash(_("Published “%(name)s”.", name=record.name))
    return redirect(url_for("moderation.queue"), 303)


@bp.post("/<int:event_id>/reject")
@login_required
def reject(event_id: int) -> Response:
    record, refusal = _pending(event_id)
    if refusal is not None:
        return refusal
    calendar, editor = _calendar(), current_user()
    reason = " ".join(request.form.get("reason", "").split())
    problem = (_("Give a reason: it is kept with the decision and sent to the submitter.")
               if not reason else _("At most %(limit)s characters.", limit=REASON_LIMIT)
               if len(reason) > REASON_LIMIT else "")
    if problem:
        return _page(400, {event_id: problem}, {event_id: reason[:REASON_LIMIT]})
    alone = [r for r in brought_along(calendar, record)
             if {e.id for e in calendar.catalog.linked(r.collection, r.slug)} <= {record.id}]
    changes = [(record, {"status": "trash"}), *((r, {"status": "trash"}) for r in alone)]
    message = f'events: reject "{record.name}" (#{record.id})\n\nReason: {reason}'
    try:
        calendar.service.change_together(changes, editor, message,
                                         _precondition(request.form.get("token", "")))
    except ApiError as exc:
        return _page(exc.status, {event_id: service_message(exc.message)}, {event_id: reason})
    _decided(calendar, record, "rejected", editor, reason)
    flash(_("Rejected “%(name)s”; it is in the trash.", name=record.name))
    return redirect(url_for("moderation.queue"), 303)


def _decided(calendar: Calendar, record: Record, decision: str, editor: User,
             reason: str) -> None:
    store = submissions()
    kept = store.get(record.id)
    if kept is None:  # not from the form: nobody to tell, nothing to keep
        return
    store.decide(record.id, decision, editor.name, reason)
    title = calendar.catalog.settings.get("title") or _("the calendar")
    if decision == "approved":
        subject = _("Your event was published: %(name)s", name=record.name)
        body = _("Thank you: “%(name)s” is now in %(calendar)s.", name=record.name,
                 calendar=title) + "\n"
    else:
        subject = _("Your event was not published: %(name)s", name=record.name)
        body = _("“%(name)s” was not published in %(calendar)s.\n\nThe editors' reason: "
                 "%(reason)s", name=record.name, calendar=title, reason=reason) + "\n"
    current_app.extensions["mailer"].send(notify.smtp_settings(calendar.catalog.settings),
                                          [kept.email], subject, body)


@bp.errorhandler(CSRFError)
def _csrf_failed(error: CSRFError) -> Response:
    return _refused(400, _("Form expired"), _(
        "The form was too old or not sent from this site (%(reason)s). Reload the queue and "
        "decide again.", reason=service_message(error.description)))


def install(app: Flask) -> None:
    app.register_blueprint(bp, url_prefix="/admin/pending")
