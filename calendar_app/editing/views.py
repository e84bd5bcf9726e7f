"""The editing pages under /admin/: lists of records, the form of one record (new,
edit, duplicate), trash and restore. Every save goes through `service.py` as the
interface's do: the same checks and messages, one commit by the signed-in user.

A form carries the version of the record it was made from (`forms.version`) and the
values it showed; a save over a newer version is refused with what changed meanwhile,
the person's input kept on the form (saving again then overwrites on purpose).
"""

from __future__ import annotations

import functools
import zoneinfo
from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)

from ..model.errors import ApiError
from ..model.findings import WARNING, Finding
from ..model.records import Record
from ..model.recurrence import WEEKDAYS
from ..model.resources import RESOURCES, Resource
from ..service import term_capability
from ..site.i18n import N_
from ..store.users import User
from ..wiring import Calendar
from . import forms, links, listing, rules, unreadable, words
from .auth import current_user, login_required
from .language import finding_text, regional, service_message, status_name
from .language import gettext as _

bp = Blueprint("admin", __name__, url_prefix="/admin")
COLLECTIONS = "events,venues,organizers,categories,tags"
# The buttons of a post's form and the status each asks for (the service lowers what
# a role may not do: a contributor's "publish" becomes pending).
ACTIONS = {"publish": "publish", "draft": "draft", "pending": "pending"}
# A likely duplicate of a venue or organizer typed in as new.
_TAKEN = {"venues": N_("A venue named “%(name)s” (#%(id)s) already exists: pick it unless "
                       "this is another one."),
          "organizers": N_("An organizer named “%(name)s” (#%(id)s) already exists: pick it "
                           "unless this is another one.")}


def calendar() -> Calendar:
    return current_app.extensions["calendar"]


def may_create(user: User, resource: Resource) -> bool:
    if resource.is_term:
        return user.can("edit") and user.can(term_capability(resource))
    return user.can("edit")


def may_change(user: User, record: Record, verb: str = "edit") -> bool:
    """As the service decides for the interface (service.may_edit and the term rights)."""
    if record.resource.is_term:
        return may_create(user, record.resource)
    return user.can(verb) and calendar().service.may_edit(user, record, verb)


@functools.cache
def zone_names() -> list[str]:
    return sorted(zoneinfo.available_timezones())


@bp.app_context_processor
def _helpers() -> dict[str, Any]:
    return {"may_change": may_change, "may_create": may_create, "RESOURCES": RESOURCES,
            "zone_names": zone_names(),
            "admin_nav": [(url_for("admin.records", collection=c), _(words.KINDS[c].plural))
                          for c in COLLECTIONS.split(",")],
            "weekday_names": list(zip(WEEKDAYS, (full for full, _short
                                                 in regional().weekdays(0)), strict=True))}


@bp.route("/")
@login_required
def home() -> Any:
    return redirect(url_for("admin.records", collection="events"), 303)


@bp.route(f"/<any({COLLECTIONS}):collection>/")
@login_required
def records(collection: str) -> Any:
    resource = RESOURCES[collection]
    user = _editor()
    page = listing.page(calendar(), resource, user, request.args, request.host_url)
    choices = [(str(r.id), "\u2014 " * depth + r.name)
               for r, depth in links.tree(calendar().catalog)]
    page.title = _(page.title)
    page.error = service_message(page.error) if page.error else ""
    broken = [unreadable.text(p) for p in unreadable.of(calendar().catalog, collection)]
    return render_template("admin/list.html", resource=resource, page=page,
                           title=page.title, category_choices=choices, unreadable=broken)


def _editor() -> User:
    user = current_user()
    assert user is not None  # login_required
    if not user.can("edit"):
        abort(403)
    return user


def _record(resource: Resource, record_id: int) -> Record:
    record = calendar().catalog.get(record_id, resource.name)
    if record is None:
        broken = unreadable.holding(calendar().catalog, resource.name, record_id)
        if broken is not None:  # its file broke: say where, not "no such record"
            abort(make_response(render_template(
                "admin/message.html", title=_("The file of this record cannot be read"),
                message=unreadable.text(broken)), 404))
        abort(404)
    return record


@bp.route(f"/<any({COLLECTIONS}):collection>/new", methods=["GET", "POST"])
@login_required
def new(collection: str) -> Any:
    resource = RESOURCES[collection]
    user = _editor()
    if not may_create(user, resource):
        abort(403)
    cal = calendar()
    start = forms.defaults(resource, cal.service.site_zone_name)
    shown = forms.shown(cal.catalog, resource, start)
    if request.method == "GET":
        return _render(resource, None, shown)
    return _save(resource, None, shown)


