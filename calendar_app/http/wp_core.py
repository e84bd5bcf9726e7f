"""WordPress core routes the plugin's clients call around its namespaces (spec tec-v1
§11): the site index `GET /wp-json/`, `wp/v2/users/me`, `wp/v2/settings`, and the
terms routes `wp/v2/tribe_events_cat` and `wp/v2/tags` (core's terms controller;
`tec/v1` has no term routes). Filled from the calendar (`calendar.yaml`, users)."""

from __future__ import annotations

import datetime as dt
import hashlib
import math

from flask import Blueprint, Flask, Response, request

from ..catalog import discovery, lists, tec_bodies, tec_openapi
from ..model import dates, errors
from ..model.errors import ApiError
from ..model.records import Record
from ..model.resources import RESOURCES, Resource
from ..model.settings import week_start
from ..service import term_capability
from ..store.users import User
from . import api, tec_api

# The WordPress capabilities of each of our capabilities, per post type.
_POST_TYPE_CAPS = {"edit": ("edit_{}",), "edit_others": ("edit_others_{}",),
                   "edit_published": ("edit_published_{}",), "publish": ("publish_{}",),
                   "delete": ("delete_{}",), "delete_others": ("delete_others_{}",),
                   "delete_published": ("delete_published_{}",),
                   "read_private": ("read_private_{}",)}
_CAP_NAMES = {"events": "tribe_events", "venues": "tribe_venues",
              "organizers": "tribe_organizers"}
_TERM_ROUTES = {"tribe_events_cat": "categories", "tags": "tags"}

bp = Blueprint("wp_core", __name__)


def _setting(key: str) -> object:
    """A `calendar.yaml` setting (defaults in model/settings.py)."""
    return api.calendar().catalog.settings.get(key, "")


def _zone_facts() -> tuple[str, float | str]:
    """(timezone_string, gmt_offset) as WordPress stores them: a zone name and its
    offset now as a number, or "" and the bare offset as text (`UTC+2` -> "2")."""
    name = str(api.calendar().catalog.settings.get("timezone") or "UTC")
    if dates.is_offset_name(name):
        hours = name[3:].replace(":", ".")
        return "", hours.lstrip("+")
    now = api.calendar().service.clock()
    offset = now.astimezone(dates.zone(name)).utcoffset() or dt.timedelta(0)
    hours = offset.total_seconds() / 3600
    return name, int(hours) if hours == int(hours) else hours


def site_index() -> Response:
    """`GET /wp-json/`: the WordPress index with both namespaces and `wp/v2`'s routes."""
    index = discovery.namespace_index(api.rest_root(), lists.request_defaults(
        api.calendar().reader))
    body = discovery.wp_json_index(api.site_url(), api.rest_root(), index,
                                   name=str(_setting("title")),
                                   description=str(_setting("description")))
    url = str(_setting("url") or api.site_url()).rstrip("/")
    zone, offset = _zone_facts()
    head = {k: body[k] for k in ("name", "description")}
    head.update(url=url, home=url, gmt_offset=offset, timezone_string=zone,
                page_for_posts=0, page_on_front=0, show_on_front="posts",
                namespaces=[*body["namespaces"], tec_openapi.NAMESPACE, "wp/v2"],
                authentication=body["authentication"])
    routes = dict(body["routes"])
    routes.update(tec_openapi.routes(tec_api.rest_url()))
    wp = api.site_url().rstrip("/") + "/wp-json/wp/v2"
    for path, methods in (("/wp/v2/users/me", ["GET"]), ("/wp/v2/settings", ["GET"]),
                          ("/wp/v2/tribe_events_cat", ["GET", "POST"]),
                          ("/wp/v2/tags", ["GET", "POST"])):
        routes[path] = {"namespace": "wp/v2", "methods": methods,
                        "endpoints": [{"methods": [m], "args": {}} for m in methods],
                        "_links": {"self": [{"href": wp + path[len("/wp/v2"):]}]}}
    for base in _TERM_ROUTES:
        routes[f"/wp/v2/{base}/(?P<id>[\\d]+)"] = {
            "namespace": "wp/v2", "methods": ["GET", "DELETE"],
            "endpoints": [{"methods": ["GET"], "args": {}},
                          {"methods": ["DELETE"], "args": {"force": {"type": "boolean",
                                                                     "default": False}}}]}
    head.update(routes=routes, site_logo=0, site_icon=0, site_icon_url="",
                _links=body["_links"])
    return api.respond(head)


# -- users/me -------------------------------------------------------------------------
def _capabilities(user: User) -> dict[str, bool]:
    caps: dict[str, bool] = {"read": True, user.role: True}
    for ours, names in _POST_TYPE_CAPS.items():
        if user.can(ours):
            for name in names:
                caps.update({name.format(t): True for t in _CAP_NAMES.values()})
    if user.can("manage_terms"):
        caps["manage_categories"] = True
    if user.role == "administrator":
        caps["manage_options"] = True
    return caps


@bp.route("/users/me", methods=["GET"], strict_slashes=False)
def users_me() -> Response:
    user = api.current_user()
    if user is None:
        raise ApiError(401, "rest_not_logged_in", "You are not currently logged in.")
    site = api.site_url().rstrip("/")
    avatar = hashlib.md5(user.email.strip().lower().encode(), usedforsecurity=False
                         ).hexdigest()
    body: dict = {"id": user.id, "name": user.name, "url": "", "description": "",
                  "link": f"{site}/author/{user.name}/", "slug": user.name,
                  "avatar_urls": {size: f"https://secure.gravatar.com/avatar/{avatar}"
                                        f"?s={size}&d=mm&r=g" for size in ("24", "48", "96")}}
    if request.args.get("context") == "edit":
        caps = _capabilities(user)
        body.update(username=user.name, first_name="", last_name="", email=user.email,
                    locale=str(_setting("locale")), nickname=user.name,
                    roles=[user.role], registered_date="1970-01-01T00:00:00+00:00",
                    capabilities=caps, extra_capabilities={user.role: True})
    body.update(meta=[], _links={"self": [{"href": f"{site}/wp-json/wp/v2/users/{user.id}"}],
                                 "collection": [{"href": f"{site}/wp-json/wp/v2/users"}]})
    return api.respond(body)


@bp.route("/settings", methods=["GET"], strict_slashes=False)
def settings() -> Response:
    user = api.current_user()
    if user is None or user.role != "administrator":  # manage_options
        raise errors.forbidden(user is not None)
    zone, _offset = _zone_facts()
    return api.respond({
        "title": str(_setting("title")), "description": str(_setting("description")),
        "url": str(_setting("url") or api.site_url()).rstrip("/"),
        "email": str(_setting("email")), "timezone": zone,
        "date_format": str(_setting("date_format")),
        "time_format": str(_setting("time_format")),
        # WordPress counts weekdays from Sunday (0), Python from Monday (0).
        "start_of_week": (week_start(api.calendar().catalog.settings) + 1) % 7,
        "language": str(_setting("locale")), "use_smilies": True, "default_category": 1,
        "default_post_format": "0",
        "posts_per_page": lists.request_defaults(api.calendar().reader)["per_page"],
        "show_on_front": "posts", "page_on_front": 0, "page_for_posts": 0,
        "default_ping_status": "open", "default_comment_status": "open",
        "site_logo": None, "site_icon": 0})


# -- terms, as core's terms controller answers them -------------------------------------
def _term(record: Record) -> dict:
    rep = api.representer()
    base = "tribe_events_cat" if record.collection == "categories" else "tags"
    wp = api.site_url().rstrip("/") + "/wp-json/wp/v2/"
    body: dict = {"id": record.id, "count": rep.catalog.term_count(record),
                  "description": str(record.get("description", "")),
                  "link": rep.url(record), "name": record.name, "slug": record.slug,
                  "taxonomy": record.resource.taxonomy}
    if record.resource.hierarchical:
        parent = rep.catalog.by_slug(record.collection, record.get("parent") or "")
        body["parent"] = parent.id if parent is not None else 0
    body.update(meta=[], _links={"self": [{"href": f"{wp}{base}/{record.id}"}],
                                 "collection": [{"href": f"{wp}{base}"}]})
    return body


