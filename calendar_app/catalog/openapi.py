"""The `/doc` body: the plugin's OpenAPI document, derived from the resource descriptions
(`resources.py`) and the route arguments of discovery.py; what is not derivable (shared
schemas, response texts) is copied from the plugin's capture (`doc.json`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.resources import RESOURCES, Field, Member, Resource
from .discovery import (
    LIST_PARAMS,
    SINGLE_ARGS,
    Param,
    index_arg,
    merge_args,
    sentence,
    write_args,
)


def _prop(type_: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "description": description, **extra}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


# Schemas that have no resource description: copied from the plugin's document.
_FIXED_SCHEMAS: dict[str, dict[str, Any]] = {
    "ImageSize": {
        "width": _prop("integer", "The image width in pixels in the specified size"),
        "height": _prop("integer", "The image height in pixels in the specified size"),
        "mime-type": _prop("string", "The image mime-type"),
        "url": {"type": "string", "format": "uri",
                "description": "The link to the image in the specified size on the site"},
    },
    "CostDetails": {
        "currency_symbol": _prop("string", "The cost currency symbol"),
        # Trailing space and integer values: quirks of the plugin's document, kept.
        "currency_position ": _prop(
            "string", "The position of the currency symbol in the cost string",
            enum=["prefix", "postfix"]),
        "values": {"type": "array", "items": {"type": "integer"},
                   "description": "A sorted array of all the numeric values for the cost"},
    },
    "Term": {
        "id": _prop("integer", "The WordPress term ID"),
        "name": _prop("string", "The term name"),
        "slug": _prop("string", "The term slug"),
        "taxonomy": _prop("string", "The taxonomy the term belongs to"),
        "description": _prop("string", "The term description"),
        "parent": _prop("integer", "The term parent term if any"),
        "count": _prop("integer", "The number of posts associated with the term"),
        "url": _prop("string", "The URL to the term archive page"),
        "urls": {"type": "array", "items": {"type": "string"},
                 "description": "A list of links to the term own, archive and parent REST URL"},
    },
    "Image": {
        "url": {"type": "string", "format": "uri",
                "description": "The URL to the full size version of the image"},
        "id": _prop("integer", "The image WordPress post ID"),
        "extension": _prop("string", "The image file extension"),
        "width": _prop("integer", "The image natural width in pixels"),
        "height": _prop("integer", "The image natural height in pixels"),
        "sizes": _prop("array", "The details about each size available for the image",
                       items=_ref("ImageSize")),
    },
    "DateDetails": {
        part: _prop("integer", f"The date {part}")
        for part in ("year", "month", "day", "hour", "minutes", "seconds")
    },
}


def _member_property(m: Member) -> dict[str, Any]:
    """A representation member that is no field. The plugin prints a list of plain
    values with `items` before the description, a list of objects after it."""
    desc = sentence(m.description)
    if not m.items:
        return _prop(m.type, desc)
    if m.items[:1].isupper():  # a schema name
        return _prop(m.type, desc, items=_ref(m.items))
    return {"type": m.type, "items": {"type": m.items}, "description": desc}


def _field_property(f: Field) -> dict[str, Any]:
    """A field as a member of the read representation."""
    return f.type.openapi(sentence(f.description))


def _resource_schema(resource: Resource) -> dict[str, Any]:
    derived = {m.name: m for m in resource.derived}
    skip = resource.not_represented
    order = resource.schema_order
    names = [n for n in order if n in derived or resource.field(n)]
    names += [f.name for f in resource.fields if f.name not in order and f.name not in skip]
    props = {}
    for n in names:
        f = resource.field(n)
        props[n] = _field_property(f) if f is not None else _member_property(derived[n])
    return {"type": "object", "properties": props}


def _schemas() -> dict[str, Any]:
    out = {name: {"type": "object", "properties": props}
           for name, props in _FIXED_SCHEMAS.items()}
    for resource in RESOURCES.values():
        if not resource.is_term:  # terms share the fixed `Term` schema
            out[resource.schema_name] = _resource_schema(resource)
    return out


PARTIAL_UPDATE_NOTE = (
    "Updates are partial: fields left out of the request keep their current values."
)


def _json(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": dict(schema)}}}


def _doc_param(param: Param, where: str) -> dict[str, Any]:
    if param.items is not None:
        schema: dict[str, Any] = {"type": "array", "items": dict(param.items)}
    else:
        fallback = "number" if param.format == "double" else "string"
        schema = {"type": param.doc_type or param.type or fallback}
    out = {"in": where, "schema": schema, "description": param.description,
           "required": param.required, "name": param.name}
    if param.style:
        out["style"] = param.style
    return out


def _body_property(arg: Mapping[str, Any]) -> dict[str, Any]:
    """An index argument as a request body property (`/doc` keeps description + type)."""
    if "items" in arg:
        return {"description": arg["description"], "type": "array",
                "items": dict(arg["items"])}
    return {"description": arg["description"], "type": arg.get("type") or "string"}


def _single_ops(resource: Resource, kind: str) -> dict[str, Any]:
    w = resource.wording
    schema = _ref(resource.schema_name)
    path_params = SINGLE_ARGS[resource.name][kind]
    params = [_doc_param(p, "path") for p in path_params]
    spec_id = "ID" if w.id_kind == "post ID" else "term ID"
    the = f"The {w.noun}"

    get = {"200": {"description": f"Returns the data of the {w.noun} with the specified "
                                   f"{w.id_kind}", **_json(schema)},
           "400": {"description": f"{the} {w.id_kind} is missing."}}
    if w.readable_403:
        get["403"] = {"description": f"{the} with the specified ID is not accessible."}
    get["404"] = {"description": f"{w.article} {w.noun} with the specified {w.not_found_by} "
                                 "does not exist."}

    body = write_args(resource, create=True)
    if resource.body_with_path:
        body = merge_args({p.name: index_arg(p, {}) for p in path_params}, body)
    post: dict[str, Any] = {}
    if w.documents_update:
        updated = f"Returns the data of the updated {w.noun}"
        if w.partial_note:
            updated += ". " + PARTIAL_UPDATE_NOTE
        post["200"] = {"description": updated, **_json(schema)}
    post["201"] = {"description": f"Returns the data of the created {w.noun}", **_json(schema)}
    post["400"] = {"description": "A required parameter is missing or an input parameter is "
                                  "in the wrong format"}
    post["403"] = {"description": f"The user is not authorized to create {w.plural}"}

    a = "an" if w.article == "An" else "a"
    delete = {
        "200": {"description": f"Deletes {a} {w.noun} and returns its data", **_json(schema)},
        "400": {"description": f"{the} {w.id_kind} is missing or does not exist."},
        "403": {"description": f"The current user cannot delete the {w.noun} with the "
                               f"specified {spec_id}."},
        "410": {"description": f"{the} with the specified {spec_id} has been deleted already."},
        "500": {"description": f"{the} with the specified {spec_id} could not be deleted."},
    }
    return {
        "get": {"parameters": params, "responses": get},
        "post": {
            "parameters": params,
            "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
                "type": "object",
                "properties": {n: _body_property(arg) for n, arg in body.items()},
            }}}},
            "responses": post,
        },
        "delete": {"parameters": params, "responses": delete},
    }


def _list_op(resource: Resource) -> dict[str, Any]:
    w = resource.wording
    items = {"title": resource.name, "type": "array", "items": _ref(resource.schema_name)}
    return {"get": {
        "parameters": [_doc_param(p, "query") for p in LIST_PARAMS[resource.name]
                       if not p.ours],
        # Quirk kept (spec 3.1): documented as a bare array, the body is an envelope.
        "responses": {
            "200": {"description": w.list_found, **_json(items)},
            "400": {"description": "One or more of the specified query variables has a "
                                   "bad format"},
            "404": {"description": w.list_missing},
        },
    }}


def openapi_document(server_url: str, defaults: Mapping[str, Any] | None = None) -> dict:
    """Body of `GET /doc`.

    `server_url`: where the interface answers, port included (the plugin drops the
    port), + "/". `defaults` is
    accepted for symmetry with `namespace_index`; the plugin's document shows none.
    """
    del defaults  # the OpenAPI document lists no defaults
    paths: dict[str, Any] = {"/doc": {"get": {"responses": {"200": {
        "description": "Returns the documentation for The Events Calendar REST API in "
                       "Swagger consumable format."}}}}}
    for resource in RESOURCES.values():
        base = f"/{resource.name}"
        paths[base] = _list_op(resource)
        paths[base + "/{id}"] = _single_ops(resource, "id")
        if resource.by_slug:
            paths[base + "/by-slug/{slug}"] = _single_ops(resource, "slug")
    return {
        "openapi": "3.0.0",
        "info": {
            "version": "1.0.0",
            "title": "The Events Calendar REST API",
            "description": "The Events Calendar REST API allows accessing upcoming events "
                           "information easily and conveniently.",
        },
        "components": {"schemas": _schemas()},
        "servers": [{"url": server_url}],
        "paths": paths,
    }