@bp.route(f"/<any({COLLECTIONS}):collection>/<int:record_id>/duplicate")
@login_required
def duplicate(collection: str, record_id: int) -> Any:
    resource = RESOURCES[collection]
    user = _editor()
    source = _record(resource, record_id)
    if not may_create(user, resource):
        abort(403)
    data = {k: v for k, v in source.data.items() if k not in ("slug", "status")}
    data[resource.title_field] = _("%(name)s (copy)", name=source.name)
    shown = forms.shown(calendar().catalog, resource, data)
    start = forms.shown(calendar().catalog, resource, forms.defaults(
        resource, calendar().service.site_zone_name))
    # Posted to `new`: what it started from is a new record's form, so every copied
    # value counts as typed in.
    return _render(resource, None, shown, original=start)


@bp.route(f"/<any({COLLECTIONS}):collection>/<int:record_id>/", methods=["GET", "POST"])
@login_required
def edit(collection: str, record_id: int) -> Any:
    resource = RESOURCES[collection]
    user = _editor()
    record = _record(resource, record_id)
    if not may_change(user, record):
        abort(403)
    shown = forms.shown(calendar().catalog, resource, record.data)
    if request.method == "GET":
        return _render(resource, record, shown)
    return _save(resource, record, shown)


def _render(resource: Resource, record: Record | None, values: dict[str, Any],
            status: int = 200, original: dict[str, Any] | None = None, **extra: Any) -> Any:
    cal = calendar()
    controls = forms.controls(cal.catalog, resource, values, cal.service.site_zone_name, _)
    by_field = extra.pop("by_field", {})
    for ctl in controls:
        for item in by_field.get(ctl.name, []):
            (ctl.errors if getattr(item, "severity", "error") == "error" else ctl.warnings
             ).append(finding_text(item))
    if "general" in extra:
        extra["general"] = [finding_text(m) for m in extra["general"]]
    kind = words.KINDS[resource.name]
    title = _(kind.edit, name=record.name) if record is not None else _(kind.new)
    return render_template(
        "admin/edit.html", resource=resource, record=record, controls=controls,
        title=title, version=forms.version(record) if record is not None else "",
        original=forms.encode_original(values if original is None else original),
        user=current_user(), script_words={"duplicate": _(
            "Warning: {names} already exists: pick it above unless this is another one.")},
        **extra), status


def _save(resource: Resource, record: Record | None, shown: dict[str, Any]) -> Any:
    cal, user = calendar(), current_user()
    form = request.form
    now = forms.posted(cal.catalog, resource, form)
    if record is not None and form.get(forms.VERSION) != forms.version(record):
        return _conflict(resource, record, shown, now)
    before = shown if record is not None else forms.decode_original(form.get(forms.ORIGINAL)) \
        or shown
    body = forms.body(resource, now, before)
    action = form.get("action", "publish")
    if not resource.is_term and ACTIONS.get(action) and (
            record is None or ACTIONS[action] != record.status):
        body["status"] = ACTIONS[action]
    if record is not None and record.status == "trash":
        body.pop("status", None)  # restored by its own button
    if record is not None and not body and action != "check":
        flash(_("Nothing changed: nothing was saved."))
        return redirect(url_for("admin.edit", collection=resource.name, record_id=record.id),
                        303)
    try:
        made, text, others = cal.service.preview(resource.name, body, user, record)
    except ApiError as exc:
        by_field, general = forms.api_messages(exc)
        return _render(resource, record, forms.reshown(resource, form), 400,
                       original=before, by_field=by_field, general=general)
    by_field, general = forms.check_messages(cal.catalog, made, text, others,
                                             cal.service.site_zone_name)
    _duplicate_warnings(resource, record, now, form, by_field)
    occurrences = rules.worded(rules.preview(cal, made)) if resource.name == "events" \
        else None
    blocked = forms.has_errors(by_field, general)
    if blocked or action == "check":
        return _render(resource, record, forms.reshown(resource, form),
                       400 if blocked else 200, original=before,
                       by_field=by_field, general=general,
                       occurrences=occurrences, checked=not blocked)
    return _commit(resource, record, body, now, before)


