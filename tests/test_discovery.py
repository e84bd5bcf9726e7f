"""Discovery bodies (namespace index, /wp-json/, /doc) against the plugin's captures."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from calendar_app.catalog import discovery
from calendar_app.catalog.discovery import (
    LIST_PARAMS,
    NAMESPACE,
    SINGLE_ARGS,
    namespace_index,
    wp_json_index,
)
from calendar_app.catalog.openapi import PARTIAL_UPDATE_NOTE, openapi_document
from calendar_app.model.resources import RESOURCES, Field

REFERENCE = Path(__file__).resolve().parents[2] / "shared/reference/tec"

# The capture's site and request-time defaults.
SITE = "http://127.0.0.1:8089"
REST_ROOT = SITE + "/wp-json/tribe/events/v1"
SERVER_URL = "http://127.0.0.1/wp-json/tribe/events/v1/"
DEFAULTS = {"per_page": 10, "start_date": "2026-11-20 23:59:00",
            "end_date": "2028-11-21 12:04:41"}

# Writable fields of ours that the plugin does not accept (documented on top of its list).
OUR_EXTRA_ARGS = {
    # recurrence: docs/recurring-events.md; event status: docs/content-format.md
    "events": {"online_url", "performer", "recurrence", "event_status", "event_status_reason",
               "previous_start_date"},
    "venues": {"slug", "excerpt", "geo_lat", "geo_lng"},
    "organizers": {"slug", "excerpt"},
}


def _capture(name: str) -> dict:
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"reference capture {path} not available")
    return json.loads(path.read_text(encoding="utf-8"))["body"]


@pytest.fixture(scope="module")
def root_ref() -> dict:
    return _capture("root.json")


@pytest.fixture(scope="module")
def doc_ref() -> dict:
    return _capture("doc.json")


@pytest.fixture(scope="module")
def index() -> dict:
    return namespace_index(REST_ROOT, DEFAULTS)


@pytest.fixture(scope="module")
def doc() -> dict:
    return openapi_document(SERVER_URL, DEFAULTS)


def _resource_of(route: str) -> str:
    parts = route.removeprefix("/" + NAMESPACE).split("/")
    return parts[1] if len(parts) > 1 else ""


def _assert_names(mine: list[str], ref: list[str], extra: set[str]) -> None:
    """`mine` is the plugin's list in its order, plus only the declared extras."""
    assert [n for n in mine if n in ref] == ref
    assert set(mine) - set(ref) <= extra


# ------------------------------------------------------------------- namespace index


def test_index_top_level(index: dict, root_ref: dict) -> None:
    assert list(index) == list(root_ref) == ["namespace", "routes", "_links"]
    assert index["namespace"] == NAMESPACE
    assert index["_links"] == root_ref["_links"]


def test_index_routes_in_order_with_methods(index: dict, root_ref: dict) -> None:
    assert list(index["routes"]) == list(root_ref["routes"])
    for route, ref in root_ref["routes"].items():
        mine = index["routes"][route]
        assert list(mine) == list(ref), route
        assert mine["methods"] == ref["methods"], route
        assert [e["methods"] for e in mine["endpoints"]] == [
            e["methods"] for e in ref["endpoints"]], route
        assert mine.get("_links") == ref.get("_links"), route


def test_index_arg_names_per_endpoint(index: dict, root_ref: dict) -> None:
    for route, ref in root_ref["routes"].items():
        extra = OUR_EXTRA_ARGS.get(_resource_of(route), set())
        for mine_ep, ref_ep in zip(index["routes"][route]["endpoints"], ref["endpoints"],
                                   strict=True):
            _assert_names(list(mine_ep["args"]), list(ref_ep["args"]), extra)


def test_list_params_match_capture_exactly(index: dict, root_ref: dict) -> None:
    # Names, order, keys, key order and the defaults substituted per request.
    for name in RESOURCES:
        route = f"/{NAMESPACE}/{name}"
        ref_args = root_ref["routes"][route]["endpoints"][0]["args"]
        assert [p.name for p in LIST_PARAMS[name] if not p.ours] == list(ref_args)
        mine_args = index["routes"][route]["endpoints"][0]["args"]
        assert json.dumps(mine_args) == json.dumps(ref_args)


def test_single_path_args_match_capture_exactly(index: dict, root_ref: dict) -> None:
    for name, kinds in SINGLE_ARGS.items():
        for kind, params in kinds.items():
            suffix = r"/(?P<id>\d+)" if kind == "id" else "/by-slug/(?P<slug>[^/]+)"
            route = f"/{NAMESPACE}/{name}{suffix}"
            for methods in (["GET"], ["DELETE"]):
                ref_ep = next(e for e in root_ref["routes"][route]["endpoints"]
                              if e["methods"] == methods)
                mine_ep = next(e for e in index["routes"][route]["endpoints"]
                               if e["methods"] == methods)
                assert [p.name for p in params] == list(ref_ep["args"])
                assert json.dumps(mine_ep["args"]) == json.dumps(ref_ep["args"])


