"""The production app plus `/bench/bare`: the same bytes as `GET /events`, served by a
bare Flask view (the reference for "a warm response within 2x of a bare endpoint")."""

from flask import Response

from calendar_app.http.wsgi import app

_bare: dict[str, bytes] = {}


@app.route("/bench/bare")
def bare() -> Response:
    if "body" not in _bare:
        with app.test_client() as client:
            _bare["body"] = client.get("/wp-json/tribe/events/v1/events").data
    return Response(_bare["body"], content_type="application/json; charset=UTF-8")