def _int_arg(name: str, default: int) -> int:
    raw = request.args.get(name, str(default))
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1 or len(raw) > 9:
        raise errors.invalid({name: f"{name} must be greater than or equal to 1"})
    return int(raw)


@bp.route("/<any(tribe_events_cat,tags):base>", methods=["GET", "POST"], strict_slashes=False)
def terms(base: str) -> Response:
    resource = RESOURCES[_TERM_ROUTES[base]]
    user = api.current_user()
    if request.method == "POST":
        body = api.params()
        if user is None or not user.can("edit") or not user.can(term_capability(resource)):
            raise ApiError(403 if user else 401, "rest_cannot_create",
                           "Sorry, you are not allowed to create terms in this taxonomy.")
        values = {k: body[k] for k in ("name", "slug", "description", "parent") if k in body}
        if "parent" in values and values["parent"] in (0, "0"):
            del values["parent"]
        record, _new = api.calendar().service.create(resource.name, values, user)
        return api.respond(_term(record), 201)
    return _term_list(resource)


def _term_list(resource: Resource) -> Response:
    page, per_page = _int_arg("page", 1), min(_int_arg("per_page", 10), 100)
    records = api.calendar().catalog.all(resource.name)
    search = request.args.get("search", "").lower()
    if search:
        records = [r for r in records if search in r.name.lower() or search in r.slug]
    if request.args.get("slug"):
        wanted = set(request.args["slug"].split(","))
        records = [r for r in records if r.slug in wanted]
    records.sort(key=lambda r: (r.name.lower(), r.id),
                 reverse=request.args.get("order", "asc").lower() == "desc")
    total = len(records)
    pages = math.ceil(total / per_page) if total else 0
    if page > 1 and page > pages:
        raise ApiError(400, "rest_post_invalid_page_number",
                       "The page number requested is larger than the number of pages "
                       "available.")
    chunk = records[(page - 1) * per_page: page * per_page]
    return api.respond([_term(r) for r in chunk], 200,
                       {"X-WP-Total": str(total), "X-WP-TotalPages": str(pages)})


@bp.route("/<any(tribe_events_cat,tags):base>/<int:term_id>", methods=["GET", "DELETE"],
          strict_slashes=False)
def term(base: str, term_id: int) -> Response:
    resource = RESOURCES[_TERM_ROUTES[base]]
    record = api.calendar().catalog.get(term_id, resource.name)
    if request.method == "GET":
        if record is None:
            raise ApiError(404, "rest_term_invalid", "Term does not exist.")
        return api.respond(_term(record))
    user = api.current_user()
    if user is None or not user.can("edit") or not user.can(term_capability(resource)):
        raise ApiError(403 if user else 401, "rest_cannot_delete",
                       "Sorry, you are not allowed to delete this term.")
    if record is None:
        raise ApiError(404, "rest_term_invalid", "Term does not exist.")
    if not tec_bodies.php_bool(api.params().get("force", False)):
        raise ApiError(501, "rest_trash_not_supported",
                       "Terms do not support trashing. Set 'force=true' to delete.")
    previous = _term(record)
    api.calendar().service.delete(record, user)
    return api.respond({"deleted": True, "previous": previous})


def _authenticate_first() -> None:
    """WordPress authenticates before it routes: a wrong Authorization header is a 401
    on any route of the namespaces served here, even one that does not exist."""
    path = request.path
    if "Authorization" in request.headers and (
            path.rstrip("/") == "/wp-json" or path.startswith((tec_api.PREFIX, "/wp-json/wp/"))):
        api.current_user()


def install(app: Flask) -> None:
    app.add_url_rule("/wp-json/", "wp_json_index", site_index, strict_slashes=False)
    app.register_blueprint(bp, url_prefix="/wp-json/wp/v2")
    app.before_request(_authenticate_first)
