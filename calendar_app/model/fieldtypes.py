"""Field types: one class per kind of value a record field holds.

Each class says in one place how a value is read from a file (`from_file`), read from
a request body with the plugin's messages (`from_request`), written to a file
(`to_file`), described for editors in JSON Schema (`json_schema`) and in `/doc`
(`openapi`, `wp_argument`), whether it is text for `check` and words for search, and
which form control edits it (`control`). A field declares its type in resources.py
with its options (`Integer(min=1)`, `Url(keep_empty=True)`); `TYPES` names each type
once, so `Field(..., "url", ...)` also works for a type without options.

Adding a type: a class here and its entry in `TYPES`, then its use in resources.py.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from . import dates, errors, hints, recurrence, rule_errors, rule_form
from .fieldbase import (
    INVALID,
    RESOURCES,
    STRING_ITEMS,
    FieldType,
    FormData,
    LinkTarget,
    RecordError,
    RequestContext,
    file_text,
    request_text,
)
from .formats import DATE_PATTERN, OFFSET_PATTERN, URL, digits, parse_bool, truthy, valid_email
from .linktypes import Link, Links

_MEDIA = re.compile(r"media/[A-Za-z0-9._/-]+")
TEC_DATE_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"


def _resource(name: str) -> LinkTarget:
    return RESOURCES[name]


@dataclass(frozen=True)
class String(FieldType):
    """One line of text; sent empty, an update stores "" and a create nothing.
    `trim`: surrounding space is dropped and empty is refused (the names of records).
    `keep_empty`: sent empty, a create stores "" too. `searchable`: false for technical
    values nobody searches."""

    trim: bool = False
    keep_empty: bool = False
    searchable: bool = True
    is_text = True

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if self.trim:
            value = value.strip()
            if not value:
                raise errors.invalid({name: INVALID})
        if self.keep_empty or value:
            return value
        return "" if ctx.updating else None

    def json_schema(self) -> dict:
        # from_file takes numbers for text too (zip: 92501); check warns when it matters.
        return {"type": ["string", "number"]}


@dataclass(frozen=True)
class Slug(String):
    """The record's slug: cleaned as WordPress does, unique among its collection."""

    searchable: bool = False

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name).strip()
        if not value:
            raise errors.invalid({name: INVALID})
        return ctx.clean_slug(value)


@dataclass(frozen=True)
class Text(FieldType):
    """Markdown or HTML; sent, it must say something."""

    searchable = True
    control = "textarea"
    is_text = True

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if not value.strip():
            raise errors.invalid({name: INVALID})
        return value

    def json_schema(self) -> dict:
        return {"type": ["string", "number"]}


@dataclass(frozen=True)
class Integer(FieldType):
    """A whole number from `min` (else 0) to `max`; `why` says why the bounds.
    `user_id`: the id of a user of the calendar (unknown ones are refused)."""

    min: int | None = None
    max: int | None = None
    why: str = ""
    user_id: bool = False
    control = "number"
    arg_type = "integer"
    tec_code = "tec_rest_invalid_positive_integer_argument"
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "integer", "minimum": 1}

    def _bounded(self, value: int) -> bool:
        return ((self.min is None or value >= self.min)
                and (self.max is None or value <= self.max))

    def from_file(self, value: object, key: str) -> object:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordError(f"{key}: expected a whole number, got {value!r}", key)
        if not self._bounded(value):
            raise RecordError(f"{key}: {value} is not a whole number from {self.min} to "
                              f"{self.max}" + (f" ({self.why})" if self.why else ""), key)
        return value

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if isinstance(raw, bool) or not (isinstance(raw, int) or
                                         isinstance(raw, str) and digits(raw)):
            raise errors.wrong_type(name, "integer")
        value = int(raw)
        if self.user_id and not ctx.user_exists(value) or not self._bounded(value):
            raise errors.invalid({name: INVALID})
        return value

    def form_attrs(self, value: object = None) -> dict[str, str]:
        return {k: str(v) for k, v in (("min", self.min), ("max", self.max)) if v is not None}

    def json_schema(self) -> dict:
        return {"type": "integer", "minimum": self.min or 0}


