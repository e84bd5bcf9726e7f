"""JSON Schemas (draft-07, what yaml-language-server understands best) generated from
the resource descriptions, one per collection, so editors get completion, hover text
and validation while typing."""

from __future__ import annotations

import json
import zoneinfo
from pathlib import Path

from .. import recurrence
from ..resources import RESOURCES, STATUSES, Field, Resource, yaml_fields
from ..settings import DEFAULT_SETTINGS, PERFORMER_TYPES

DRAFT = "http://json-schema.org/draft-07/schema#"
# What records.from_file accepts for dates: seconds and the time may be left out.
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$"
OFFSET_PATTERN = r"^UTC[+-]\d{1,2}([.:]\d{1,2})?$"


def _slug_list(target: str) -> dict:
    single = RESOURCES[target].singular
    return {"anyOf": [
        {"type": "array", "items": {"type": "string", "description": f"{single} slug"}},
        {"type": "string", "description": f"a single {single} slug"},
    ]}


def _recurrence_schema() -> dict:
    """The `recurrence:` block (calendar_app/recurrence.py)."""
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


def field_schema(f: Field) -> dict:
    kind = f.type
    if kind in ("string", "text"):
        # from_file takes numbers for text too (zip: 92501); check warns when it matters.
        out: dict = {"type": ["string", "number"]}
    elif kind == "url":
        out = {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/$.?#]\\S*$"}
    elif kind == "email":
        out = {"type": "string", "format": "email"}
    elif kind == "image":
        out = {"type": "string"}
    elif kind == "integer":
        out = {"type": "integer", "minimum": 1 if f.name == "id" else 0}
    elif kind == "number":
        out = {"type": "number"}
    elif kind == "boolean":
        out = {"type": "boolean"}
    elif kind == "datetime":
        out = {"type": "string", "pattern": DATE_PATTERN,
               "examples": ["2027-03-05 19:30:00"]}
    elif kind == "status":
        out = {"enum": list(STATUSES)}
    elif kind == "timezone":
        out = {"anyOf": [{"enum": ["UTC", *sorted(zoneinfo.available_timezones() - {"UTC"})]},
                         {"type": "string", "pattern": OFFSET_PATTERN}]}
    elif kind == "link":
        out = {"type": "string"}
    elif kind == "links":
        out = _slug_list(f.link)
    elif kind == "names":
        name = {"type": "string", "minLength": 1}
        out = {"anyOf": [name, {"type": "array", "items": name}]}
    elif kind == "cost":
        scalar = {"type": ["string", "number"]}
        out = {"anyOf": [scalar, {"type": "array", "items": scalar}]}
    elif kind == "recurrence":
        out = _recurrence_schema()
    else:
        raise AssertionError(f"no schema for field type {kind}")
    description = f.description[:1].upper() + f.description[1:]
    if f.link:  # the interface speaks ids; files link by slug
        target = RESOURCES[f.link]
        description = (f"Slug of the {target.singular}" if kind == "link"
                       else f"Slugs of the {target.name}")
    if f.default is not None:
        out["default"] = f.default
        description += f"; default {json.dumps(f.default)}"
    return {"description": description, **out}


def resource_schema(resource: Resource) -> dict:
    fields = yaml_fields(resource)
    required = ["id", resource.field(resource.title_field).yaml_key] + [
        resource.field(n).yaml_key for n in resource.required_fields]
    return {
        "$schema": DRAFT,
        "$id": f"{resource.name}.schema.json",
        "title": f"{resource.singular} record",
        "description": f"One {resource.singular} of the calendar: "
                       f"content/{resource.name}/<slug>.yaml",
        "type": "object",
        "properties": {f.yaml_key: field_schema(f) for f in fields},
        "required": list(dict.fromkeys(required)),
        "additionalProperties": False,
    }


def calendar_schema() -> dict:
    types = {bool: "boolean", int: "integer", str: "string"}
    props = {k: {"type": types[type(v)], "default": v} for k, v in DEFAULT_SETTINGS.items()}
    props["currency_position"] = {"enum": ["prefix", "postfix"], "default": "prefix"}
    props["performer_type"] = {"enum": list(PERFORMER_TYPES), "default": "Person"}
    props["timezone"] = dict(resource_schema(RESOURCES["events"])["properties"]["timezone"],
                             default="UTC")
    return {"$schema": DRAFT, "$id": "calendar.schema.json", "title": "calendar settings",
            "type": "object", "properties": props, "additionalProperties": False}


def schemas() -> dict[str, dict]:
    """File name -> schema."""
    out = {f"{name}.schema.json": resource_schema(r) for name, r in RESOURCES.items()}
    out["calendar.schema.json"] = calendar_schema()
    return out


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = folder / name
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")  # unchanged files keep their mtime
        written.append(path)
    return written
