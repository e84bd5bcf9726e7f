"""JSON Schemas (draft-07, what yaml-language-server understands best) generated from
the resource descriptions, one per collection, so editors get completion, hover text
and validation while typing."""

from __future__ import annotations

import json
from pathlib import Path

from ..model.resources import RESOURCES, Field, Resource, yaml_fields
from ..model.settings import DEFAULT_SETTINGS, PERFORMER_TYPES, WEEKDAY_NAMES

DRAFT = "http://json-schema.org/draft-07/schema#"


def field_schema(f: Field) -> dict:
    out = f.type.json_schema()
    description = f.type.json_description(f.description)
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
    props["week_start"] = {"enum": ["", *WEEKDAY_NAMES], "default": ""}
    props["multiday_cutoff"] = {"type": "string", "pattern": "^(0?[0-9]|1[01]):[0-5][0-9]$",
                                "default": "00:00"}
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
