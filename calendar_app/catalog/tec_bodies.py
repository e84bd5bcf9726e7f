"""Request bodies and parameters of the `tec/v1` namespace, checked as the plugin's
parameter types check them (spec tec-v1 §5.3, §7), then turned into the body our
service takes (`Resource.tec.body` maps each member to its field).

Checks follow the OpenAPI schema of each member: a field type says its schema and
error code (`FieldType.tec_schema`, `tec_code`); the few members the plugin declares
that are no field of ours are in `_EXTRA` below. Pure functions: no Flask.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..model import errors
from ..model.errors import ApiError
from ..model.formats import URL, valid_email
from ..model.resources import Resource

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?"
                      r"(?:Z|[+-]\d{2}(?::\d{2})?)?$")
_EVENT_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$")
_POSITIVE = {"type": "integer", "minimum": 1}
_UTC_DATE = {"type": "string", "format": "date-time", "pattern": _EVENT_DATE.pattern}

# Members the plugin declares that are no field of ours: checked, then either read here
# (the `_utc` dates, `duration`) or dropped (WordPress options without meaning here).
_EXTRA: dict[str, dict[str, Any]] = {
    "date": {"type": "string", "format": "date-time", "pattern": _RFC3339.pattern},
    "date_gmt": {"type": "string", "format": "date-time", "pattern": _RFC3339.pattern},
    "featured_media": _POSITIVE,
    "comment_status": {"type": "string", "enum": ["open", "closed"]},
    "ping_status": {"type": "string", "enum": ["open", "closed"]},
    "format": {"type": "string", "enum": ["standard", "aside", "chat", "gallery", "link",
                                          "image", "quote", "status", "video", "audio"]},
    "template": {"type": "string"},
}
_EVENT_EXTRA: dict[str, dict[str, Any]] = {
    "start_date_utc": _UTC_DATE, "end_date_utc": _UTC_DATE, "duration": _POSITIVE}
_CODES = {"uri": "tec_rest_invalid_uri_argument", "email": "tec_rest_invalid_email_argument",
          "date-time": "tec_rest_invalid_date_time_argument"}
_MESSAGES = {
    "tec_rest_invalid_positive_integer_argument": ("must be a positive integer",
                                                   "is not a positive integer"),
    "tec_rest_invalid_integer_argument": ("must be an integer", "is not an integer"),
    "tec_rest_invalid_uri_argument": ("must be a valid URL", "is not a valid URL"),
    "tec_rest_invalid_email_argument": ("must be a valid email address",
                                        "is not a valid email address"),
    "tec_rest_invalid_date_time_argument": ("must match the pattern",
                                            "does not match the pattern"),
    "tec_rest_invalid_string_argument": ("must be a string", "is not a string"),
}


class BadArgument(ValueError):
    """A value a parameter type refuses: with a code, the plugin's message and details;
    without one, the plain "Invalid parameter." of a validator answering false."""

    def __init__(self, code: str = "") -> None:
        super().__init__(code)
        self.code = code


def php_bool(value: object) -> bool:
    """PHP's `(bool)`: "", "0", 0, empty lists and null are false, any other text true
    (`"false"` included), as the plugin's boolean parameters read it."""
    if isinstance(value, str):
        return value not in ("", "0")
    return bool(value)


def int_list(value: object, single_ok: bool = True) -> list[int]:
    """`Array_Of_Type` of integers: a JSON array, `a[]=1&a[]=2` or "1,2". One value
    without a comma is refused by the plugin; `single_ok` takes it (our choice where a
    client sends one id, tec-api.md)."""
    if isinstance(value, bool) or value is None:
        raise BadArgument()
    if isinstance(value, int):
        items: list = [value]
    elif isinstance(value, str):
        if "," not in value and not single_ok:
            raise BadArgument()
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list):
        items = value
    else:
        raise BadArgument()
    out = []
    for item in items:
        if isinstance(item, bool) or not (isinstance(item, int) or isinstance(item, str)
                                          and item.isascii() and item.isdigit()
                                          and len(item) < 19):
            raise BadArgument("tec_rest_invalid_integer_argument")
        out.append(int(item))
    return out


