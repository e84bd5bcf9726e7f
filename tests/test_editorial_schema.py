"""JSON Schemas from the resource descriptions validate the sample content; `new`
scaffolds valid canonical files with the next free id."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from pathlib import Path

import pytest
from conftest import SAMPLE, make_repo

from calendar_app.editorial import register
from calendar_app.editorial.schema import schemas
from calendar_app.editorial.snapshot import from_worktree
from calendar_app.model.resources import RESOURCES, yaml_fields
from calendar_app.store import yamlfile


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
          "array": list, "object": dict}


def errors(value: object, schema: dict, where: str = "") -> list[str]:
    """A small validator for the draft-07 subset the schemas use (no extra dependency)."""
    out: list[str] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(isinstance(value, _TYPES[k]) and not (
            k in ("integer", "number") and isinstance(value, bool)) for k in kinds)
        if not ok:
            return [f"{where}: {value!r} is not {kinds}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} not in enum")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"],
                                                                        value):
        out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        out.append(f"{where}: below minimum")
    if "anyOf" in schema and all(errors(value, s, where) for s in schema["anyOf"]):
        out.append(f"{where}: matches none of anyOf")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += errors(item, schema["items"], f"{where}[{i}]")
    if isinstance(value, dict) and "properties" in schema:
        out += [f"{where}: missing {k}" for k in schema.get("required", []) if k not in value]
        for key, item in value.items():
            if key in schema["properties"]:
                out += errors(item, schema["properties"][key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}: unexpected {key}")
    return out


def as_editor_sees(value: object) -> object:
    """yaml-language-server reads YAML 1.2: timestamps are plain strings there."""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [as_editor_sees(v) for v in value]
    if isinstance(value, dict):  # nested blocks (recurrence)
        return {k: as_editor_sees(v) for k, v in value.items()}
    return value


def test_sample_content_validates() -> None:
    all_schemas = schemas()
    snap = from_worktree(SAMPLE)
    for path, data in snap.records.items():
        raw = {k: as_editor_sees(v) for k, v in yamlfile.load(data).items()}
        schema = all_schemas[f"{path.split('/', 1)[0]}.schema.json"]
        assert errors(raw, schema, path) == []
    settings = {k: as_editor_sees(v) for k, v in yamlfile.load(snap.settings).items()}
    assert errors(settings, all_schemas["calendar.schema.json"]) == []


@pytest.mark.parametrize(("collection", "change", "problem"), [
    ("events", {"titel": "x"}, "unexpected titel"),
    ("events", {"status": "cancelled"}, "not in enum"),
    ("events", {"timezone": "Mars/Olympus"}, "anyOf"),
    ("events", {"start_date": "5 March"}, "does not match"),
    ("venues", {"show_map": "yes"}, "is not ['boolean']"),
])
def test_schema_rejects_what_check_rejects(collection: str, change: dict,
                                           problem: str) -> None:
    record = {"id": 1, "title": "T", "name": "N", "start_date": "2027-01-01 10:00",
              "end_date": "2027-01-01 11:00"}
    schema = schemas()[f"{collection}.schema.json"]
    record = {k: v for k, v in record.items() if k in schema["properties"]} | change
    assert any(problem in e for e in errors(record, schema))


def test_schema_follows_the_descriptions() -> None:
    for name, resource in RESOURCES.items():
        schema = schemas()[f"{name}.schema.json"]
        assert list(schema["properties"]) == [f.yaml_key for f in yaml_fields(resource)]
        assert "id" in schema["required"]


def test_schema_command_writes_files(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    assert main(["schema", "--content", str(content)]) == 0
    written = sorted(p.name for p in (content.parent / "schemas").iterdir())
    assert written == ["calendar.schema.json", "categories.schema.json",
                       "events.schema.json", "organizers.schema.json",
                       "tags.schema.json", "venues.schema.json"]
    doc = json.loads((content.parent / "schemas" / "events.schema.json").read_text())
    assert doc["properties"]["venue"]["description"] == "Slug of the venue"


def test_new_event_scaffold(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    (content / ".retired-ids").write_text("160\n")
    assert main(["new", "event", "Salsa Night", "--start", "2027-06-05 19:30",
                 "--venue", "the-blue-lantern", "--tag", "live-music",
                 "--content", str(content)]) == 0
    path = content / "events" / "2027" / "salsa-night.yaml"
    assert capsys.readouterr().out.strip() == str(path)
    text = path.read_text()
    assert text.startswith("id: 161\ntitle: Salsa Night\nslug: salsa-night\nstatus: publish\n")
    assert "start_date: 2027-06-05 19:30:00\nend_date: 2027-06-05 21:30:00\n" in text
    assert main(["fmt", str(content), "--check"]) in (0, 1)  # sample files may not be canonical
    assert "salsa-night" not in capsys.readouterr().out
    assert main(["check", str(content), "--format", "json"]) == 0


def test_new_refuses_bad_input(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    assert main(["new", "event", "X", "--start", "2027-06-05 19:30", "--venue",
                 "the-blue-lanten", "--content", str(content)]) == 2
    assert "did you mean 'the-blue-lantern'" in capsys.readouterr().err
    assert main(["new", "event", "X", "--start", "2027-03-14 02:30",
                 "--content", str(content)]) == 2
    assert "daylight saving" in capsys.readouterr().err
    assert main(["new", "tag", "Free", "--content", str(content)]) == 0
    assert capsys.readouterr().out.strip().endswith("tags/free-2.yaml")
