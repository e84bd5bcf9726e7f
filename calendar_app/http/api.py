"""The HTTP interface: thin Flask views over the service and the representation.

One set of views serves all five collections; what differs per collection comes from
the resource descriptions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from urllib.parse import parse_qsl

from flask import Blueprint, Flask, Response, current_app, g, request, send_file
from werkzeug.exceptions import HTTPException, NotFound

from ..catalog import discovery, lists, occurrences, openapi
from ..catalog.policy import may_read
from ..catalog.query import Context as ListContext
from ..catalog.represent import Representer, dumps
from ..model import errors
from ..model.errors import ApiError
from ..model.records import UNSTORABLE_TEXT, Record
from ..model.resources import RESOURCES, Resource
from ..service import term_capability
from ..store.users import User
from ..sync.webhook import pushed_ref, verify_webhook
from ..wiring import Calendar
from . import guard, list_memo

COLLECTIONS = ", ".join(RESOURCES)
SINGLE_VERBS = ("GET", "DELETE", "POST", "PUT", "PATCH")
_BRACKETS = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])*)$")


def calendar() -> Calendar:
    return current_app.extensions["calendar"]


def site_url() -> str:
    return current_app.config["SITE_URL"] or request.host_url


def rest_root() -> str:
    return site_url().rstrip("/") + current_app.config["BASE_PATH"]


def public_url() -> str:
    """Where the calendar's pages live (permalinks, global ids): the calendar's `url`
    setting, else this server."""
    return str(calendar().catalog.settings.get("url") or site_url())


def representer() -> Representer:
    """The representation for the requesting user: events embed only the linked
    records that user may read on their own."""
    cal, user = calendar(), current_user()
    return Representer(cal.catalog, public_url(), rest_root(),
                       lambda record: may_read(user, record))


# -- request parsing -----------------------------------------------------------
def _set_nested(target: dict, key: str, value: str) -> None:
    """Form keys in PHP style: `venue[]=1`, `venue[venue]=Hall`, `organizer[0][id]=3`."""
    match = _BRACKETS.match(key)
    if not match or not match.group(2):
        target[key] = value
        return
    parts = [match.group(1)] + re.findall(r"\[([^\[\]]*)\]", match.group(2))
    if len(parts) > MAX_PARAM_DEPTH:
        raise errors.invalid({_safe_name(parts[0]): "The value is nested too deeply."})
    node: dict | list = target
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: object = value if last else ([] if parts[i + 1] == "" else {})
        if isinstance(node, list):
            if part == "" or not node or not isinstance(node[-1], dict) or last:
                node.append(nxt)
                node = node[-1]  # type: ignore[assignment]
            else:
                node = node[-1]
            continue
        if last:
            node[part] = value
        else:
            existing = node.get(part)
            if not isinstance(existing, dict | list):
                node[part] = nxt
            node = node[part]  # type: ignore[assignment]


def _pairs_to_dict(pairs: list[tuple[str, str]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        _set_nested(out, key, value)
    # Only values become lists: the top level stays named (`?0=` is a parameter "0",
    # unknown and so ignored, as PHP's $_GET keeps it).
    return {key: _numbered_to_lists(value) for key, value in out.items()}


def _numbered_to_lists(node: object) -> object:
    """`organizer[0][..]`, `organizer[1][..]` make a list, in index order."""
    if isinstance(node, list):
        return [_numbered_to_lists(v) for v in node]
    if not isinstance(node, dict):
        return node
    items = {k: _numbered_to_lists(v) for k, v in node.items()}
    if items and all(isinstance(k, str) and k.isascii() and k.isdigit() for k in items):
        return [items[k] for k in sorted(items, key=int)]
    return items


def params() -> dict:
    """Request parameters with the WordPress precedence: JSON, form, query."""
    if "params" in g:
        return g.params
    try:
        query = parse_qsl(request.query_string.decode("utf-8"), keep_blank_values=True,
                          errors="strict")
    except UnicodeDecodeError:
        raise ApiError(400, "rest_invalid_param", "The query string is not valid UTF-8.",
                       params={}, details=[]) from None
    merged = _pairs_to_dict(query)
    if request.method in ("POST", "PUT", "PATCH", "DELETE"):
        merged.update(_pairs_to_dict(list(request.form.items(multi=True))))
        if request.mimetype == "application/json" or (
                request.mimetype.endswith("+json")):
            raw = request.get_data(cache=True)
            if raw.strip():
                try:
                    body = json.loads(raw)
                except (ValueError, UnicodeDecodeError, RecursionError):
                    raise ApiError(400, "rest_invalid_json", "Invalid JSON body passed.",
                                   json_error_code=4,
                                   json_error_message="Syntax error") from None
                if isinstance(body, dict):
                    merged.update(body)
    g.params = {key: _clean_value(key, value) for key, value in merged.items()}
    return g.params


_BAD_TEXT = UNSTORABLE_TEXT  # the loader refuses the same in files
MAX_PARAM_DEPTH = 16


def _clean_value(name: str, value: object, depth: int = 0) -> object:
    """Refuse unstorable text and deep nesting; line ends become `\\n`."""
    if depth > MAX_PARAM_DEPTH:
        raise errors.invalid({name: "The value is nested too deeply."})
    if isinstance(value, str):
        if _BAD_TEXT.search(value):
            raise errors.invalid({_safe_name(name): "Control characters are not allowed."})
        return value.replace("\r\n", "\n").replace("\r", "\n")
    if isinstance(value, dict):
        return {_clean_value(name, k, depth + 1): _clean_value(name, v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(name, v, depth + 1) for v in value]
    return value


def _safe_name(name: str) -> str:
    return _BAD_TEXT.sub("?", name)


def current_user() -> User | None:
    """HTTP Basic with an application password; a bad one is an error even on reads."""
    if "user" in g:
        return g.user
    if "auth_error" in g:
        raise g.auth_error
    try:
        g.user = _authenticate(request.headers.get("Authorization", ""))
    except ApiError as exc:
        g.auth_error = exc  # one failed login per request, however often it is asked
        raise
    return g.user


def _authenticate(header: str) -> User | None:
    if header[:6].lower() != "basic ":
        return None
    guard.check_login_allowed()
    try:
        name, _, password = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        guard.login_failed()
        raise ApiError(401, "invalid_username", "Unknown username.") from None
    user = calendar().users.authenticate(name, password)
    if user is None:
        guard.login_failed()
        if any(u.name == name for u in calendar().users.users()):
            raise ApiError(401, "incorrect_password",
                           "The provided password is an invalid application password.")
        raise ApiError(401, "invalid_username", "Unknown username.")
    return user


# -- responses -----------------------------------------------------------------
def respond(body: object, status: int = 200, headers: dict | None = None) -> Response:
    try:
        args = request.args
    except UnicodeDecodeError:  # raw bytes that are not UTF-8: `params` answers 400
        args = {}
    if isinstance(body, dict) and args.get("_fields"):
        body = _only_fields(body, args["_fields"])
    text = json.dumps(body, indent=4) if "_pretty" in args else dumps(body)
    response = Response(text, status=status, content_type="application/json; charset=UTF-8")
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _only_fields(body: dict, spec: str) -> dict:
    wanted = [f.strip() for f in spec.split(",") if f.strip()]
    out: dict = {}
    for path in wanted:
        head, _, rest = path.partition(".")
        if head not in body:
            continue
        if rest and isinstance(body[head], dict):
            out.setdefault(head, {}).update(_only_fields(body[head], rest))
        elif rest and isinstance(body[head], list):
            out[head] = [_only_fields(i, rest) if isinstance(i, dict) else i
                         for i in body[head]]
        else:
            out[head] = body[head]
    return out


def allowed_verbs(resource: Resource | None, single: bool) -> list[str]:
    """The verbs the current caller may use on a route, for the Allow header."""
    verbs = ["GET"]
    try:
        user = current_user()
    except ApiError:
        user = None
    if resource is not None and user is not None and user.can("edit") and (
            not resource.is_term or user.can(term_capability(resource))):
        verbs = list(SINGLE_VERBS) if single else ["GET", "POST"]
    return verbs


# -- record lookup -------------------------------------------------------------
def _not_found(resource: Resource, record_id: int) -> ApiError:
    if resource.name == "events":
        return ApiError(404, "rest-event-not-found", f"Event with ID {record_id} does not exist.")
    return errors.invalid({"id": "Invalid parameter."})


def lookup(resource: Resource, record_id: int | None = None, slug: str | None = None
           ) -> Record:
    catalog = calendar().catalog
    if slug is not None:
        record = catalog.by_slug(resource.name, slug)
        if record is None:
            if resource.name == "events" and request.method in ("POST", "PUT", "PATCH"):
                raise ApiError(404, "rest-event-not-found", "Event with ID 0 does not exist.")
            raise errors.invalid({"slug": "Invalid parameter."})
        return record
    assert record_id is not None
    record = catalog.get(record_id)
    if record is None and resource.name == "events":
        record = occurrence(record_id)
    if record is None:
        raise _not_found(resource, record_id)
    if record.collection != resource.name:
        if resource.name == "events":
            raise ApiError(400, "rest-invalid-event-id", "The specified ID is not a valid event.")
        raise errors.invalid({"id": "Invalid parameter."})
    return record


def occurrence(record_id: int) -> Record | None:
    """One occurrence of a recurring event, read on its own. It is written through
    its series: a change of one date goes in the series' `recurrence.changes`."""
    cal = calendar()
    record = occurrences.of(cal.catalog.view(), cal.service.site_now().date()).get(record_id)
    if record is not None and request.method not in ("GET", "HEAD"):
        series = record.data["series_id"]
        raise errors.invalid({"id": f"Event {record_id} is one occurrence of event {series}: "
                                    f"write to event {series} (recurrence.changes for one "
                                    f"date)."})
    return record


