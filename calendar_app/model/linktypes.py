"""The link field types: a record's links to others (its venue, its organizers, its
terms; a term's parent), by slug in files and by id in requests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .fieldbase import (
    INT_ITEMS,
    RESOURCES,
    FieldType,
    LinkTarget,
    RecordError,
    RequestContext,
)


def _resource(name: str) -> LinkTarget:
    return RESOURCES[name]


@dataclass(frozen=True)
class Link(FieldType):
    """The slug of one record of `target` in files; its id (or, for a venue, an inline
    body) in requests. A term's link is its parent."""

    target: str
    tec_code = "tec_rest_invalid_integer_argument"  # `tec/v1` links posts by lists of ids
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "array", "items": {"type": "integer"}}

    @property
    def control(self) -> str:  # type: ignore[override]  # a venue is searched for
        return "select" if _resource(self.target).is_term else "picker"

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if _resource(self.target).is_term:
            return ctx.term_parent(raw)
        return ctx.link_plan(name, self.target, raw, single=True)

    def json_description(self, description: str) -> str:
        return f"Slug of the {_resource(self.target).singular}"  # files link by slug

    def openapi(self, description: str) -> dict[str, Any]:
        return {"type": "object", "description": description,
                "$ref": f"#/components/schemas/{_resource(self.target).schema_name}"}

    def wp_argument(self) -> tuple[str, Mapping[str, str] | None]:
        # A parent term is one id; a venue may be an id, a list or an object, which the
        # plugin declares as a typeless list of ids.
        return ("integer", None) if _resource(self.target).is_term else ("", INT_ITEMS)


@dataclass(frozen=True)
class Links(FieldType):
    """Slugs of records of `target` in files (one alone may be written bare); ids,
    terms' names or inline bodies in requests."""

    target: str
    arg_type = ""
    arg_items = INT_ITEMS
    tec_code = "tec_rest_invalid_integer_argument"
    tec_type: ClassVar[Mapping[str, Any]] = {"type": "array", "items": {"type": "integer"}}

    @property
    def control(self) -> str:  # type: ignore[override]
        target = _resource(self.target)
        if target.is_term:
            return "term-tree" if target.field("parent") else "term-list"
        return "picker-multiple"

    def from_file(self, value: object, key: str) -> object:
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in items):
            raise RecordError(f"{key}: expected a list of slugs", key)
        return [str(v) for v in items]

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        if _resource(self.target).is_term:
            return ctx.term_plan(self.target, raw)
        return ctx.link_plan(name, self.target, raw, single=False)

    def to_file(self, value: object) -> object:
        return value or None

    def json_schema(self) -> dict:
        single = _resource(self.target).singular
        return {"anyOf": [
            {"type": "array", "items": {"type": "string", "description": f"{single} slug"}},
            {"type": "string", "description": f"a single {single} slug"},
        ]}

    def json_description(self, description: str) -> str:
        return f"Slugs of the {self.target}"

    def openapi(self, description: str) -> dict[str, Any]:
        ref = {"$ref": f"#/components/schemas/{_resource(self.target).schema_name}"}
        return {"type": "array", "description": description, "items": ref}
