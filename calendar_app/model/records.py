"""Records as the app holds them, and their conversion from and to file mappings.

A record's `data` is keyed by interface field names and holds plain Python values:
datetimes are naive wall-clock times, links are slugs. The file side uses the YAML
keys and order of the resource description; each field's type (fieldtypes.py) reads
its values. The id bounds of ids.py are imported from here too, where ids are used.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from . import dates, hints, recurrence, slugs
from .fieldbase import RecordError
from .resources import RESOURCES, Field, Resource, yaml_fields

# Text that cannot be stored and read back unchanged (YAML turns NEL and the Unicode
# line separators into line breaks; control characters and lone surrogates have no
# place in a calendar, and break feed.xml). The interface refuses it in any parameter,
# the loader in any value of a file.
UNSTORABLE_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029"
                             "\ud800-\udfff\ufffe\uffff]")


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
    """A file's (non-null) value of `field` as the record holds it; raises RecordError."""
    key = field.yaml_key
    bad = _unstorable(value)
    if bad:
        raise RecordError(f"{key}: character U+{ord(bad):04X} is not allowed (control "
                          "characters and line separators are refused, by the interface too)",
                          key, code="control-character")
    return field.type.from_file(value, key)


def from_file(collection: str, raw: dict, path: str) -> Record:
    """Validate and normalize a parsed file into a record."""
    resource = RESOURCES[collection]
    by_key = {f.yaml_key: f for f in yaml_fields(resource)}
    unknown = [k for k in raw if k not in by_key]
    if unknown:
        meant = hints.key_meant(str(unknown[0]), by_key)
        hint = f" (did you mean {meant!r}?)" if meant else ""
        raise RecordError(f"unknown key {unknown[0]!r}{hint}", str(unknown[0]))
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
    if collection == "events" and data.get("all_day"):
        # As the plugin stores an all-day event and as the interface writes one: from
        # the first day's 00:00:00 to the last day's 23:59:59, so a hand-written
        # `end_date: 2026-12-06 00:00:00` means the whole of 6 December.
        data["start_date"] = data["start_date"].replace(hour=0, minute=0, second=0)
        data["end_date"] = data["end_date"].replace(hour=23, minute=59, second=59)
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
        if value is None or (value == field.default and not field.type.write_default):
            continue
        value = field.type.to_file(value)
        if value is not None:
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