def test_index_namespace_and_doc_routes_exact(index: dict, root_ref: dict) -> None:
    for route in (f"/{NAMESPACE}", f"/{NAMESPACE}/doc"):
        assert json.dumps(index["routes"][route]) == json.dumps(root_ref["routes"][route])


def test_index_shows_request_defaults() -> None:
    body = namespace_index("https://example.org/wp-json/tribe/events/v1/",
                           {"per_page": 25, "start_date": "2030-01-01 23:59:00",
                            "end_date": "2032-01-02 08:00:00"})
    events = body["routes"]["/tribe/events/v1/events"]["endpoints"][0]["args"]
    assert events["per_page"]["default"] == "25"  # a string, as the plugin prints it
    assert events["start_date"]["default"] == "2030-01-01 23:59:00"
    assert events["end_date"]["default"] == "2032-01-02 08:00:00"
    for name in ("venues", "organizers", "categories", "tags"):
        args = body["routes"][f"/tribe/events/v1/{name}"]["endpoints"][0]["args"]
        assert args["per_page"]["default"] == "25"
    assert body["routes"]["/tribe/events/v1/events"]["_links"]["self"] == [
        {"href": "https://example.org/wp-json/tribe/events/v1/events"}]
    assert body["_links"]["up"] == [{"href": "https://example.org/wp-json/"}]
    assert "_links" not in body["routes"][r"/tribe/events/v1/events/(?P<id>\d+)"]


def _write_endpoints(index: dict, name: str) -> list[tuple[str, dict]]:
    out = []
    for route, body in index["routes"].items():
        if _resource_of(route) != name:
            continue
        for ep in body["endpoints"]:
            if "POST" in ep["methods"]:
                out.append((route, ep))
    return out


def test_every_writable_field_is_an_index_arg(index: dict) -> None:
    for name, resource in RESOURCES.items():
        endpoints = _write_endpoints(index, name)
        assert len(endpoints) == (3 if resource.by_slug else 2)
        for route, ep in endpoints:
            create = route == f"/{NAMESPACE}/{name}"
            for f in resource.writable_fields:
                assert f.name in ep["args"], (route, f.name)
                if not (f.name == "slug" and "by-slug" in route):
                    assert ep["args"][f.name]["required"] is (f.required and create)


def test_required_fields_only_on_create(index: dict) -> None:
    args = index["routes"]["/tribe/events/v1/events"]["endpoints"][1]["args"]
    assert [n for n, a in args.items() if a["required"]] == ["title", "start_date", "end_date"]
    update = index["routes"][r"/tribe/events/v1/events/(?P<id>\d+)"]["endpoints"][2]["args"]
    assert [n for n, a in update.items() if a["required"]] == ["id"]


def test_new_field_shows_up_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    events = RESOURCES["events"]
    extra = Field("livestream", "url", "the event livestream URL")
    monkeypatch.setitem(RESOURCES, "events",
                        replace(events, fields=events.fields + (extra,), _index={}))
    body = namespace_index(REST_ROOT, DEFAULTS)
    for _route, ep in _write_endpoints(body, "events"):
        assert ep["args"]["livestream"] == {"type": "string",
                                            "description": "The event livestream URL",
                                            "required": False}
    document = openapi_document(SERVER_URL, DEFAULTS)
    for path in ("/events/{id}", "/events/by-slug/{slug}"):
        props = _body_properties(document, path)
        assert props["livestream"] == {"description": "The event livestream URL",
                                       "type": "string"}
    assert "livestream" in document["components"]["schemas"]["Event"]["properties"]
    assert discovery.RESOURCES is RESOURCES


