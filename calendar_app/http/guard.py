"""What protects the interface: limits, rate limits, login throttling, CORS and security
headers. Every refusal uses the interface's error shape.

Counters live in the worker's memory: with N workers a client gets at most N times the
configured allowance, which is enough to stop password guessing and floods.
"""

from __future__ import annotations

import io
import threading
import time
from collections import deque

from flask import Flask, Response, current_app, request

from ..model.errors import ApiError

DEFAULTS = {
    "MAX_QUERY_LENGTH": 4096,  # characters of query string
    "MAX_HEADER_BYTES": 16384,  # request headers together (names, values, ": ", CRLF)
    "MAX_INCLUDE_IDS": 100,  # ids in an `include`/`exclude` list
    "RATE_LIMIT": 0,  # requests per minute per client; 0 = off
    "LOGIN_MAX_FAILURES": 10,  # failed logins per client ...
    "LOGIN_WINDOW": 300,  # ... within this many seconds, then 429 until the window ends
    "CORS_ORIGINS": (),  # origins that may write with credentials
}

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "interest-cohort=()",
}


class _Window:
    """Timestamps of recent events per client, for sliding-window limits."""

    def __init__(self) -> None:
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def count(self, client: str, window: float, now: float) -> int:
        with self._lock:
            events = self._events.get(client)
            if not events:
                return 0
            while events and events[0] <= now - window:
                events.popleft()
            if not events:
                del self._events[client]
                return 0
            return len(events)

    def add(self, client: str, now: float) -> None:
        with self._lock:
            self._events.setdefault(client, deque()).append(now)
            if len(self._events) > 100_000:  # bound memory under a flood of addresses
                self._events.pop(next(iter(self._events)))

    def oldest(self, client: str) -> float:
        with self._lock:
            events = self._events.get(client)
            return events[0] if events else time.monotonic()


def _windows() -> tuple[_Window, _Window]:
    """(failed logins, requests) of this app."""
    return current_app.extensions["guard"]


def client_id() -> str:
    return request.remote_addr or "unknown"


def _too_many(message: str, retry_after: float) -> ApiError:
    error = ApiError(429, "rest_too_many_requests", message)
    error.retry_after = max(1, int(retry_after) + 1)  # type: ignore[attr-defined]
    return error


def check_login_allowed() -> None:
    _failures = _windows()[0]
    window = current_app.config["LOGIN_WINDOW"]
    now = time.monotonic()
    if _failures.count(client_id(), window, now) >= current_app.config["LOGIN_MAX_FAILURES"]:
        wait = _failures.oldest(client_id()) + window - now
        raise _too_many("Too many failed login attempts; try again later.", wait)


def login_failed() -> None:
    _windows()[0].add(client_id(), time.monotonic())


def _header_bytes(environ: dict) -> int:
    """Size of the request's headers as sent, give or take the spelling of names."""
    total = 0
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            total += len(key) - 5 + len(value) + 4
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            total += len(key) + len(value) + 4
    return total


def _before() -> None:
    config = current_app.config
    # Our own header limit, so that huge headers get the interface's shape: the
    # gunicorn configuration (gunicorn_conf.py) lets through more than this.
    if _header_bytes(request.environ) > config["MAX_HEADER_BYTES"]:
        raise ApiError(431, "rest_headers_too_large",
                       f"The request headers are larger than {config['MAX_HEADER_BYTES']} "
                       "bytes.")
    if len(request.query_string) > config["MAX_QUERY_LENGTH"]:
        raise ApiError(414, "rest_query_too_long",
                       f"The query string is longer than {config['MAX_QUERY_LENGTH']} "
                       "characters.")
    limit = config["RATE_LIMIT"]
    if limit:
        _requests = _windows()[1]
        now = time.monotonic()
        if _requests.count(client_id(), 60, now) >= limit:
            raise _too_many("Too many requests; slow down.", _requests.oldest(client_id())
                            + 60 - now)
        _requests.add(client_id(), now)
    origin = request.headers.get("Origin")
    # Browsers send Origin with every form post, our own editing pages' included.
    same_site = origin == request.host_url.rstrip("/")
    if origin and request.method not in ("GET", "HEAD", "OPTIONS") and not same_site and (
            origin not in config["CORS_ORIGINS"]):
        raise ApiError(403, "rest_cors_forbidden",
                       f"Writes from the origin {origin} are not allowed.")


def _after(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    origin = request.headers.get("Origin")
    if origin and origin in current_app.config["CORS_ORIGINS"]:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Credentials"] = "true"
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, PUT, PATCH, DELETE"
        response.headers.add("Vary", "Origin")
    elif origin:
        # Public reads from anywhere, never with the reader's credentials.
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Allow-Methods"] = "GET"
    return response


class _ChunkedBodies:
    """WSGI middleware: a body sent without a length (`Transfer-Encoding: chunked`) is
    read here, up to MAX_CONTENT_LENGTH + 1 bytes, and passed on with its length, so
    the usual check answers 413 in the interface's shape. Left alone, werkzeug stops
    reading such a stream at the limit without a word: a form was saved without its
    end, and a JSON body became "Invalid JSON". The dev server and gunicorn alike."""

    DRAIN_FACTOR = 16  # read (and drop) up to this many limits of a refused body

    def __init__(self, wsgi_app, config: dict) -> None:
        self.wsgi_app = wsgi_app
        self.config = config

    def __call__(self, environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        limit = self.config.get("MAX_CONTENT_LENGTH")
        if chunked and limit is not None and not environ.get("CONTENT_LENGTH"):
            stream = environ["wsgi.input"]
            body = _read(stream, limit + 1)
            if len(body) > limit:
                # Read the rest too (within reason): a client still sending when the
                # server closes gets a connection reset instead of the 413.
                _read(stream, limit * self.DRAIN_FACTOR, keep=False)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            del environ["HTTP_TRANSFER_ENCODING"]  # else werkzeug ignores the length
        return self.wsgi_app(environ, start_response)


def _read(stream, size: int, keep: bool = True) -> bytes:
    """Up to `size` bytes of a stream (reads may return less than asked)."""
    parts: list[bytes] = []
    left = size
    while left > 0:
        data = stream.read(min(left, 64 * 1024))
        if not data:
            break
        left -= len(data)
        if keep:
            parts.append(data)
    return b"".join(parts)


def install(app: Flask) -> None:
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    app.extensions["guard"] = (_Window(), _Window())
    app.before_request(_before)
    app.after_request(_after)
    app.wsgi_app = _ChunkedBodies(app.wsgi_app, app.config)  # type: ignore[method-assign]