@dataclass(frozen=True)
class Number(FieldType):
    """A decimal number; a request value must lie within `min`..`max`. Files are read
    as written, as they always were (a bound there would drop a venue from the site)."""

    min: float | None = None
    max: float | None = None
    control = "number"
    arg_type = "number"

    def from_file(self, value: object, key: str) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(f"{key}: expected a number, got {value!r}", key)
        return float(value)

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        try:
            number = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise errors.wrong_type(name, "number") from None
        if not ((self.min is None or number >= self.min)
                and (self.max is None or number <= self.max)):
            raise errors.invalid({name: INVALID})
        return number

    def form_attrs(self, value: object = None) -> dict[str, str]:
        bounds = (("min", self.min), ("max", self.max))
        return {"step": "any", **{k: f"{v:g}" for k, v in bounds if v is not None}}

    def json_schema(self) -> dict:
        return {"type": "number"}

    def openapi(self, description: str) -> dict[str, Any]:
        return {"type": "number", "format": "double", "description": description}


@dataclass(frozen=True)
class Boolean(FieldType):
    """true or false. `loose`: a request may send any text flag ("yes", "on"), read as
    the plugin reads the venue map flags."""

    loose: bool = False
    control = "checkbox"
    arg_type = "boolean"

    def from_file(self, value: object, key: str) -> object:
        if not isinstance(value, bool):
            raise RecordError(f"{key}: expected true or false, got {value!r}", key)
        return value

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if self.loose:
            return truthy(raw)
        value = parse_bool(raw)
        if value is None:
            raise errors.wrong_type(name, "boolean")
        return value

    def json_schema(self) -> dict:
        return {"type": "boolean"}


@dataclass(frozen=True)
class DateTime(FieldType):
    """A wall-clock date and time. `site_zone`: a request value is read in the site's
    time zone at once; else it is kept as text for the resource's own rules (event
    dates are read in the event's zone, once the body's timezone is known)."""

    site_zone: bool = False
    control = "datetime-local"
    finding = "invalid-date"
    # `tec/v1` event bodies take local wall time only: no `T`, no zone.
    tec_code = "tec_rest_invalid_date_time_argument"
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "string", "format": "date-time", "pattern": TEC_DATE_PATTERN}

    def from_file(self, value: object, key: str) -> object:
        when = _as_datetime(value, key)
        if not dates.representable(when):
            raise RecordError(f"{key}: {dates.fmt(when)} is outside the dates the calendar "
                              f"keeps ({dates.KEPT_RANGE})", key)
        return when

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        return ctx.site_date(name, value) if self.site_zone else value

    def json_schema(self) -> dict:
        return {"type": "string", "pattern": DATE_PATTERN, "examples": ["2027-03-05 19:30:00"]}


def _as_datetime(value: object, key: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None, microsecond=0) if value.tzinfo is None else (
            value.astimezone(dt.UTC).replace(tzinfo=None, microsecond=0))
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        parsed = dates.parse_file_time(value)
        if parsed is not None:
            return parsed
    raise RecordError(f"{key}: {value!r} is not a date like 2027-03-05 19:30:00", key)


@dataclass(frozen=True)
class Choice(FieldType):
    """One of `values`. `write_default`: files say it even when it is the default (a
    record's status: whether it is published shows in its file). `labels`: what pages
    and feeds call each value, in the order of `values` (else the value itself)."""

    values: tuple[str, ...]
    write_default: bool = False
    labels: tuple[str, ...] = ()
    control = "select"

    def tec_schema(self) -> dict[str, Any]:  # `tec/v1` reaches the trash by DELETE only
        return {"type": "string", "enum": [v for v in self.values if v != "trash"]}

    def label(self, value: str) -> str:
        return dict(zip(self.values, self.labels)).get(value, value)

    def from_file(self, value: object, key: str) -> object:
        if value not in self.values:
            # British "cancelled" for the plugin's "canceled", and other near misses.
            close = difflib.get_close_matches(str(value), self.values, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RecordError(f"{key}: {value!r} is not one of {', '.join(self.values)}"
                              f"{hint}", key)
        return value

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if value == "" and not self.write_default:
            return None  # an optional choice sent empty is cleared
        if value not in self.values:
            raise errors.invalid({name: INVALID})
        return value

    def json_schema(self) -> dict:
        return {"enum": list(self.values)}

    def form_options(self) -> tuple[str, ...]:
        # An optional choice offers "not set" first, so a form saved untouched sets none.
        return self.values if self.write_default else ("", *self.values)


@dataclass(frozen=True)
class Timezone(FieldType):
    """An IANA time zone name or a UTC offset (`UTC+2`); sent empty, it is cleared."""

    control = "timezone"  # a text input offering the zone names (a datalist)
    finding = "unknown-timezone"

    def from_file(self, value: object, key: str) -> object:
        text = file_text(value, key)
        try:
            dates.zone(text)
        except dates.DateError:
            meant = hints.zone_meant(text)
            hint = f" (did you mean {meant!r}?)" if meant else ""
            raise RecordError(f"{key}: unknown timezone {text!r}{hint}", key) from None
        return text

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if not value:
            return None
        try:
            dates.zone(value)
        except dates.DateError:
            raise errors.invalid({name: INVALID}) from None
        return value

    def json_schema(self) -> dict:
        return {"anyOf": [{"enum": ["UTC", *sorted(zoneinfo.available_timezones() - {"UTC"})]},
                          {"type": "string", "pattern": OFFSET_PATTERN}]}


@dataclass(frozen=True)
class Url(FieldType):
    """An http:// or https:// address (pages link to it: never javascript: or relative).
    Sent empty, it is cleared; `keep_empty`: kept as "", as the plugin keeps a website."""

    keep_empty: bool = False
    control = "url"
    is_text = True
    tec_code = "tec_rest_invalid_uri_argument"
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "string", "format": "uri"}

    def from_file(self, value: object, key: str) -> object:
        text = file_text(value, key)
        if text and not URL.fullmatch(text):
            raise RecordError(f"{key}: {text!r} is not an http:// or https:// address", key)
        return text

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if value and not URL.fullmatch(value):
            raise errors.invalid({name: INVALID})
        return value if value or self.keep_empty else None

    def json_schema(self) -> dict:
        return {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/$.?#]\\S*$"}


@dataclass(frozen=True)
class Email(FieldType):
    """An e-mail address (`valid_email`): feeds write it as a mailto: address, where a
    line break forged events."""

    searchable = True
    control = "email"
    tec_code = "tec_rest_invalid_email_argument"
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "string", "format": "email"}

    def from_file(self, value: object, key: str) -> object:
        text = file_text(value, key)
        if text and not valid_email(text):
            raise RecordError(f"{key}: {text!r} is not an e-mail address", key,
                              code="invalid-email")
        return text

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if value and not valid_email(value):
            raise errors.invalid({name: INVALID})
        return value or ("" if ctx.updating else None)

    def json_schema(self) -> dict:
        return {"type": "string", "format": "email"}


@dataclass(frozen=True)
class Image(FieldType):
    """An image: an absolute URL or the path of a file under media/ in the tree."""

    control = "image"
    is_text = True

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        value = request_text(raw, name)
        if not value:
            return None
        if URL.fullmatch(value):
            return value
        path = value.lstrip("/")
        if _MEDIA.fullmatch(path) and ctx.media_file(path):
            return path
        raise errors.invalid({name: INVALID})

    def openapi(self, description: str) -> dict[str, Any]:
        return {"type": "object", "description": description,
                "$ref": "#/components/schemas/Image"}


@dataclass(frozen=True)
class Names(FieldType):
    """A name or a list of names: a list in records, one name alone in files."""

    control = "text-list"
    arg_type = "array"
    arg_items = STRING_ITEMS

    def from_file(self, value: object, key: str) -> object:
        items = value if isinstance(value, list) else [value]
        names = [str(v).strip() for v in items
                 if isinstance(v, str | int | float) and not isinstance(v, bool)]
        if len(names) != len(items) or not all(names):
            raise RecordError(f"{key}: expected a name or a list of names", key)
        return names

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if raw is None or raw == "" or raw == []:
            return None  # empty clears the field
        items = raw if isinstance(raw, list) else [raw]
        if not all(isinstance(v, str) and v.strip() for v in items):
            raise errors.invalid({name: INVALID})
        return [v.strip() for v in items]

    def to_file(self, value: object) -> object:
        if isinstance(value, list) and len(value) == 1:
            return value[0]  # one name is written as it is usually typed
        return value or None

    def json_schema(self) -> dict:
        name = {"type": "string", "minLength": 1}
        return {"anyOf": [name, {"type": "array", "items": name}]}

    def openapi(self, description: str) -> dict[str, Any]:
        return {"type": "array", "description": description, "items": dict(STRING_ITEMS)}


