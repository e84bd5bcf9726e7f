"""Records as the app holds them, and their conversion from and to file mappings.

A record's `data` is keyed by interface field names and holds plain Python values:
datetimes are naive wall-clock times, links are slugs. The file side uses the YAML
keys and order of the resource description.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass

from . import dates, recurrence, slugs
from .resources import EVENTS, RESOURCES, STATUSES, Field, Resource, yaml_fields

# An absolute web address: what `url` fields hold, in files and in request bodies.
URL = re.compile(r"https?://[^\s/$.?#][^\s]*", re.IGNORECASE)
# An e-mail address, what `email` fields hold: an RFC 5322 dot-atom addr-spec (letters
# and digits beyond ASCII allowed, RFC 6531) with a dotted domain. Feeds write it as a
# mailto: address, so no whitespace, control character, quote, bracket or comment.
_ATOM = r"(?:[!#$%&'*+/=?^_`{|}~-]|[^\W_])+"  # alternatives disjoint: no backtracking
_LABEL = r"[^\W_]+(?:-+[^\W_]+)*"
EMAIL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})+")
# Text that cannot be stored and read back unchanged (YAML turns NEL and the Unicode
# line separators into line breaks; control characters and lone surrogates have no
# place in a calendar, and break feed.xml). The interface refuses it in any parameter,
# the loader in any value of a file.
UNSTORABLE_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029"
                             "\ud800-\udfff\ufffe\uffff]")


def valid_email(value: str) -> bool:
    """An address `EMAIL` matches, of at most 254 characters, 64 before the @."""
    return (len(value) <= 254 and EMAIL.fullmatch(value) is not None
            and len(value.rpartition("@")[0]) <= 64)


@dataclass(slots=True)
class Record:
    collection: str
    data: dict
    path: str  # relative to the content root
    # A recurring event's occurrences, worked out once per record (an unchanged file
    # keeps its Record across catalog versions, so only changed files expand again):
    # (horizon, zone name, occurrences). Set by occurrences.expanded.
    expansion: tuple | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def resource(self) -> Resource:
        return RESOURCES[self.collection]

    @property
    def id(self) -> int:
        return self.data["id"]

    @property
    def slug(self) -> str:
        return self.data["slug"]

    @property
    def status(self) -> str:
        return self.data.get("status", "publish")

    @property
    def name(self) -> str:
        return self.data.get(self.resource.title_field) or ""

    def get(self, name: str, default: object = None) -> object:
        value = self.data.get(name)
        return default if value is None else value


# Ids travel as JSON numbers: clients in JavaScript read integers exactly only up to
# 2**53 - 1. WordPress ids start at 1.
MAX_JSON_ID = 2**53 - 1
# Each occurrence of a recurring event has an id of its own (occurrences.py):
# OCCURRENCE_BASE + series id * OCCURRENCE_SLOTS + its number (below OCCURRENCE_SLOTS).
OCCURRENCE_BASE = 10**13
OCCURRENCE_SLOTS = 10_000
# The largest record id: the one whose last occurrence id is still JSON-safe. It lies far
# below OCCURRENCE_BASE, so no record id is ever an occurrence's.
MAX_ID = (MAX_JSON_ID + 1 - OCCURRENCE_BASE) // OCCURRENCE_SLOTS - 1


def valid_id(value: object) -> bool:
    """True for an integer a record may have as its id (1 to MAX_ID)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID


class RecordError(ValueError):
    """A file whose content does not make a valid record."""

    def __init__(self, message: str, key: str = "", at: str = "", code: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.at = at  # text inside the key's block the message is about
        self.code = code  # the finding's code in `check`, when not the field type's


def line_of(text: str, key: str, at: str = "") -> int:
    """1-based line of a top-level key in a file's text (0 when not found), or of the
    first line of its block holding `at`."""
    if not key:
        return 0
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    if not match:
        return 0
    line = text.count("\n", 0, match.start()) + 1
    if at:
        for number, body in enumerate(text[match.start():].split("\n"), start=line):
            if number > line and body[:1] not in (" ", "\t", "-", ""):
                break  # the next top-level key
            if at in body:
                return number
    return line


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


def _unstorable(value: object) -> str:
    """The first character of `value` (text, or text in lists and mappings) that
    UNSTORABLE_TEXT refuses, or ""."""
    if isinstance(value, str):
        found = UNSTORABLE_TEXT.search(value)
        return found.group() if found else ""
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next(filter(None, map(_unstorable, value)), "")
    return ""


def _coerce(field: Field, value: object) -> object:
    key = field.yaml_key
    kind = field.type
    bad = _unstorable(value)
    if bad:
        raise RecordError(f"{key}: character U+{ord(bad):04X} is not allowed (control "
                          "characters and line separators are refused, by the interface too)",
                          key, code="control-character")
    if kind in ("string", "text", "url", "image", "timezone", "link", "email"):
        if isinstance(value, (bool, dict | list)):
            raise RecordError(f"{key}: expected text, got {type(value).__name__}", key)
        value = str(value)
        if kind == "url" and value and not URL.fullmatch(value):
            # Pages link to it: a javascript: or relative address must not get there.
            raise RecordError(f"{key}: {value!r} is not an http:// or https:// address", key)
        if kind == "email" and value and not valid_email(value):
            # Feeds write it as a mailto: address; a line break there forged events.
            raise RecordError(f"{key}: {value!r} is not an e-mail address", key,
                              code="invalid-email")
        if kind == "timezone":
            try:
                dates.zone(value)
            except dates.DateError:
                raise RecordError(f"{key}: unknown timezone {value!r}", key) from None
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordError(f"{key}: expected a whole number, got {value!r}", key)
        if field.name == "id" and not valid_id(value):
            raise RecordError(f"{key}: {value} is not a whole number from 1 to {MAX_ID} "
                              "(larger ids belong to occurrences of recurring events)", key)
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(f"{key}: expected a number, got {value!r}", key)
        return float(value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise RecordError(f"{key}: expected true or false, got {value!r}", key)
        return value
    if kind == "datetime":
        when = _as_datetime(value, key)
        if not dates.representable(when):
            raise RecordError(f"{key}: {dates.fmt(when)} is outside the dates the calendar "
                              f"keeps ({dates.KEPT_RANGE})", key)
        return when
    if kind == "status":
        if value not in STATUSES:
            raise RecordError(f"{key}: {value!r} is not one of {', '.join(STATUSES)}", key)
        return value
    if kind == "links":
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in items):
            raise RecordError(f"{key}: expected a list of slugs", key)
        return [str(v) for v in items]
    if kind == "names":
        items = value if isinstance(value, list) else [value]
        names = [str(v).strip() for v in items
                 if isinstance(v, str | int | float) and not isinstance(v, bool)]
        if len(names) != len(items) or not all(names):
            raise RecordError(f"{key}: expected a name or a list of names", key)
        return names
    if kind == "cost":
        if isinstance(value, (bool, dict)):
            raise RecordError(f"{key}: expected text, a number or a list of them", key)
        if isinstance(value, list):
            return [str(v) for v in value]
        return str(value)
    if kind == "recurrence":
        return recurrence_block(value)
    raise AssertionError(f"unknown field type {kind}")


def recurrence_block(value: object) -> dict:
    """A `recurrence` value as a record holds it (recurrence.normalize), each field of a
    `changes` entry held to the rules of the event's own field of that name: an
    occurrence's website is an event's website. Raises RecordError."""
    try:
        block = recurrence.normalize(value)
    except recurrence.RecurrenceError as exc:
        raise RecordError(exc.message, "recurrence", exc.at) from None
    for key, change in block.get("changes", {}).items():
        for name, item in change.items():
            if name == "cancelled":
                continue
            try:
                change[name] = _coerce(EVENTS.field(name), item)
            except RecordError as exc:
                raise RecordError(f"recurrence changes {key}: {exc.message}", "recurrence",
                                  f"{name}:") from None
    return block


def from_file(collection: str, raw: dict, path: str) -> Record:
    """Validate and normalize a parsed file into a record."""
    resource = RESOURCES[collection]
    by_key = {f.yaml_key: f for f in yaml_fields(resource)}
    unknown = [k for k in raw if k not in by_key]
    if unknown:
        raise RecordError(f"unknown key {unknown[0]!r}", str(unknown[0]))
    data: dict = {}
    for key, value in raw.items():
        if value is None:
            continue
        field = by_key[key]
        data[field.name] = _coerce(field, value)
    stem = path.rsplit("/", 1)[-1].removesuffix(".yaml")
    data.setdefault("slug", stem)
    if not slugs.is_safe_slug(data["slug"]):  # slugs name files and built pages
        raise RecordError(slugs.unsafe_slug_message(data["slug"]), "slug")
    for name in ("id", resource.title_field) + resource.required_fields:
        if name not in data:
            raise RecordError(f"missing required key {resource.field(name).yaml_key!r}",
                              resource.field(name).yaml_key)
    if collection == "events" and data["end_date"] < data["start_date"]:
        raise RecordError("end_date is before start_date", "end_date")
    if "recurrence" in data:
        try:
            zone = dates.zone(data["timezone"]) if data.get("timezone") else None
            recurrence.validate(data["recurrence"], data["start_date"], zone)
        except recurrence.RecurrenceError as exc:
            raise RecordError(exc.message, "recurrence", exc.at) from None
    return Record(collection, data, path)


def to_file(record: Record) -> dict:
    """The canonical file mapping of a record: description order, no empty values."""
    out: dict = {}
    for field in yaml_fields(record.resource):
        value = record.data.get(field.name)
        if value is None or value == [] and field.type in ("links", "names"):
            continue
        if field.default is not None and value == field.default and field.name not in (
                "status",):
            continue
        if field.type == "names" and len(value) == 1:
            value = value[0]  # one name is written as it is usually typed
        out[field.yaml_key] = value
    return out


def stateprovince(data: dict) -> str:
    """The venue's region as the plugin derives it when none was given: the state for
    the US (or no country), else the province."""
    if data.get("stateprovince"):
        return data["stateprovince"]
    country = (data.get("country") or "").strip()
    if country in ("", "US", "USA", "United States") and data.get("state"):
        return data["state"]
    return data.get("province") or ""