def _commit(resource: Resource, record: Record | None, body: dict, now: dict,
            before: dict) -> Any:
    cal, user = calendar(), current_user()
    expected = request.form.get(forms.VERSION)

    def unchanged(current: Record) -> None:
        if forms.version(current) != expected:
            raise ApiError(412, "rest_precondition_failed", "changed meanwhile")

    try:
        if record is None:
            saved, made = cal.service.create(resource.name, body, user)
            if not made:
                flash(_(words.KINDS[resource.name].identical))
        else:
            saved = cal.service.update(record, body, user, unchanged)
    except ApiError as exc:
        if exc.status == 412 and record is not None:
            current = cal.catalog.get(record.id) or record
            return _conflict(resource, current, forms.shown(cal.catalog, resource,
                                                             current.data), now)
        by_field, general = forms.api_messages(exc)
        return _render(resource, record, forms.reshown(resource, request.form),
                       exc.status if exc.status < 500 else 503, original=before,
                       by_field=by_field, general=general)
    if record is not None or body:
        flash(_("Saved: %(name)s (%(status)s).", name=saved.name,
                status=status_name(saved.status)))
    return redirect(url_for("admin.edit", collection=resource.name, record_id=saved.id), 303)


def _conflict(resource: Resource, current: Record, current_shown: dict[str, Any],
              now: dict[str, Any]) -> Any:
    """Someone saved the record since this form was made: keep the person's input,
    say what changed, and let a second save (now from the current version) decide."""
    before = forms.decode_original(request.form.get(forms.ORIGINAL))
    changes = [(_(label), old, new) for label, old, new
               in forms.changed_since(resource, before, current_shown)]
    # Their values where this person changed nothing, theirs where they did: saving
    # again then applies only this person's changes on top of the newer version.
    mine = forms.reshown(resource, request.form)
    merged = {**current_shown, **{k: mine[k] for k in forms.body(resource, now, before)}}
    return _render(resource, current, merged, 409,
                   original=current_shown, conflict=changes or [(_("(unknown)"), "", "")])


def _duplicate_warnings(resource: Resource, record: Record | None, now: dict, form: Any,
                        by_field: dict) -> None:
    """A likely duplicate of a venue or organizer being made: said, not refused."""
    catalog = calendar().catalog
    checks: list[tuple[str, str, str]] = []
    if resource.name in ("venues", "organizers"):
        checks.append((resource.title_field, resource.name, str(now.get(resource.title_field))))
    for name in ("venue", "organizer"):
        f = resource.field(name) if resource.name == "events" else None
        new = links.inline(form, name, f.link) if f is not None else None
        if new:
            checks.append((name, f.link, new[RESOURCES[f.link].title_field]))
    for name, collection, text in checks:
        own = record.id if record is not None and record.collection == collection else None
        for other in links.likely_duplicates(catalog, collection, text, own):
            by_field.setdefault(name, []).append(Finding(
                "", 0, 0, WARNING, "likely-duplicate",
                _(_TAKEN[collection], name=other.name, id=other.id)))


@bp.route(f"/<any({COLLECTIONS}):collection>/<int:record_id>/<any(trash,restore):verb>",
          methods=["POST"])
@login_required
def trash(collection: str, record_id: int, verb: str) -> Any:
    resource = RESOURCES[collection]
    user = _editor()
    record = _record(resource, record_id)
    if not may_change(user, record, "delete" if verb == "trash" else "edit"):
        abort(403)
    service = calendar().service
    try:
        if verb == "trash":
            done = service.delete(record, user)
            flash(_("Trashed: %(name)s.", name=record.name) if resource.trashable
                  else _("Deleted: %(name)s.", name=record.name))
        elif record.status != "trash":
            flash(_("Not done: %(name)s is not in the trash.", name=record.name))
        else:
            done = service.update(record, {"status": "draft"}, user)
            flash(_("Restored as a draft: %(name)s.", name=done.name))
    except ApiError as exc:
        flash(_("Not done: %(reason)s", reason=service_message(exc.message)))
    return redirect(url_for("admin.records", collection=collection), 303)


@bp.errorhandler(403)
def _forbidden(_exc: Exception) -> Any:
    return render_template("admin/message.html", title=_("Not allowed"),
                           message=_("Your role may not do this here.")), 403


@bp.errorhandler(404)
def _missing(_exc: Exception) -> Any:
    return render_template("admin/message.html", title=_("Not found"),
                           message=_("There is no such record (it may have been removed).")), 404