def check_readable(record: Record) -> None:
    resource = record.resource
    user = current_user()
    if resource.name == "events" and record.status == "trash":
        raise ApiError(403, "event-no-longer-available", "This event is no longer available")
    if not may_read(user, record):
        raise ApiError(403, f"{resource.singular}-not-accessible",
                       f"The requested {resource.singular} is not accessible")


# -- views -----------------------------------------------------------------------
bp = Blueprint("api", __name__)


@bp.route("/", methods=["GET"], strict_slashes=False)
def namespace_index() -> Response:
    return respond(discovery.namespace_index(rest_root(), lists.request_defaults(calendar().reader)))


@bp.route("/doc", methods=["GET"], strict_slashes=False)
def doc() -> Response:
    # Where this interface answers, port included (the plugin drops the port, which
    # sends clients of a site on a non-default port to the wrong server).
    return respond(openapi.openapi_document(rest_root() + "/",
                                            lists.request_defaults(calendar().reader)))


@bp.route(f"/<any({COLLECTIONS}):collection>", methods=["GET", "POST"], strict_slashes=False)
def collection_view(collection: str) -> Response:
    resource = RESOURCES[collection]
    if request.method == "GET":
        return list_response(resource)
    service = calendar().service
    record, _new = service.create(collection, params(), current_user())
    body = representer().represent(record, single=False)
    if resource.is_term:
        body = representer().term(record, single=True, allow=tuple(SINGLE_VERBS))
    return respond(body, 201)


