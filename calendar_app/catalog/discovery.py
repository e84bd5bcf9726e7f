"""Discovery documents: the namespace index and `GET /wp-json/` (the `/doc` OpenAPI body,
built from the same route arguments, is openapi.py).

Everything here is pure data plus pure functions (no Flask), so the same bodies can be
served by the app, written by the builder and compared with the plugin's captures
(`shared/reference/tec/root.json`, `doc.json`) in tests.

Write arguments and request bodies are derived from the resource descriptions in
`resources.py`, so a field added there shows up in discovery by itself. What is *not*
derivable is copied from the captures: the facts of each resource (argument and member
order, which arguments declare a `default`, response texts) sit on its description in
`resources.py`, the route arguments here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model.fieldbase import INT_ITEMS as _INT_ITEMS
from ..model.resources import RESOURCES, Field, Resource

NAMESPACE = "tribe/events/v1"


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class RequestDefault:
    """A default computed per request, looked up by `key` in the `defaults` mapping.

    `as_text`: the plugin prints it as a string in the index (`per_page` shows `"10"`).
    """

    key: str
    as_text: bool = False


@dataclass(frozen=True)
class Param:
    """A route argument as the plugin declares it.

    `type` is a WordPress type or "" when the plugin declares none (then the value is
    only checked by the handler). `doc_type` is the type `/doc` prints when it differs
    from what `type`/`items`/`format` imply (the plugin's separate `swagger_type`).
    `style` is "form" for comma lists documented as such. `keys` is only the order in
    which the plugin prints the JSON-schema keys (presentation, no meaning).

    List parameters also say how they are read: `check` names the checker in
    `lists.CHECKS` (default: the parameter's name); `echo` is its place in the
    `rest_url` a list answers (the plugin's order, not the declared one; None: not
    echoed), `encodes` that it makes the plugin encode the whole query; `ours` marks
    our additions, left out where the plugin lists its own arguments.
    """

    name: str
    type: str
    description: str
    default: object = None
    items: Mapping[str, str] | None = None
    format: str | None = None
    enum: tuple[str, ...] | None = None
    required: bool = False
    doc_type: str = ""
    style: str = ""
    keys: tuple[str, ...] = ()
    check: str = ""
    echo: int | None = None
    encodes: bool = False
    ours: bool = False


# The plugin's most common key order for list arguments; the others say theirs in `keys`.
_LIST_KEYS = ("default", "description", "type", "items", "format", "enum")
_TYPE_FIRST = ("type", "format", "description", "items", "default", "enum")
_DEFAULT_LAST = ("description", "type", "items", "format", "default", "enum")

PER_PAGE = RequestDefault("per_page", as_text=True)
START_DATE = RequestDefault("start_date")
END_DATE = RequestDefault("end_date")


def _paging(plural: str, echoed: bool = True) -> tuple[Param, ...]:
    return (
        Param("page", "integer", "The archive page to return", default=1,
              echo=0 if echoed else None),
        Param("per_page", "integer", f"The number of {plural} to return on each page",
              default=PER_PAGE, check="page", echo=1 if echoed else None),
    )


def _linked_post_params(title: str) -> tuple[Param, ...]:
    """`/venues` and `/organizers` share their parameters (`title` is "Venues"...)."""
    return _paging(title.lower()) + (
        Param("search", "string", f"{title} should contain the specified string in the "
              "title, description or custom fields", check="string", echo=2),
        Param("event", "integer", f"{title} should be related to this event",
              check="event-id", echo=3),
        Param("has_events", "", f"{title} should have events associated to them",
              doc_type="boolean", check="loose-bool", echo=4),
        Param("only_with_upcoming", "", f"{title} should have upcoming events associated to "
              "them", default=False, doc_type="boolean", keys=_DEFAULT_LAST,
              check="loose-bool"),
        # Quirk kept: the plugin says "organizer" on /venues too.
        Param("status", "", "The organizer post status", format="string", keys=_TYPE_FIRST,
              echo=5),
    )


def _term_params(plural: str, hierarchical: bool) -> tuple[Param, ...]:
    parent = (
        Param("parent", "integer", "Limit result set to terms assigned to a specific parent",
              check="category-id"),
    )
    return _paging(plural, echoed=False) + (
        Param("search", "string", "Limit results to those matching a string", check="string"),
        Param("exclude", "", "Ensure result set exclude specific IDs", items=_INT_ITEMS,
              check="own-terms"),
        Param("include", "", "Limit result set to specific IDs", items=_INT_ITEMS,
              check="own-terms"),
        Param("order", "string", "Order sort attribute ascending or descending",
              check="string"),
        Param("orderby", "string", "Sort collection by term attribute", check="string"),
        Param("hide_empty", "boolean", "Whether to hide terms not assigned to any posts",
              default="1", keys=_DEFAULT_LAST, check="bool"),
    ) + (parent if hierarchical else ()) + (
        Param("post", "integer", "Limit result set to terms assigned to a specific post",
              check="event-id"),
        Param("event", "integer", "Limit result set to terms assigned to a specific event "
              '(an alias of the "post" parameter)', check="event-id"),
        Param("slug", "string", "Limit result set to terms with a specific slug",
              check="string"),
    )


_EVENT_PARAMS: tuple[Param, ...] = _paging("events") + (
    Param("start_date", "", "Events that start on the specified date", default=START_DATE,
          check="date", echo=2),
    Param("end_date", "", "Events that end on the specified date", default=END_DATE,
          check="date", echo=3),
    Param("starts_before", "", "Events that start before the specified date", check="date",
          echo=12),
    Param("starts_after", "", "Events that start after the specified date", check="date",
          echo=13),
    Param("ends_before", "", "Events that end before the specified date", check="date",
          echo=14),
    Param("ends_after", "", "Events that end after the specified date", check="date",
          echo=15),
    Param("strict_dates", "", "Dates set using the start_date/end_date, starts_*/ends_* are "
          "set to start at the specified times. The default behavior is to include the "
          "entire days.", default="false", check="flag"),
    Param("search", "string",
          "Events should contain the specified string in the title or description",
          check="string", echo=4),
    Param("categories", "", "Events should be assigned one of the specified categories slugs "
          "or IDs", items=_INT_ITEMS, style="form"),
    Param("tags", "", "Events should be assigned one of the specified tags slugs or IDs",
          items=_INT_ITEMS, style="form"),
    Param("venue", "", "Events should be assigned one of the specified venue IDs",
          items=_INT_ITEMS, style="form", echo=17, encodes=True),
    Param("organizer", "", "Events should be assigned one of the specified organizer IDs",
          items=_INT_ITEMS, style="form", echo=18, encodes=True),
    Param("featured", "boolean", "Events should be filtered by their featured status",
          keys=_TYPE_FIRST, check="bool", echo=19, encodes=True),
    Param("status", "", "The event post status", format="string", keys=_TYPE_FIRST, echo=9),
    Param("geoloc", "boolean", "Requires Events Calendar Pro. Events should be filtered by "
          "whether their venue has geolocation data", keys=_TYPE_FIRST, check="bool", echo=5),
    Param("geoloc_lat", "", "Requires Events Calendar Pro. Events should be filtered by their "
          "venue latitude location, must also provide geoloc_lng", format="double",
          keys=_TYPE_FIRST, check="number", echo=6),
    Param("geoloc_lng", "", "Requires Events Calendar Pro. Events should be filtered by their "
          "venue longitude location, must also provide geoloc_lat", format="double",
          keys=_TYPE_FIRST, check="number", echo=7),
    Param("include", "", "Include events with one of the post IDs specified in the array of "
          "CSV list, date filters will be ignored.", items=_INT_ITEMS, style="form",
          check="post-ids", echo=11),
    Param("post_parent", "integer",
          "Events should be filtered by their post_parent being the specified one.",
          keys=_TYPE_FIRST, check="event-id", echo=10),
    Param("ticketed", "boolean", "Filter events with or without tickets.", keys=_TYPE_FIRST,
          echo=16),
    # Ours: the radius of a geoloc_lat/geoloc_lng filter, and the seed's name for
    # `ticketed`.
    Param("geoloc_radius", "number", "Kilometres around geoloc_lat/geoloc_lng (default 50)",
          check="number", echo=8, ours=True),
    Param("tickets", "boolean", "An alias of ticketed", check="ticketed", ours=True),
)

#: Query parameters of each list route, in the plugin's order.
LIST_PARAMS: dict[str, tuple[Param, ...]] = {
    "events": _EVENT_PARAMS,
    "venues": _linked_post_params("Venues"),
    "organizers": _linked_post_params("Organizers"),
    "categories": _term_params("event categories", hierarchical=True),
    "tags": _term_params("event tags", hierarchical=False),
}


def _path_id(noun: str, kind: str) -> Param:
    return Param("id", "integer", f"the {noun} {kind} ID", required=True, keys=_TYPE_FIRST)


def _path_slug(noun: str) -> Param:
    return Param("slug", "string", f"the {noun} post name", required=True, keys=_TYPE_FIRST)


#: Arguments of the single routes before any body field: `"id"` for `/{id}` routes,
#: `"slug"` for `/by-slug/{slug}` routes (these also head the write endpoints).
SINGLE_ARGS: dict[str, dict[str, tuple[Param, ...]]] = {
    "events": {
        "id": (_path_id("event", "post"),
               Param("password", "string", "The event password", keys=_TYPE_FIRST)),
        "slug": (_path_slug("event"),),
    },
    "venues": {"id": (_path_id("venue", "post"),), "slug": (_path_slug("venue"),)},
    "organizers": {"id": (_path_id("organizer", "post"),), "slug": (_path_slug("organizer"),)},
    "categories": {"id": (_path_id("event category", "term"),)},
    "tags": {"id": (_path_id("event tag", "term"),)},
}


def resolve_default(value: object, defaults: Mapping[str, Any]) -> object:
    """The actual default of a parameter for this request (per_page as an int)."""
    if isinstance(value, RequestDefault):
        return defaults[value.key]
    return value


def index_arg(param: Param, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """One argument as WordPress prints it in the index: schema keys, then `required`."""
    present: dict[str, Any] = {}
    if param.default is not None:
        value = resolve_default(param.default, defaults)
        shown_as_text = isinstance(param.default, RequestDefault) and param.default.as_text
        present["default"] = str(value) if shown_as_text else value
    if param.type:
        present["type"] = param.type
    if param.items is not None:
        present["items"] = dict(param.items)
    if param.format is not None:
        present["format"] = param.format
    if param.enum is not None:
        present["enum"] = list(param.enum)
    present["description"] = param.description
    order = param.keys or _LIST_KEYS
    out = {k: present[k] for k in order if k in present}
    out.update((k, v) for k, v in present.items() if k not in out)
    out["required"] = param.required
    return out


# ------------------------------------------------------------------- write arguments

# Key orders of write arguments (`Resource.write_default_first` picks one).
_WRITE_KEYS_DEFAULT_FIRST = ("default", "type", "items", "description")
_WRITE_KEYS_TYPE_FIRST = ("type", "default", "items", "description")

def sentence(text: str) -> str:
    """resources.py descriptions are lower-case phrases; the plugin capitalises them."""
    return text[:1].upper() + text[1:]


def _write_fields(resource: Resource) -> tuple[Field, ...]:
    order = resource.write_order
    writable = {f.name: f for f in resource.writable_fields}
    known = tuple(writable[n] for n in order if n in writable)
    return known + tuple(f for f in resource.writable_fields if f.name not in order)


def write_args(resource: Resource, create: bool) -> dict[str, dict[str, Any]]:
    """Body arguments of a create (`create=True`) or update endpoint, from the fields."""
    shown = resource.shown_write_defaults
    keys = _WRITE_KEYS_DEFAULT_FIRST if resource.write_default_first else _WRITE_KEYS_TYPE_FIRST
    out: dict[str, dict[str, Any]] = {}
    for f in _write_fields(resource):
        type_, items = f.type.wp_argument()
        present: dict[str, Any] = {"description": sentence(f.description)}
        if f.name in shown:
            present["default"] = shown[f.name]
        if type_:
            present["type"] = type_
        if items is not None:
            present["items"] = dict(items)
        arg = {k: present[k] for k in keys if k in present}
        # Only creation requires fields; every update field is optional.
        arg["required"] = f.required and create
        out[f.name] = arg
    return out


def merge_args(path: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """PHP `array_merge` of string keys: a body argument named like a path argument
    replaces it in place (events by-slug: the body `slug` wins, section 4.9)."""
    out = dict(path)
    out.update(body)
    return out


# ------------------------------------------------------------------- namespace index


def _route_patterns(resource: Resource) -> dict[str, str]:
    """Route kind -> registration regex suffix, in registration order."""
    base = f"/{resource.name}"
    out = {"list": base, "id": base + r"/(?P<id>\d+)"}
    if resource.by_slug:
        out["slug"] = base + "/by-slug/(?P<slug>[^/]+)"
    return out


def _endpoint(methods: list[str], args: Mapping[str, Any]) -> dict[str, Any]:
    # WordPress prints an empty argument list as a JSON array.
    return {"methods": methods, "args": dict(args) if args else []}


def _resource_routes(resource: Resource, defaults: Mapping[str, Any]) -> dict[str, list]:
    """Route regex suffix -> endpoints."""
    routes: dict[str, list] = {}
    for kind, pattern in _route_patterns(resource).items():
        if kind == "list":
            params = {p.name: index_arg(p, defaults) for p in LIST_PARAMS[resource.name]
                      if not p.ours}
            routes[pattern] = [_endpoint(["GET"], params),
                               _endpoint(["POST"], write_args(resource, create=True))]
            continue
        path = {p.name: index_arg(p, defaults) for p in SINGLE_ARGS[resource.name][kind]}
        read = _endpoint(["GET"], path)
        delete = _endpoint(["DELETE"], path)
        update = _endpoint(["POST", "PUT", "PATCH"],
                           merge_args(path, write_args(resource, create=False)))
        # Post types register DELETE before the update endpoint, terms after it.
        routes[pattern] = [read, update, delete] if resource.is_term else [read, delete, update]
    return routes


def namespace_index(rest_root: str, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Body of `GET /wp-json/tribe/events/v1`.

    `rest_root`: absolute URL of the namespace without trailing slash. `defaults`:
    `per_page` (int), `start_date`, `end_date` (`YYYY-MM-DD HH:MM:SS`) of this request.
    """
    rest_root = rest_root.rstrip("/")
    prefix = "/" + NAMESPACE
    site_api = rest_root.removesuffix(prefix)
    endpoints: dict[str, list] = {
        "": [_endpoint(["GET"], {"namespace": {"default": NAMESPACE, "required": False},
                                 "context": {"default": "view", "required": False}})],
        "/doc": [_endpoint(["GET"], {})],
    }
    for resource in RESOURCES.values():
        endpoints.update(_resource_routes(resource, defaults))

    routes: dict[str, Any] = {}
    for suffix, eps in endpoints.items():
        methods: list[str] = []
        for ep in eps:
            methods += [m for m in ep["methods"] if m not in methods]
        route: dict[str, Any] = {"namespace": NAMESPACE, "methods": methods, "endpoints": eps}
        if "(?P<" not in suffix:  # WordPress links only routes it can address as is
            route["_links"] = {"self": [{"href": rest_root + suffix}]}
        routes[prefix + suffix] = route
    return {
        "namespace": NAMESPACE,
        "routes": routes,
        "_links": {"up": [{"href": site_api + "/"}]},
    }


def wp_json_index(
    site_url: str,
    rest_root: str,
    namespace_index_body: Mapping[str, Any],
    *,
    name: str = "",
    description: str = "",
) -> dict[str, Any]:
    """Body of `GET /wp-json/`: the WordPress site index, limited to our namespace.

    Clients discover the namespace and the authentication scheme here (e.g. they look
    for `tribe/events/v1` in `namespaces` and `application-passwords`).
    """
    site_url = site_url.rstrip("/")
    site_api = rest_root.rstrip("/").removesuffix("/" + NAMESPACE)
    return {
        "name": name,
        "description": description,
        "url": site_url,
        "home": site_url,
        "namespaces": [NAMESPACE],
        "authentication": {
            "application-passwords": {
                "endpoints": {
                    "authorization": site_url + "/wp-admin/authorize-application.php",
                },
            },
        },
        # WordPress lists the index route itself first, then every namespace's routes.
        "routes": {
            "/": {"namespace": "", "methods": ["GET"],
                  "endpoints": [_endpoint(["GET"], {"context": {"default": "view",
                                                                "required": False}})],
                  "_links": {"self": [{"href": site_api + "/"}]}},
            **namespace_index_body["routes"],
        },
        "_links": {"help": [{"href": "https://developer.wordpress.org/rest-api/"}]},
    }
