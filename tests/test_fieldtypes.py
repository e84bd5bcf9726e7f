"""Field types as classes (calendar_app/fieldtypes.py): declared options, not field
names, decide what a value may be, and a new type is one class that every reader of
the descriptions picks up."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

import pytest

from calendar_app.catalog import index, openapi
from calendar_app.editorial import schema
from calendar_app.model import fieldtypes, records
from calendar_app.model.errors import ApiError
from calendar_app.model.fieldbase import FieldType, RecordError, file_text, request_text
from calendar_app.model.fieldtypes import TYPES, Boolean, Integer, Number, String, Url
from calendar_app.model.resources import RESOURCES, Field

CONTROLS = {"text", "textarea", "number", "checkbox", "datetime-local", "select",
            "url", "email", "image", "text-list", "recurrence", "timezone", "picker",
            "picker-multiple", "term-tree", "term-list"}


class Body:
    """A request context with nothing in the calendar: no users, no media, no links."""

    updating = False

    def site_date(self, name: str, raw: str) -> dt.datetime:
        return dt.datetime.fromisoformat(raw)

    def user_exists(self, user_id: int) -> bool:
        return False

    def media_file(self, path: str) -> bool:
        return False

    def clean_slug(self, value: str) -> str:
        return value

    def term_parent(self, raw: object) -> str | None:
        return None

    def term_plan(self, target: str, raw: object) -> list:
        return []

    def link_plan(self, name: str, target: str, raw: object, single: bool) -> list:
        return []


def refused(kind: FieldType, raw: object, name: str = "x") -> dict:
    with pytest.raises(ApiError) as caught:
        kind.from_request(raw, name, Body())
    return caught.value.data["params"]


def test_every_field_holds_a_type_object_with_a_form_control() -> None:
    for resource in RESOURCES.values():
        for f in resource.fields:
            assert isinstance(f.type, FieldType), (resource.name, f.name)
            assert f.type.control in CONTROLS, (resource.name, f.name, f.type.control)


def test_a_registered_name_stands_for_the_type_without_options() -> None:
    assert Field("livestream", "url", "the event livestream URL").type == Url()
    assert all(issubclass(cls, FieldType) for cls in TYPES.values())


def test_bounds_are_declared_not_keyed_on_names() -> None:
    assert refused(Number(min=-90, max=90), "90.5") == {"x": "Invalid parameter."}
    assert Number().from_request("500", "geo_lat", Body()) == 500.0  # no bound declared
    assert RESOURCES["venues"].field("geo_lat").type == Number(min=-90, max=90)
    with pytest.raises(RecordError, match="from 1 to 5"):
        Integer(min=1, max=5).from_file(6, "n")
    assert Integer().from_file(10**15, "id") == 10**15


def test_empty_websites_and_loose_flags_are_declared() -> None:
    assert Url(keep_empty=True).from_request("", "elsewhere", Body()) == ""
    assert Url().from_request("", "website", Body()) is None
    assert Boolean(loose=True).from_request("yes", "x", Body()) is True
    assert refused(Boolean(), "yes") == {"x": "x is not of type boolean."}
    assert String(trim=True).from_request("  Jazz ", "x", Body()) == "Jazz"
    assert refused(String(trim=True), "   ") == {"x": "Invalid parameter."}


@dataclass(frozen=True)
class Phone(FieldType):
    """A type made for this test: digits, spaces and a leading +."""

    searchable = True
    control = "tel"

    def from_file(self, value: object, key: str) -> object:
        text = file_text(value, key)
        if not text.lstrip("+").replace(" ", "").isdigit():
            raise RecordError(f"{key}: {text!r} is not a phone number", key)
        return text

    def from_request(self, raw: object, name: str, ctx: fieldtypes.RequestContext) -> object:
        return request_text(raw, name) or None

    def json_schema(self) -> dict:
        return {"type": "string", "pattern": r"^\+?[0-9 ]+$"}

    def openapi(self, description: str) -> dict[str, Any]:
        return {"type": "string", "format": "tel", "description": description}


def test_a_new_type_is_one_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files, JSON Schema, /doc and search follow a field of a type they never saw."""
    events = RESOURCES["events"]
    extra = Field("box_office", Phone(), "the box office phone number")
    monkeypatch.setitem(RESOURCES, "events",
                        replace(events, fields=events.fields + (extra,), _index={}))
    raw = {"id": 1, "title": "T", "start_date": "2027-01-01 10:00",
           "end_date": "2027-01-01 11:00", "box_office": "+1 555 0100"}
    record = records.from_file("events", raw, "events/2027/t.yaml")
    assert records.to_file(record)["box_office"] == "+1 555 0100"
    with pytest.raises(RecordError, match="not a phone number"):
        records.from_file("events", {**raw, "box_office": "call us"}, "events/2027/t.yaml")
    assert schema.resource_schema(RESOURCES["events"])["properties"]["box_office"] == {
        "description": "The box office phone number", "type": "string",
        "pattern": r"^\+?[0-9 ]+$"}
    members = openapi.openapi_document("http://x/", {"per_page": 10, "start_date": "",
                                                       "end_date": ""})
    assert members["components"]["schemas"]["Event"]["properties"]["box_office"] == {
        "type": "string", "format": "tel", "description": "The box office phone number"}
    assert "box_office" in index.text_fields()["events"]