def test_resource_facts_come_from_its_description(monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema name, wording and orders are read from resources.py, nowhere else."""
    venues = RESOURCES["venues"]
    monkeypatch.setitem(RESOURCES, "venues", replace(
        venues, schema_name="Place", wording=replace(venues.wording, noun="place"),
        write_order=("venue", *venues.write_order), schema_order=("venue",)))
    document = openapi_document(SERVER_URL, DEFAULTS)
    schemas = document["components"]["schemas"]
    assert "Venue" not in schemas
    assert next(iter(schemas["Place"]["properties"])) == "venue"
    assert schemas["Event"]["properties"]["venue"]["$ref"] == "#/components/schemas/Place"
    responses = document["paths"]["/venues/{id}"]["get"]["responses"]
    assert responses["200"]["description"].startswith("Returns the data of the place ")
    args = namespace_index(REST_ROOT, DEFAULTS)["routes"]["/tribe/events/v1/venues"]
    assert next(iter(args["endpoints"][1]["args"])) == "venue"


# ------------------------------------------------------------------------ /wp-json/


def test_wp_json_index(index: dict) -> None:
    body = wp_json_index(SITE, REST_ROOT, index, name="Calendar")
    assert body["name"] == "Calendar"
    assert body["url"] == body["home"] == SITE
    assert body["namespaces"] == [NAMESPACE]
    assert "application-passwords" in body["authentication"]
    assert list(body["routes"]) == ["/", *index["routes"]]
    assert body["routes"]["/"]["_links"]["self"] == [{"href": SITE + "/wp-json/"}]
    assert all(body["routes"][r] == index["routes"][r] for r in index["routes"])
    assert list(body)[:6] == ["name", "description", "url", "home", "namespaces",
                              "authentication"]


# ------------------------------------------------------------------------------ /doc


def _body_properties(document: dict, path: str) -> dict:
    rb = document["paths"][path]["post"]["requestBody"]["content"]
    return rb["application/x-www-form-urlencoded"]["schema"]["properties"]


def test_doc_top_level(doc: dict, doc_ref: dict) -> None:
    assert list(doc) == list(doc_ref) == ["openapi", "info", "components", "servers", "paths"]
    assert doc["openapi"] == doc_ref["openapi"]
    assert doc["info"] == doc_ref["info"]
    assert doc["servers"] == doc_ref["servers"] == [{"url": SERVER_URL}]


def test_doc_paths_operations_and_parameters(doc: dict, doc_ref: dict) -> None:
    assert list(doc["paths"]) == list(doc_ref["paths"])
    for path, ref_ops in doc_ref["paths"].items():
        ops = doc["paths"][path]
        assert list(ops) == list(ref_ops), path
        for op, ref_op in ref_ops.items():
            assert list(ops[op]) == list(ref_op), (path, op)
            # Parameters are plugin data (LIST_PARAMS, SINGLE_ARGS): equal to the byte.
            assert json.dumps(ops[op].get("parameters")) == json.dumps(
                ref_op.get("parameters")), (path, op)
            assert list(ops[op]["responses"]) == list(ref_op["responses"]), (path, op)


def test_doc_request_bodies(doc: dict, doc_ref: dict) -> None:
    for path, ref_ops in doc_ref["paths"].items():
        if "post" not in ref_ops:
            continue
        extra = OUR_EXTRA_ARGS.get(path.split("/")[1], set())
        _assert_names(list(_body_properties(doc, path)),
                      list(_body_properties(doc_ref, path)), extra)


def test_every_writable_field_is_in_the_doc_request_body(doc: dict) -> None:
    for name, resource in RESOURCES.items():
        paths = [f"/{name}/{{id}}"] + ([f"/{name}/by-slug/{{slug}}"] if resource.by_slug
                                        else [])
        for path in paths:
            props = _body_properties(doc, path)
            for f in resource.writable_fields:
                assert f.name in props, (path, f.name)


def test_doc_schemas(doc: dict, doc_ref: dict) -> None:
    mine = doc["components"]["schemas"]
    ref = doc_ref["components"]["schemas"]
    assert list(mine) == list(ref) == ["ImageSize", "CostDetails", "Term", "Image",
                                       "DateDetails", "Event", "Venue", "Organizer"]
    for name, schema in ref.items():
        assert list(mine[name]) == ["type", "properties"]
        names = list(mine[name]["properties"])
        ours = ["online_url", "performer", "event_status", "event_status_reason",
                "previous_start_date"] if name == "Event" else []  # set only when set
        assert names == list(schema["properties"]) + ours, name
    assert mine["Event"]["properties"]["performer"]["items"] == {"type": "string"}
    for name in ("ImageSize", "CostDetails", "Term", "Image", "DateDetails"):
        assert json.dumps(mine[name]) == json.dumps(ref[name]), name
    assert "currency_position " in mine["CostDetails"]["properties"]


def test_doc_says_updates_are_partial(doc: dict) -> None:
    for path in ("/events/{id}", "/events/by-slug/{slug}", "/venues/{id}",
                 "/venues/by-slug/{slug}"):
        assert doc["paths"][path]["post"]["responses"]["200"]["description"].endswith(
            PARTIAL_UPDATE_NOTE)
    assert PARTIAL_UPDATE_NOTE not in json.dumps(doc["paths"]["/categories/{id}"])


def test_doc_is_json_serialisable_and_stable() -> None:
    first = json.dumps(openapi_document(SERVER_URL, DEFAULTS))
    assert first == json.dumps(openapi_document(SERVER_URL))
