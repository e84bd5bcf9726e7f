"""The `tec/v1` namespace (spec tec-v1): events, venues and organizers as The Events
Calendar's newer REST API serves them, over the same service, catalog version, read
policy and request parsing as `tribe/events/v1` (`api.py`).

Each view applies the plugin's order of checks (spec §2): authentication (done for
every request in `wp_core`), route, arguments (400), permission (401/403), the
acknowledgement header (400), then the operation, whose own failures answer the
plugin's bare `{"error": ...}` bodies.
"""

from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, request

from ..catalog import tec_bodies, tec_lists, tec_openapi
from ..catalog.policy import may_read
from ..catalog.query import Context as ListContext
from ..catalog.tec_shapes import TecRepresenter
from ..model import errors
from ..model.errors import ApiError
from ..model.records import Record
from ..model.resources import RESOURCES, Resource
from ..store.users import User
from . import api

NAMESPACE = "tec/v1"
PREFIX = "/wp-json/" + NAMESPACE
TEC_COLLECTIONS = tuple(name for name, r in RESOURCES.items() if r.tec is not None)
HEADER = "X-TEC-EEA"
ACKNOWLEDGEMENT = (
    "I understand that this endpoint is experimental and may change in a future release "
    "without maintaining backward compatibility. I also understand that I am using this "
    "endpoint at my own risk, while support is not provided for it.")
ALL_VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
_PHP_TRIM = " \t\n\r\0\x0b"


class Failure(Exception):
    """An operation's failure as the plugin answers it: `{"error": sentence}` only."""

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.sentence = sentence


def check_acknowledgement() -> None:
    """The experimental-endpoint header (spec §3); the TEC_REQUIRE_ACKNOWLEDGEMENT
    setting (on by default) switches it off, as the plugin's filters do."""
    if not current_app.config.get("TEC_REQUIRE_ACKNOWLEDGEMENT", True):
        return
    value = request.headers.get(HEADER)
    if value is None or value in ("", "0"):
        raise ApiError(400, "missing_experimental_endpoint_acknowledgement",
                       "Experimental endpoint requires acknowledgement header.")
    if value.strip(_PHP_TRIM).lower() != ACKNOWLEDGEMENT.lower():
        raise ApiError(400, "missing_experimental_endpoint_acknowledgement",
                       "Experimental endpoint requires appropriate acknowledgement header.")


def rest_url() -> str:
    return api.site_url().rstrip("/") + PREFIX


def shapes() -> TecRepresenter:
    cal = api.calendar()
    return TecRepresenter(api.representer(), cal.service.clock())


def _no_route() -> ApiError:
    return ApiError(404, "rest_no_route", errors.NO_ROUTE)


def _refused() -> ApiError:
    return errors.forbidden(api.current_user() is not None)


bp = Blueprint("tec", __name__)


@bp.route("/", methods=["GET"], strict_slashes=False)
def namespace_index() -> Response:
    return api.respond(tec_openapi.namespace_index(rest_url(), api.site_url()))


@bp.route("/docs", methods=["GET"], strict_slashes=False)
def docs() -> Response:
    return api.respond(tec_openapi.document(rest_url()))


@bp.route(f"/<any({', '.join(TEC_COLLECTIONS)}):collection>", methods=ALL_VERBS,
          strict_slashes=False)
def collection_view(collection: str) -> Response:
    resource = RESOURCES[collection]
    user = api.current_user()
    if request.method == "GET":
        return _list(resource, user)
    if request.method != "POST":
        raise _no_route()
    values = tec_bodies.read_body(resource, api.params())
    if user is None or not user.can("edit"):
        raise _refused()
    check_acknowledgement()
    title = values.get("title")
    dated = resource.name != "events" or (values.get("start_date") or values.get(
        "start_date_utc")) and (values.get("end_date") or values.get("end_date_utc")
                                or values.get("duration"))
    if not (isinstance(title, str) and title.strip()) or not dated:
        # The plugin answers 500 here (spec §7.5); a missing field is the client's
        # error, and we never answer bad input with a 5xx: same body, status 400.
        raise Failure(400, "Failed to create entity.")
    body = _known_terms(tec_bodies.service_body(resource, values))
    try:
        record, _new = api.calendar().service.create(collection, body, user, reuse=False)
    except ApiError as exc:
        if exc.code == "rest_missing_callback_param":
            raise Failure(400, "Failed to create entity.") from None
        raise
    return api.respond(shapes().represent(record), 201)


def _list(resource: Resource, user: User | None) -> Response:
    cal = api.calendar()
    ctx = ListContext(cal.reader, cal.catalog.view(), api.representer(), user,
                      current_app.config.get("MAX_INCLUDE_IDS", 100))
    raw = api.params()
    tec_lists.parse(ctx, resource, raw)  # arguments first: a 400 before the header
    check_acknowledgement()
    try:
        found = tec_lists.answer(ctx, resource, raw, f"{rest_url()}/{resource.name}",
                                 shapes().represent)
    except tec_lists.PageNotFound:
        return api.respond(tec_lists.PageNotFound.body, 404)
    return api.respond(found.body, found.status, found.headers)


def _find(resource: Resource, record_id: int) -> Record | None:
    """The post with this id, whatever its type, or an occurrence of a recurring event
    (a write to one is refused as `tribe/events/v1` refuses it: `api.occurrence`)."""
    record = api.calendar().catalog.get(record_id)
    if record is None and resource.name == "events":
        record = api.occurrence(record_id)
    return record


@bp.route(f"/<any({', '.join(TEC_COLLECTIONS)}):collection>/<int:record_id>",
          methods=ALL_VERBS, strict_slashes=False)
def single_view(collection: str, record_id: int) -> Response:
    resource = RESOURCES[collection]
    user = api.current_user()
    if request.method == "POST":  # the plugin's updates are PUT and PATCH only
        raise _no_route()
    record = _find(resource, record_id)
    if request.method == "GET":
        return _read(resource, record, user)
    if request.method == "DELETE":
        return _delete(resource, record, user)
    return _update(resource, record, user)


def _read(resource: Resource, record: Record | None, user: User | None) -> Response:
    if record is None or record.collection != resource.name or not (
            record.status == "trash" and user is not None and user.can("edit")
            and api.calendar().service.may_edit(user, record)
            or record.status != "trash" and may_read(user, record)):
        raise _refused()
    check_acknowledgement()
    if record.status == "trash":  # `status=any` leaves the trash out
        raise Failure(404, "The entity could not be read.")
    return api.respond(shapes().represent(record))


def _may_write(user: User | None, record: Record | None, verb: str) -> bool:
    service = api.calendar().service
    return (user is not None and record is not None and user.can(verb)
            and not record.resource.is_term and service.may_edit(user, record, verb))


def _update(resource: Resource, record: Record | None, user: User | None) -> Response:
    values = tec_bodies.read_body(resource, api.params())
    if not _may_write(user, record, "edit"):
        raise _refused()
    assert record is not None
    check_acknowledgement()
    if record.collection != resource.name:
        raise Failure(404, "The entity could not be updated.")
    body = _known_terms(tec_bodies.service_body(resource, values))
    updated = api.calendar().service.update(record, body, user)
    return api.respond(shapes().represent(updated))


def _delete(resource: Resource, record: Record | None, user: User | None) -> Response:
    force = tec_bodies.php_bool(api.params().get("force", False))
    if not _may_write(user, record, "delete"):
        raise _refused()
    assert record is not None
    check_acknowledgement()
    if record.collection != resource.name:
        raise Failure(404, "The entity could not be deleted.")
    if record.status == "trash" and not force:
        raise Failure(410, "The entity has already been trashed.")
    api.calendar().service.delete(record, user, force=force)
    return api.respond([])


def _known_terms(body: dict) -> dict:
    """Term ids that name no term are left out, as the plugin ignores them."""
    catalog = api.calendar().catalog
    for name in ("categories", "tags"):
        if isinstance(body.get(name), list):
            body[name] = [i for i in body[name] if catalog.get(i, name) is not None]
    return body


def _failure(exc: Failure) -> Response:
    return api.respond({"error": exc.sentence}, exc.status)


def install(app: Flask) -> None:
    app.config.setdefault("TEC_REQUIRE_ACKNOWLEDGEMENT", True)
    app.register_blueprint(bp, url_prefix=PREFIX)
    app.register_error_handler(Failure, _failure)