@bp.route(f"/<any({COLLECTIONS}):collection>/<int:record_id>", methods=list(SINGLE_VERBS),
          strict_slashes=False)
def single_view(collection: str, record_id: int) -> Response:
    return _single(RESOURCES[collection], record_id=record_id)


@bp.route("/<any(events,venues,organizers):collection>/by-slug/<path:slug>",
          methods=list(SINGLE_VERBS), strict_slashes=False)
def slug_view(collection: str, slug: str) -> Response:
    slug = slug.rstrip("/")
    if not slug or "/" in slug:
        raise ApiError(404, "rest_no_route", errors.NO_ROUTE)
    body_slug = params().get("slug") if request.method != "GET" else None
    return _single(RESOURCES[collection], slug=body_slug if isinstance(body_slug, str)
                   and body_slug else slug)


def list_response(resource: Resource) -> Response:
    """`GET /{collection}`: the list answered from this request's catalog version; a
    repeated request is answered from `list_memo` without parsing it again."""
    cal, user = calendar(), current_user()
    view = cal.catalog.view()
    key = (resource.name, request.query_string, lists.caller(user), public_url(),
           rest_root(), cal.reader.clock())
    memo = list_memo.of(view)
    hit = memo.get(key)
    if hit is not None:
        return hit.response()
    ctx = ListContext(cal.reader, view, representer(), user,
                      current_app.config.get("MAX_INCLUDE_IDS", 100))
    answer = lists.answer(ctx, resource, params())
    if request.args.get("_fields") or "_pretty" in request.args:
        return respond(answer.body, answer.status, answer.headers)
    finished = list_memo.finish(answer, ", ".join(allowed_verbs(resource, False)))
    memo.put(key, finished)
    return finished.response()


def _single(resource: Resource, record_id: int | None = None, slug: str | None = None
            ) -> Response:
    service = calendar().service
    rep = representer()
    user = current_user()
    if request.method in ("GET", "HEAD"):
        record = lookup(resource, record_id, slug)
        check_readable(record)
        if resource.is_term:
            return respond(rep.term(record, single=True, allow=tuple(allowed_verbs(
                resource, True))))
        return respond(rep.represent(record, single=True))
    body = params()
    record = _write_target(resource, body, user, record_id, slug)
    precondition = _if_match(rep) if "If-Match" in request.headers else None
    if request.method == "DELETE":
        before = rep.represent(record) if resource.is_term else None
        result = service.delete(record, user, precondition)  # `force` is ignored
        return respond(before if before is not None else rep.represent(result))
    updated = service.update(record, body, user, precondition)
    if resource.is_term:
        return respond(rep.term(updated, single=True, allow=tuple(SINGLE_VERBS)))
    return respond(rep.represent(updated))


def body_etag(data: bytes) -> str:
    """Strong ETag of a response body: a hash of its exact bytes."""
    return '"' + hashlib.blake2b(data, digest_size=16).hexdigest() + '"'


def _if_match(rep: Representer):
    """If-Match against the ETag a GET of the record answers now; 412 when it moved on."""
    wanted = [t.strip() for t in request.headers.get("If-Match", "").split(",")]

    def check(current: Record) -> None:
        if "*" in wanted:
            return
        if current.resource.is_term:
            body = rep.term(current, single=True, allow=tuple(allowed_verbs(
                current.resource, True)))
        else:
            body = rep.represent(current, single=True)
        if body_etag(dumps(body).encode()) not in wanted:
            raise ApiError(412, "rest_precondition_failed",
                           f"The {current.resource.singular} has changed since it was read "
                           "(If-Match does not match its current ETag).")

    return check


def _write_target(resource: Resource, body: dict, user: User | None,
                  record_id: int | None, slug: str | None) -> Record:
    """The record a write addresses, with the plugin's order of checks: parameters
    (unknown venue/organizer/term ids are parameter errors), then permission, then
    the handler's own errors (an unknown event is the handler's 404)."""
    try:
        record = lookup(resource, record_id, slug)
    except ApiError as exc:
        if exc.code == "rest_invalid_param":
            raise
        if request.method != "DELETE":
            calendar().service.check_body(resource, body, None)
        if user is None:
            raise errors.forbidden(False) from None
        raise
    if request.method != "DELETE":
        calendar().service.check_body(resource, body, record)
    if user is None:
        raise errors.forbidden(False)
    return record


def media(path: str) -> Response:
    found = calendar().tree.media_file(f"media/{path}")
    if found is None:
        raise NotFound()
    return send_file(found)


# -- the shared repository ---------------------------------------------------------
SYNC_WEBHOOK_PATH = "/wp-json/calendar/v1/sync"


def sync_webhook() -> Response:
    """A forge's push webhook: once the signature is checked, fetch and integrate the
    remote branch, and answer after that, so the next request sees what was merged."""
    sync = calendar().remote_sync
    assert sync is not None  # the route exists only with a remote
    body = request.get_data(cache=False)
    if not verify_webhook(request.headers.get, body, sync.settings.webhook_secret):
        why = ("this server has no webhook secret configured" if not
               sync.settings.webhook_secret else "the signature is missing or wrong")
        raise ApiError(401, "calendar_sync_unauthorized",
                       f"The webhook was refused: {why}. Nothing was fetched.")
    try:
        ref = pushed_ref(body)
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ApiError(400, "calendar_sync_bad_payload", "The webhook's body is not JSON "
                       f"this server can read ({exc}); send it as application/json. "
                       "Nothing was fetched.") from None
    if ref and ref != f"refs/heads/{sync.branch}":  # a pull request's branch, a tag
        return respond({"state": "ignored", "ref": ref})
    result = sync.exchange()
    if result.error:
        raise ApiError(503, "calendar_sync_failed",
                       f"The shared repository could not be synced: {result.error}.")
    return respond({"state": result.state, "head": result.head,
                    "changed": sorted(result.changed)})


def _sync_header(response: Response) -> Response:
    """After a write: "pushed" (it is in the shared repository) or "queued" (it is
    committed here and pushed as soon as the remote takes it: `sync status`)."""
    sync = calendar().remote_sync
    outcome = sync.take_outcome() if sync is not None else ""
    if outcome:
        response.headers["X-Calendar-Sync"] = outcome
    return response


# -- errors and common headers ------------------------------------------------------
def _api_error(exc: ApiError) -> Response:
    response = respond(exc.body(), exc.status)
    if getattr(exc, "retry_after", None):
        response.headers["Retry-After"] = str(exc.retry_after)  # type: ignore[attr-defined]
    return response


