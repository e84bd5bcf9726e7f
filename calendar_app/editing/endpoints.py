"""The small JSON endpoints the editing pages' script calls (every page works without
them): picker search, likely duplicates, and the rule builder's preview of dates.

- `GET /admin/api/<venues|organizers>/search?q=` -> `[{"id", "name", "text", "city"}]`,
  at most 10, names matching every typed word's prefix, what the user may read.
- `GET /admin/api/<venues|organizers>/duplicates?name=` -> the same shape.
- `POST /admin/api/events/preview` (the event form, its CSRF token included) ->
  `{"ok": true, "preview": {...}}` (rules.preview) or `{"ok": false, "errors": {field:
  [message]}}`, 200 either way: a preview that finds problems is an answer.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, jsonify, request

from ..catalog.policy import may_read
from ..model.errors import ApiError
from ..model.formats import digits
from ..model.records import Record
from ..model.resources import RESOURCES
from . import forms, links, rules
from .auth import current_user, login_required
from .language import service_message

bp = Blueprint("admin_api", __name__, url_prefix="/admin/api")


def _item(record: Record) -> dict[str, Any]:
    return {"id": record.id, "name": record.name, "text": links.pick_text(record),
            "city": str(record.get("city") or "")}


def _user():
    user = current_user()
    if user is None or not user.can("edit"):
        abort(403)
    return user


@bp.route("/<any(venues,organizers):collection>/search")
@login_required
def search(collection: str) -> Any:
    user = _user()
    catalog = current_app.extensions["calendar"].catalog
    found = links.search(catalog, collection, str(request.args.get("q", ""))[:200],
                         lambda r: may_read(user, r))
    return jsonify([_item(r) for r in found])


@bp.route("/<any(venues,organizers):collection>/duplicates")
@login_required
def duplicates(collection: str) -> Any:
    user = _user()
    catalog = current_app.extensions["calendar"].catalog
    found = links.likely_duplicates(catalog, collection,
                                    str(request.args.get("name", ""))[:200])
    return jsonify([_item(r) for r in found if may_read(user, r)])


@bp.route("/events/preview", methods=["POST"])
@login_required
def preview() -> Any:
    user = _user()
    cal = current_app.extensions["calendar"]
    resource = RESOURCES["events"]
    record = None
    record_id = str(request.form.get("_id", ""))
    if digits(record_id):
        record = cal.catalog.get(int(record_id), "events")
    now = forms.posted(cal.catalog, resource, request.form)
    before = forms.shown(cal.catalog, resource, record.data if record else forms.defaults(
        resource, cal.service.site_zone_name))
    body = forms.body(resource, now, before)
    try:
        made, _text, _others = cal.service.preview("events", body, user, record)
    except ApiError as exc:
        by_field, general = forms.api_messages(exc)
        return jsonify({"ok": False, "general": [service_message(m) for m in general],
                        "errors": {k: [service_message(m) for m in v] for k, v in by_field.items()}})
    return jsonify({"ok": True, "preview": rules.worded(rules.preview(cal, made))})
