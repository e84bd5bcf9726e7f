"""Finished `GET /{collection}` responses of one catalog version, by the request as sent.

`lists.answer` keeps answers by the *checked* query, so a repeated list still parses its
parameters, reads the clock into default dates and builds a Representer before it can
look (most of a warm list's time). Here the key is what that parse is made from: the
raw query string, who asks, the two URLs answers are written with, and the clock (whole
seconds: every default and relative date is read against it). A hit then costs one
lookup and a Response made from bytes and headers prepared once. Kept on the version
(`CatalogVersion.derive`), so a write or a change from outside starts afresh.

Only plain answers are kept (`_fields`, `_pretty` are shaped per request) and only
answers: a bad parameter raises before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Response

from ..catalog.lists import Answer, Recent
from ..catalog.version import CatalogVersion

CONTENT_TYPE = "application/json; charset=UTF-8"


@dataclass(frozen=True)
class Finished:
    """One list response as sent, before the app's common headers."""

    status: int
    data: bytes
    headers: tuple[tuple[str, str], ...]

    def response(self) -> Response:
        # A one-item list body: werkzeug takes it as is, with the length given here.
        return Response([self.data], status=self.status, headers=list(self.headers))


def finish(answer: Answer, allow: str) -> Finished:
    data = answer.text.encode()
    headers = [("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(data))),
               *answer.headers.items(), ("Allow", allow)]
    if answer.etag:
        headers.append(("ETag", answer.etag))
    return Finished(answer.status, data, tuple(headers))


def of(view: CatalogVersion) -> Recent:
    """The finished responses kept on `view`."""
    return view.derive("list-responses", Recent)  # type: ignore[return-value]