@dataclass(frozen=True)
class Cost(FieldType):
    """An event's cost: text ("10-20", "Free"), a number or a list of them."""

    arg_type = ""  # reads as a string ("$10")

    def from_file(self, value: object, key: str) -> object:
        if isinstance(value, (bool, dict)):
            raise RecordError(f"{key}: expected text, a number or a list of them", key)
        if isinstance(value, list):
            return [str(v) for v in value]
        return str(value)

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if raw is None or raw == "" or raw == []:
            return None
        if isinstance(raw, (bool, dict)):
            raise errors.invalid({name: INVALID})
        if isinstance(raw, list):
            if not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                       for v in raw):
                raise errors.invalid({name: INVALID})
            return [_number_text(v) for v in raw]
        return _number_text(raw)  # type: ignore[arg-type]

    def json_schema(self) -> dict:
        scalar = {"type": ["string", "number"]}
        return {"anyOf": [scalar, {"type": "array", "items": scalar}]}


def _number_text(value: str | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class Recurrence(FieldType):
    """An event's `recurrence:` block (recurrence.py, docs/recurring-events.md): RRULE
    text or the block as an object; null or "" makes the event a single one again."""

    control = "recurrence"
    finding = "invalid-recurrence"
    arg_type = ""  # an RRULE text or the file's block as an object

    def from_file(self, value: object, key: str) -> object:
        """The block (recurrence.normalize), each field of a `changes` entry held to the
        rules of the event's own field of that name: an occurrence's website is an
        event's website."""
        try:
            block = recurrence.normalize(value)
        except recurrence.RecurrenceError as exc:
            raise RecordError(exc.message, key, exc.at) from None
        events = _resource("events")
        for when, change in block.get("changes", {}).items():
            for name, item in change.items():
                if name == "cancelled":
                    continue
                field = events.field(name)
                try:
                    change[name] = field.type.from_file(item, field.yaml_key)
                except RecordError as exc:
                    raise RecordError(rule_errors.MESSAGES["change-field"] % {
                        "when": when, "message": exc.message}, key, f"{name}:") from None
        return block

    def form_value(self, value: object) -> Any:
        return rule_form.show(value)  # type: ignore[arg-type]

    def from_form(self, form: FormData, name: str) -> object:
        return rule_form.read(form, name)

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if raw is None or raw == "":
            return None
        if not isinstance(raw, str | dict):
            raise errors.wrong_type(name, "object")
        try:
            return self.from_file(raw, name)
        except RecordError as exc:
            raise errors.invalid({name: exc.message}) from None

    def json_schema(self) -> dict:
        when = {"type": "string", "pattern": DATE_PATTERN}
        whens = {"anyOf": [when, {"type": "array", "items": when}]}
        rule = {"type": "string", "pattern": r"^(RRULE:)?FREQ=", "examples": [
            "FREQ=WEEKLY;BYDAY=TU;COUNT=10"]}
        day = {"anyOf": [{"type": "string", "examples": ["tuesday", "second tuesday",
                                                          "last friday"]},
                         {"type": "integer", "minimum": -31, "maximum": 31}]}
        change = {"type": "object", "additionalProperties": False, "minProperties": 1,
                  "properties": {name: ({"type": "boolean"} if name == "cancelled" else when
                                        if name in ("start_date", "end_date") else
                                        {"type": ["string", "number"]})
                                 for name in recurrence.CHANGE_KEYS}}
        block = {"type": "object", "additionalProperties": False, "properties": {
            "rrule": {"anyOf": [rule, {"type": "array", "items": rule, "minItems": 1}],
                      "description": "RFC 5545 RRULE text, one or a list"},
            "every": {"type": "string", "pattern": r"^(\d+ +)?(day|week|month|year)s?$",
                      "examples": ["week", "2 weeks", "month"]},
            "on": {"anyOf": [day, {"type": "array", "items": day}]},
            "until": when, "count": {"type": "integer", "minimum": 1},
            "rdate": whens, "exdate": whens,
            "changes": {"type": "object", "description": "original start -> changed fields",
                        "additionalProperties": change},
        }}
        return {"anyOf": [block, rule]}


# The registered name of each type: what `Field(..., "url", ...)` means.
TYPES: dict[str, type[FieldType]] = {
    "string": String, "slug": Slug, "text": Text, "integer": Integer, "number": Number,
    "boolean": Boolean, "datetime": DateTime, "choice": Choice, "timezone": Timezone,
    "url": Url, "email": Email, "image": Image, "link": Link, "links": Links,
    "names": Names, "cost": Cost, "recurrence": Recurrence,
}