def _http_error(exc: HTTPException) -> Response:
    status = exc.code or 500
    if status == 404:
        return respond(ApiError(404, "rest_no_route", errors.NO_ROUTE).body(), 404)
    if status == 405:
        response = respond(ApiError(405, "rest_no_route", errors.NO_ROUTE).body(), 405)
        response.headers["Allow"] = ", ".join(exc.valid_methods or [])  # type: ignore[attr-defined]
        return response
    if status == 413:
        limit = current_app.config["MAX_CONTENT_LENGTH"]
        return respond(ApiError(413, "rest_request_too_large",
                                f"The request body is larger than {limit} bytes.").body(), 413)
    return respond(ApiError(status, "rest_http_error", exc.description or exc.name).body(),
                   status)


def _unexpected(exc: Exception) -> Response:
    current_app.logger.exception("unexpected error")
    return respond(ApiError(500, "rest_internal_error",
                            "The server could not complete the request.").body(), 500)


# Anonymous readers (and shared caches) may keep a GET briefly, then must revalidate
# with If-None-Match, which costs a 304; answers for a logged-in user are never stored.
PUBLIC_CACHE_CONTROL = "public, max-age=10, must-revalidate"
PRIVATE_CACHE_CONTROL = "private, no-store"


def _http_caching(response: Response) -> Response:
    """Strong ETag on every successful GET (a hash of the exact bytes, so it changes
    whenever anything the response depends on does); If-None-Match answers 304."""
    if request.method not in ("GET", "HEAD") or response.status_code != 200 or (
            response.direct_passthrough or response.is_streamed):
        return response
    etag = response.headers.get("ETag")
    if not etag:
        etag = response.headers["ETag"] = body_etag(response.get_data())
    response.headers["Cache-Control"] = (
        PRIVATE_CACHE_CONTROL if "Authorization" in request.headers else PUBLIC_CACHE_CONTROL)
    response.headers["Vary"] = "Authorization"
    wanted = request.headers.get("If-None-Match", "")
    if wanted and (wanted.strip() == "*" or etag in [t.strip() for t in wanted.split(",")]):
        response.status_code = 304
        response.set_data(b"")
        for header in ("Content-Type", "Content-Length", "X-TEC-Total", "X-TEC-TotalPages"):
            response.headers.pop(header, None)
    return response


def _common_headers(response: Response) -> Response:
    base = current_app.config["BASE_PATH"]
    # Lists set their own RFC 8288 next/prev links: keep them after the discovery link.
    own_links = response.headers.get("Link")
    response.headers["Link"] = f'<{site_url().rstrip("/")}/wp-json/>; rel="https://api.w.org/"' + (
        f", {own_links}" if own_links else "")
    if request.blueprint != "site_files":  # the website is for search engines
        response.headers["X-Robots-Tag"] = "noindex"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Access-Control-Expose-Headers"] = "X-WP-Total, X-WP-TotalPages, Link"
    response.headers["Access-Control-Allow-Headers"] = (
        "Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, X-TEC-EEA")
    if "Allow" not in response.headers and request.path.startswith(base):
        rest = request.path[len(base):].strip("/").split("/")
        resource = RESOURCES.get(rest[0]) if rest and rest[0] else None
        single = len(rest) > 1
        if resource is not None or not rest[0]:
            response.headers["Allow"] = ", ".join(allowed_verbs(resource, single))
    return _http_caching(response)


class _PathAndMethod:
    """WSGI middleware: case-insensitive API paths and the WordPress method override."""

    def __init__(self, wsgi_app, base_path: str) -> None:
        self.wsgi_app = wsgi_app
        self.prefix = "/wp-json"

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.lower().startswith(self.prefix):
            environ["PATH_INFO"] = path.lower()
        override = environ.get("HTTP_X_HTTP_METHOD_OVERRIDE")
        query = environ.get("QUERY_STRING", "")
        if "_method=" in query:
            override = dict(parse_qsl(query)).get("_method", override)
        if override and override.upper() in SINGLE_VERBS:
            environ["REQUEST_METHOD"] = override.upper()
        return self.wsgi_app(environ, start_response)


def install(app: Flask) -> None:
    base = app.config["BASE_PATH"].rstrip("/")
    app.register_blueprint(bp, url_prefix=base)
    app.add_url_rule("/media/<path:path>", "media", media)
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
    app.after_request(_common_headers)
    if app.extensions["calendar"].remote_sync is not None:
        app.add_url_rule(SYNC_WEBHOOK_PATH, "sync_webhook", sync_webhook, methods=["POST"])
        app.after_request(_sync_header)
    guard.install(app)
    app.wsgi_app = _PathAndMethod(app.wsgi_app, base)  # type: ignore[method-assign]
