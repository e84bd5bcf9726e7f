"""Forms made from the resource descriptions: which fields a form shows, each field's
control (the field type's form facet, fieldbase.py), the body a posted form sends to
the service, and the messages of a refused save or of `check` put next to their field.

Plain Python on the catalog: no Flask here (views.py hands in the posted form).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from werkzeug.datastructures import MultiDict

from ..catalog.catalog import Catalog
from ..editorial.validate import check_file
from ..model import dates, rule_form
from ..model.errors import ApiError
from ..model.fieldbase import LIST_CONTROLS, NOT_SENT
from ..model.findings import ERROR, Finding
from ..model.records import Record, to_file
from ..model.resources import Field, Resource, yaml_fields
from ..site.i18n import N_
from . import links, words
from .controls import Control

# Set by the page's buttons (status) or by the interface only (author, dates of the post).
NOT_ON_FORMS = ("status", "author", "date", "date_utc")
# Keys of a posted form that are not fields.
VERSION, ORIGINAL = "_version", "_original"


def form_fields(resource: Resource) -> tuple[Field, ...]:
    return tuple(f for f in resource.writable_fields if f.name not in NOT_ON_FORMS)


def label(f: Field) -> str:
    return words.label(f.name)


def _same_words(message: str) -> str:
    return message


def shown(catalog: Catalog, resource: Resource, data: dict) -> dict[str, Any]:
    """What each control shows for these record values (links as the picker posts them)."""
    out = {}
    for f in form_fields(resource):
        value = data.get(f.name, f.default)
        out[f.name] = links.shown(catalog, f, f.type.form_value(value))
    return out


def defaults(resource: Resource, site_zone: str) -> dict:
    """The values of a new record's form."""
    data = {f.name: f.default for f in resource.fields if f.default is not None}
    if resource.name == "events":
        data["timezone"] = site_zone
    if resource.name == "venues":
        data.update(show_map=True, show_map_link=True)  # as the service makes them
    return data


def controls(catalog: Catalog, resource: Resource, values: dict[str, Any],
             site_zone: str, tr: Callable[[str], str] = _same_words) -> list[Control]:
    """The form's controls, their words given by `tr` (the editor's language)."""
    out = []
    for f in form_fields(resource):
        kind = f.type.control
        raw = values.get(f.name)
        hint = words.HINTS.get(f.name)
        ctl = Control(f.name, tr(label(f)), kind, raw, tr(hint) if hint else "",
                      f.required, f.type.form_attrs(_wall_value(kind, raw)))
        ctl.options = [(v, tr(words.OPTIONS.get(v, v))) for v in f.type.form_options()]
        links.fill(catalog, f, ctl)
        if kind == "select" and f.link:
            ctl.options[:1] = [("", tr(N_("None")))]
        if kind == "timezone":
            ctl.hint = tr(N_("An IANA zone such as Europe/Berlin; empty: the calendar's "
                             "(%(zone)s)")) % {"zone": site_zone}
        if kind == "datetime-local":
            ctl.hint = tr(N_("Wall time in the event's time zone"))
        out.append(ctl)
    return out


def _wall_value(kind: str, raw: Any) -> Any:
    if kind == "datetime-local" and isinstance(raw, str) and raw:
        try:
            return dates.parse_file_time(raw.replace("T", " "))
        except ValueError:
            return None
    return None


def reshown(resource: Resource, form: MultiDict) -> dict[str, Any]:
    """What each control shows when a posted form is drawn again (refused, checked, in
    conflict): the input as the person sent it."""
    out: dict[str, Any] = {}
    for f in form_fields(resource):
        kind = f.type.control
        if kind == "recurrence":
            out[f.name] = rule_form.reshow(form, f.name)
        elif kind == "checkbox":
            out[f.name] = bool(form.get(f.name))
        elif kind in LIST_CONTROLS and kind != "term-list":
            out[f.name] = [v for v in form.getlist(f.name) if v.strip()]
        else:
            out[f.name] = str(form.get(f.name) or "")
    return out


def posted(catalog: Catalog, resource: Resource, form: MultiDict) -> dict[str, Any]:
    """Each field's value as the posted form gives it (NOT_SENT left out)."""
    out = {}
    for f in form_fields(resource):
        value = f.type.from_form(form, f.name)
        if value is not NOT_SENT:
            out[f.name] = links.posted(catalog, f, form, value)
    return out


