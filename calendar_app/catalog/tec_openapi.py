"""`GET /tec/v1/docs` (OpenAPI 3.0.4) and the `tec/v1` namespace index, generated from
the resource descriptions: each resource's `tec` view names its schemas and operations,
its request body comes from the field types (`tec_bodies.body_schema`)."""

from __future__ import annotations

from typing import Any

from ..model.resources import RESOURCES, Resource
from . import tec_lists
from .tec_bodies import body_schema

NAMESPACE = "tec/v1"
_INT = {"type": "integer"}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_RENDERED = {"type": "object", "properties": {"rendered": _STR}}
_PROTECTED = {"type": "object", "properties": {"rendered": _STR, "protected": _BOOL}}
_DATE = {"type": "string", "format": "date-time"}  # a filter: anything strtotime reads
# WordPress's post dates: no zone, so not RFC 3339's date-time.
_POST_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$"}
# WordPress core's post members, which every entity starts with (spec §9.1).
POST_ENTITY = {
    "id": _INT, "date": _POST_DATE, "date_gmt": _POST_DATE, "guid": _RENDERED,
    "modified": _POST_DATE, "modified_gmt": _POST_DATE, "slug": _STR, "status": _STR, "type": _STR,
    "link": {"type": "string", "format": "uri"}, "title": _RENDERED, "content": _PROTECTED,
    "excerpt": _PROTECTED, "author": _INT, "featured_media": _INT, "template": _STR}
_REF = "#/components/schemas/"
_PHP_DATE = {"$ref": _REF + "Date"}
_NULL_BOOL = {"type": "boolean", "nullable": True}
# The members each type adds (spec §9.2-9.4), in the snapshots' order.
MEMBERS: dict[str, dict[str, Any]] = {
    "events": {
        "tags": {"type": "array", "items": _INT},
        "tribe_events_cat": {"type": "array", "items": _INT},
        "class_list": {"type": "array", "items": _STR},
        "start_date": _STR, "start_date_utc": _STR, "end_date": _STR, "end_date_utc": _STR,
        "dates": {"type": "object", "properties": dict.fromkeys(
            ("start", "start_utc", "start_site", "start_display", "end", "end_utc",
             "end_site", "end_display"), _PHP_DATE)},
        "timezone": _STR, "duration": _STR,
        "multiday": {"oneOf": [_BOOL, _INT]}, "is_past": _BOOL, "is_now": _BOOL,
        "all_day": _BOOL, "starts_this_week": _NULL_BOOL, "ends_this_week": _NULL_BOOL,
        "this_week_duration": {"type": "integer", "nullable": True},
        "happens_this_week": _NULL_BOOL,
        "displays_on": {"type": "array", "items": _STR},
        "featured": _BOOL, "sticky": _BOOL, "cost": _STR,
        "organizer_names": {"type": "array", "items": _STR},
        "organizers": {"type": "array", "items": {"$ref": _REF + "Organizer"}},
        "venues": {"type": "array", "items": {"$ref": _REF + "Venue"}},
        "schedule_details": _STR, "short_schedule_details": _STR},
    "venues": dict.fromkeys(("address", "country", "city", "state_province", "state",
                             "province", "zip", "phone", "directions_link", "website"), _STR),
    "organizers": dict.fromkeys(("phone", "website", "email"), _STR),
}
_PAGING = {"page": {"type": "integer", "minimum": 1, "default": 1},
           "per_page": {"type": "integer", "minimum": 1, "maximum": tec_lists.MAX_PER_PAGE},
           "search": _STR,
           "status": {"type": "array", "items": {"type": "string",
                                                 "enum": list(tec_lists.STATUSES)},
                      "default": ["publish"]}}
_IDS = {"type": "array", "items": _INT}
LIST_PARAMS: dict[str, dict[str, Any]] = {
    "events": {**_PAGING, **dict.fromkeys(
        ("start_date", "end_date", "starts_before", "starts_after", "ends_before",
         "ends_after"), _DATE),
        "categories": _IDS, "tags": _IDS, "venue": _IDS, "organizer": _IDS,
        "featured": _BOOL, "post_parent": {"type": "integer", "minimum": 1},
        "ticketed": _BOOL,
        "orderby": {"type": "string", "enum": list(tec_lists.ORDERBY),
                    "default": "event_date"},
        "order": {"type": "string", "enum": ["ASC", "DESC"], "default": "ASC"}},
    "venues": {**_PAGING, "event": {"type": "integer", "minimum": 1}, "has_events": _BOOL,
               "only_with_upcoming": _BOOL},
}
LIST_PARAMS["organizers"] = LIST_PARAMS["venues"]


def _served() -> list[Resource]:
    return [r for r in RESOURCES.values() if r.tec is not None]


def _parameters(schemas: dict[str, Any], where: str = "query") -> list[dict]:
    return [{"name": name, "in": where, "required": where == "path", "schema": schema}
            for name, schema in schemas.items()]


def _error(description: str) -> dict:
    return {"description": description}


def _operations(resource: Resource) -> dict[str, dict]:
    """`/events` and `/events/{id}` of one resource."""
    assert resource.tec is not None
    tec = resource.tec
    ref = {"$ref": _REF + tec.schema}
    body = {"content": {"application/json": {"schema": {
        "$ref": f"{_REF}{tec.schema}_Request_Body"}}}}
    path_id = _parameters({"id": {"type": "integer", "minimum": 1}}, "path")
    read_one = {"200": {"description": f"The {resource.singular}.",
                        "content": {"application/json": {"schema": ref}}},
                "401": _error("Not allowed to read it (anonymous)."),
                "403": _error("Not allowed to read it, or no such record."),
                "404": _error("The record is in the trash.")}
    return {
        f"/{resource.name}": {
            "get": {"summary": f"List {resource.name}", "security": [],
                    "operationId": f"get{tec.plural}", "tags": [tec.plural],
                    "parameters": _parameters(LIST_PARAMS[resource.name]),
                    "responses": {"200": {"description": "A page of records; totals in the "
                                          "X-WP-Total and X-WP-TotalPages headers.",
                                          "content": {"application/json": {"schema": {
                                              "type": "array", "items": ref}}}},
                                  "400": _error("A parameter is invalid."),
                                  "404": _error("The page is past the last.")}},
            "post": {"summary": f"Create a {resource.singular}",
                     "security": [{"BasicAuth": []}], "operationId": f"create{tec.schema}",
                     "tags": [tec.plural], "requestBody": body,
                     "responses": {"201": {"description": "Created.",
                                           "content": {"application/json": {"schema": ref}}},
                                   "400": _error("A member is invalid."),
                                   "401": _error("Not logged in."),
                                   "403": _error("Not allowed.")}}},
        f"/{resource.name}/{{id}}": {
            "get": {"summary": f"Read a {resource.singular}", "security": [],
                    "operationId": f"get{tec.schema}", "tags": [tec.plural],
                    "parameters": path_id, "responses": read_one},
            "put": {"summary": f"Update a {resource.singular} (PUT or PATCH)",
                    "security": [{"BasicAuth": []}], "operationId": f"update{tec.schema}",
                    "tags": [tec.plural], "parameters": path_id, "requestBody": body,
                    "responses": {"200": read_one["200"],
                                  "400": _error("A member is invalid.")}},
            "delete": {"summary": f"Trash a {resource.singular}, or delete it with force",
                       "security": [{"BasicAuth": []}], "operationId": f"delete{tec.schema}",
                       "tags": [tec.plural],
                       "parameters": path_id + _parameters({"force": _BOOL}),
                       "responses": {"200": {"description": "Done: an empty array."},
                                     "410": _error("Already in the trash.")}}},
    }


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "TEC_Post_Entity": {"type": "object", "properties": POST_ENTITY}}
    for resource in _served():
        assert resource.tec is not None
        schemas[resource.tec.schema] = {"allOf": [
            {"$ref": _REF + "TEC_Post_Entity"},
            {"type": "object", "properties": MEMBERS[resource.name]}]}
    for resource in _served():
        assert resource.tec is not None
        schemas[f"{resource.tec.schema}_Request_Body"] = {
            "type": "object", "properties": body_schema(resource)}
    schemas["Date"] = {"type": "object", "properties": {
        "date": _STR, "timezone_type": _INT, "timezone": _STR}}
    return schemas


def document(rest_url: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    tags = []
    for resource in _served():
        assert resource.tec is not None
        paths.update(_operations(resource))
        tags.append({"name": resource.tec.plural,
                     "description": f"The {resource.name} of the calendar."})
    paths["/docs"] = {"get": {"summary": "This document", "security": [],
                              "operationId": "getOpenApiDocs", "tags": ["Common"],
                              "responses": {"200": {"description": "OpenAPI 3.0.4"}}}}
    tags.append({"name": "Common", "description": "The documentation."})
    return {
        "openapi": "3.0.4",
        "info": {"title": "The Events Calendar REST API", "version": "1.0.0",
                 "description": "The tec/v1 namespace of this calendar.",
                 "contact": {"name": "The Events Calendar",
                             "email": "support@theeventscalendar.com"}},
        "tags": tags,
        "components": {"schemas": _schemas(),
                       "securitySchemes": {"BasicAuth": {"type": "http", "scheme": "basic"}}},
        "servers": [{"url": rest_url}],
        "paths": paths,
    }


def _args(schemas: dict[str, Any]) -> dict[str, Any]:
    return {name: {**schema, "required": False} for name, schema in schemas.items()}


def routes(rest_url: str) -> dict[str, Any]:
    """The namespace's routes as WordPress lists them (index and `/wp-json/`)."""
    prefix = "/" + NAMESPACE
    out: dict[str, Any] = {prefix: {"namespace": NAMESPACE, "methods": ["GET"], "endpoints": [
        {"methods": ["GET"], "args": {"namespace": {"default": NAMESPACE, "required": False},
                                      "context": {"default": "view", "required": False}}}],
        "_links": {"self": [{"href": rest_url}]}}}
    for resource in _served():
        body = _args(body_schema(resource))
        out[f"{prefix}/{resource.name}"] = {
            "namespace": NAMESPACE, "methods": ["GET", "POST"],
            "endpoints": [{"methods": ["GET"], "args": _args(LIST_PARAMS[resource.name])},
                          {"methods": ["POST"], "args": body}],
            "_links": {"self": [{"href": f"{rest_url}/{resource.name}"}]}}
        out[f"{prefix}/{resource.name}/(?P<id>\\d+)"] = {
            "namespace": NAMESPACE, "methods": ["GET", "PUT", "PATCH", "DELETE"],
            "endpoints": [{"methods": ["GET"], "args": {"id": {"type": "integer",
                                                               "required": False}}},
                          {"methods": ["PUT", "PATCH"], "args": body},
                          {"methods": ["DELETE"], "args": {"force": {"type": "boolean",
                                                                     "required": False}}}]}
    out[prefix + "/docs"] = {"namespace": NAMESPACE, "methods": ["GET"],
                             "endpoints": [{"methods": ["GET"], "args": []}],
                             "_links": {"self": [{"href": rest_url + "/docs"}]}}
    return out


def namespace_index(rest_url: str, site_url: str) -> dict[str, Any]:
    return {"namespace": NAMESPACE, "routes": routes(rest_url),
            "_links": {"up": [{"href": site_url.rstrip("/") + "/wp-json/"}]}}