def checked(value: object, schema: dict[str, Any]) -> object:
    """The value of a member as its schema reads it; raises BadArgument."""
    kind = schema.get("type", "string")
    if kind == "boolean":
        if isinstance(value, dict | list):
            raise BadArgument()
        return php_bool(value)
    if kind == "integer":
        if isinstance(value, bool) or not (isinstance(value, int) or isinstance(value, str)
                                           and value.isascii() and value.isdigit()
                                           and len(value) < 19) or int(value) < 1:
            raise BadArgument("tec_rest_invalid_positive_integer_argument")
        return int(value)
    if kind == "array":
        return int_list(value)
    if not isinstance(value, str):
        raise BadArgument("tec_rest_invalid_string_argument")
    if "enum" in schema:  # compared case-sensitively
        if value not in schema["enum"]:
            raise BadArgument()
        return value
    fmt = schema.get("format", "")
    pattern = schema.get("pattern")
    if pattern and not re.match(pattern, value):
        raise BadArgument(_CODES.get(fmt, "tec_rest_invalid_string_argument"))
    if fmt == "uri" and not URL.fullmatch(value):
        raise BadArgument(_CODES["uri"])
    if fmt == "email" and not valid_email(value):
        raise BadArgument(_CODES["email"])
    return value


def body_schema(resource: Resource) -> dict[str, dict[str, Any]]:
    """Every member a `tec/v1` body of this resource takes, with its schema."""
    assert resource.tec is not None
    out: dict[str, dict[str, Any]] = {}
    for member, name in resource.tec.body.items():
        field = resource.field(name)
        assert field is not None, (resource.name, name)
        out[member] = _EXTRA.get(member) or field.type.tec_schema()
    out.update({k: v for k, v in _EXTRA.items() if k not in out})
    if resource.name == "events":
        out.update(_EVENT_EXTRA)
        out["sticky"] = {"type": "boolean"}
    return out


def invalid(bad: dict[str, BadArgument]) -> ApiError:
    """WordPress's 400 for refused arguments, with the plugin's details per argument."""
    params: dict[str, str] = {}
    details: dict[str, dict] = {}
    for name, exc in bad.items():
        if not exc.code:
            params[name] = "Invalid parameter."
            continue
        must, is_not = _MESSAGES.get(exc.code, ("is invalid", "is invalid"))
        params[name] = f"Argument `{{{name}}}` {must}."
        details[name] = {"code": exc.code, "message": params[name],
                         "data": {"status": 400, "argument": name,
                                  "details": f"The argument `{{{name}}}` {is_not}."}}
    return errors.invalid(params, details or None)


def read_body(resource: Resource, raw: dict) -> dict:
    """The members of a `tec/v1` body, checked (all refusals in one 400); others dropped."""
    schema = body_schema(resource)
    values: dict = {}
    bad: dict[str, BadArgument] = {}
    for member, member_schema in schema.items():
        if member not in raw or raw[member] is None and member in ("date", "date_gmt"):
            continue
        try:
            values[member] = checked(raw[member], member_schema)
        except BadArgument as exc:
            bad[member] = exc
    if bad:
        raise invalid(bad)
    return values


def service_body(resource: Resource, values: dict) -> dict:
    """The checked members as the body `Service.create`/`update` takes."""
    assert resource.tec is not None
    body = {resource.tec.body[k]: v for k, v in values.items() if k in resource.tec.body}
    if resource.name != "events":
        return body
    for side in ("start", "end"):  # the UTC forms, when the local one is not given
        utc = values.get(f"{side}_date_utc")
        if utc and f"{side}_date" not in values:
            body[f"{side}_date"] = utc + "+00:00"
    start = values.get("start_date")
    if values.get("duration") and start and "end_date" not in body:
        end = dt.datetime.strptime(start, "%Y-%m-%d %H:%M:%S") + dt.timedelta(
            seconds=min(values["duration"], 10 * 366 * 86400))
        body["end_date"] = end.strftime("%Y-%m-%d %H:%M:%S")
    return body