def body(resource: Resource, now: dict[str, Any], before: dict[str, Any]) -> dict:
    """The request body of a save: the fields whose value the person changed, so an
    unchanged field is never rewritten (and the file stays as it was written)."""
    out = {}
    for f in form_fields(resource):
        if f.name not in now:
            continue
        old = before.get(f.name)
        old_value = f.type.from_form(_as_form(f, old), f.name)
        if _same(now[f.name], old_value):
            continue
        value = now[f.name]
        if f.type.control in LIST_CONTROLS | {"text-list"} and value == []:
            value = None  # an emptied list clears the field
        out[f.name] = value
    return out


def _as_form(f: Field, value: Any) -> MultiDict:
    """A shown value as its control would post it back untouched."""
    if f.type.control == "recurrence":
        return MultiDict(_rule_pairs(f.name, value or {}))
    if isinstance(value, list):
        return MultiDict([(f.name, v) for v in value])
    if f.type.control == "checkbox":
        return MultiDict([(f.name, "true")] if value else [])
    if value in (None, "") and f.type.control == "select":
        # A select left alone posts its first option (an event without `event_status`
        # posts "scheduled"): that is no change.
        options = f.type.form_options()  # type: ignore[attr-defined]
        return MultiDict([(f.name, options[0])] if options else [])
    return MultiDict([(f.name, value)] if value is not None else [])


def _rule_pairs(name: str, parts: dict) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for key, value in parts.items():
        if key == "changes":
            for when, action, text in value:
                pairs += [(f"{name}.change_date", when), (f"{name}.change_action", action),
                          (f"{name}.change_value", text)]
        elif isinstance(value, list):
            pairs += [(f"{name}.{key}", v) for v in value]
        else:
            pairs.append((f"{name}.{key}", value))
    return pairs


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.replace("\r\n", "\n") == b.replace("\r\n", "\n")
    return a == b


# -- versions: saving over someone else's newer edit -------------------------------
def version(record: Record) -> str:
    """A fingerprint of the record as stored: a form carries the one it was made from."""
    text = json.dumps(to_file(record), sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def encode_original(values: dict[str, Any]) -> str:
    return json.dumps(values, sort_keys=True, default=str)


def decode_original(text: str | None) -> dict[str, Any]:
    """The values a form was made from (for showing what changed): trusted for nothing
    else, and anything odd gives no comparison rather than an error."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def changed_since(resource: Resource, before: dict[str, Any], current: dict[str, Any]
                  ) -> list[tuple[str, str, str]]:
    """(label, value the form was made from, value now) of each field changed meanwhile."""
    out = []
    for f in form_fields(resource):
        if f.name in before and not _same(before.get(f.name), current.get(f.name)):
            out.append((label(f), _plain(before.get(f.name)), _plain(current.get(f.name))))
    return out


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)[:300]
    return str(value if value is not None else "")


# -- messages next to their field ------------------------------------------------
def api_messages(exc: ApiError) -> tuple[dict[str, list[str]], list[str]]:
    """(messages by field name, messages of the whole form) of a refused save."""
    params = exc.data.get("params") if isinstance(exc.data, dict) else None
    if isinstance(params, dict) and params:
        by_field: dict[str, list[str]] = {}
        for name, message in params.items():
            by_field.setdefault(str(name), []).append(str(message))
        return by_field, []
    return {}, [exc.message]


def check_messages(catalog: Catalog, record: Record, text: str, made: list[Record],
                   site_zone: str) -> tuple[dict[str, list[Finding]], list[Finding]]:
    """What `check` says of the file a save would write, by field (its key's line) and
    for the whole record; the same findings and wording as the command."""
    resource = record.resource
    result = check_file(resource.name, record.path, text.encode(), site_zone)
    findings = list(result.findings) + links.dangling(record, catalog, made)
    by_key = {f.yaml_key: f.name for f in yaml_fields(resource)}
    lines = text.split("\n")
    by_field: dict[str, list[Finding]] = {}
    general: list[Finding] = []
    for finding in findings:
        at = _key_at(lines, finding.line) if finding.line > 1 else (
            finding.message.split(":", 1)[0] if finding.code == "dangling-link" else "")
        name = by_key.get(at)
        if name is None and finding.code == "no-venue":
            name = "venue"
        if name is None:
            general.append(finding)
        else:
            by_field.setdefault(name, []).append(finding)
    return by_field, general


def _key_at(lines: list[str], line: int) -> str:
    """The top-level key whose entry holds this 1-based line."""
    for text in reversed(lines[:line]):
        found = re.match(r"([A-Za-z_][\w-]*)\s*:", text)
        if found:
            return found[1]
    return ""


def has_errors(by_field: dict[str, list[Finding]], general: list[Finding]) -> bool:
    return any(f.severity == ERROR for found in (*by_field.values(), general) for f in found)
