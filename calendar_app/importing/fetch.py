"""Reading a URL or a file for the importers, defensively.

The standard library's urllib is enough (one GET at a time per thread, Basic auth,
conditional requests), so no HTTP package is added. Every read has a time limit, a
size limit, a bounded number of redirects (a loop ends as an error), and retries with
backoff for what may pass (timeouts, 429, 5xx).
"""

from __future__ import annotations

import base64
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..model.formats import digits

MAX_BODY = 50 << 20  # bytes: a larger answer or file is refused, not half read
TIMEOUT = 30.0  # seconds per request
RETRIES = 3
MAX_REDIRECTS = 5
USER_AGENT = "calendar-app importer"


class FetchError(Exception):
    """A source that could not be read; the message names it and says why."""


@dataclass
class Response:
    url: str
    status: int  # 200, or 304 (not modified: empty body)
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def etag(self) -> str:
        return self.headers.get("etag", "")

    @property
    def last_modified(self) -> str:
        return self.headers.get("last-modified", "")


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS
    max_repeats = 1  # the same URL twice is a loop


def normalize_url(location: str) -> str:
    """webcal:// is http(s) under another name (Apple, Google); others as given."""
    if location.lower().startswith("webcal://"):
        return "https://" + location[len("webcal://"):]
    return location


def is_url(location: str) -> bool:
    return urllib.parse.urlsplit(normalize_url(location)).scheme in ("http", "https")


def read_file(path: Path, limit: int = MAX_BODY) -> bytes:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise FetchError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FetchError(f"{path}: larger than {limit} bytes; not read")
    return data


def basic_auth(user: str, password: str) -> str:
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def get(url: str, headers: dict[str, str] | None = None, limit: int = MAX_BODY,
        timeout: float = TIMEOUT, retries: int = RETRIES,
        sleep: Callable[[float], None] = time.sleep) -> Response:
    """GET `url`; raises FetchError (naming the URL) once retries are spent."""
    url = normalize_url(url)
    if not is_url(url):
        raise FetchError(f"{url}: not an http(s) URL")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT,
                                                   **(headers or {})})
    opener = urllib.request.build_opener(_Redirects())
    delay = 0.5
    for attempt in range(retries + 1):
        try:
            return _once(opener, request, limit, timeout)
        except _Retry as exc:
            if attempt == retries:
                raise FetchError(f"{url}: {exc} (after {retries + 1} tries)") from None
            sleep(exc.wait if exc.wait is not None else delay)
            delay = min(delay * 2, 30.0)
    raise AssertionError("unreachable")


class _Retry(Exception):
    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def _once(opener: urllib.request.OpenerDirector, request: urllib.request.Request,
          limit: int, timeout: float) -> Response:
    url = request.full_url
    try:
        with opener.open(request, timeout=timeout) as answer:
            length = answer.headers.get("Content-Length")
            if length and digits(length) and int(length) > limit:
                raise FetchError(f"{url}: the answer is {length} bytes, more than "
                                 f"{limit}; not read")
            body = answer.read(limit + 1)
            if len(body) > limit:
                raise FetchError(f"{url}: the answer is more than {limit} bytes; not read")
            return Response(answer.geturl(), answer.status, body,
                            {k.lower(): v for k, v in answer.headers.items()})
    except urllib.error.HTTPError as exc:
        if exc.code == 304:
            return Response(url, 304, b"", {k.lower(): v for k, v in exc.headers.items()})
        if exc.code in (301, 302, 303, 307, 308):
            raise FetchError(f"{url}: too many redirects (a redirect loop?)") from None
        if exc.code == 429 or exc.code >= 500:
            after = exc.headers.get("Retry-After", "") if exc.headers else ""
            wait = min(float(after), 60.0) if digits(after) else None
            raise _Retry(f"HTTP {exc.code} {exc.reason}", wait) from None
        hint = " (wrong user or password?)" if exc.code in (401, 403) else ""
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}{hint}") from None
    except (TimeoutError, ConnectionError) as exc:
        raise _Retry(f"no answer ({exc.__class__.__name__})") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, ConnectionError)):
            raise _Retry(f"no answer ({exc.reason})") from None
        raise FetchError(f"{url}: {exc.reason}") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise _Retry(f"the connection failed ({exc.__class__.__name__}: {exc})") from None


def conditional_headers(etag: str, last_modified: str) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers
