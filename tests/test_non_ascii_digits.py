"""Digits that are not ASCII ("¹", "²", "٣"): `str.isdigit()` takes them, `int()` and
`float()` refuse them. Every place that reads a number from what a person or another
server sent checks with `formats.digits`; before, an organizer "¹" posted on the editing
page was a 500 (found by test_admin_fuzz's random forms)."""

from __future__ import annotations

import pytest
from conftest import commit_count, git, sign_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_admin_pages import form_of
from test_importing import serve
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Request, Response

from calendar_app.importing import fetch
from calendar_app.importing.tec import _post
from calendar_app.model import rule_form
from calendar_app.model.formats import digits
from calendar_app.site.htmltext import html_to_text

JAZZ_NIGHT = 106
# Characters str.isdigit() accepts that int() refuses: superscripts, circled digits...
ODD_DIGIT = st.sampled_from([c for c in map(chr, range(0x10000))
                             if c.isdigit() and not c.isdecimal()])
ODD_NUMBER = st.text(ODD_DIGIT, min_size=1, max_size=3)


@pytest.fixture
def app(config, signed_users):
    from calendar_app.http.app import create_app

    return create_app(config)


def test_the_characters_are_what_int_refuses() -> None:
    for text in ("¹", "²³", "①"):
        assert text.isdigit() and not digits(text)
        with pytest.raises(ValueError):
            int(text)


def test_editing_pages_answer_every_odd_number_without_a_500(client, content) -> None:
    assert sign_in(client, "editor").status_code == 303
    path = f"/admin/events/{JAZZ_NIGHT}/"
    data = form_of(client, path)
    before = commit_count(content)

    @settings(max_examples=4, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(ODD_NUMBER, st.sampled_from(["publish", "check"]))
    def run(number: str, action: str) -> None:
        posted = {**data, "organizer": [number], "venue": number, "action": action,
                  "recurrence.kind": "rule", "recurrence.unit": "month",
                  "recurrence.monthday": number, "recurrence.end": "count",
                  "recurrence.count": number}
        page = client.post(path, data=posted)
        assert page.status_code in ((200, 400) if action == "check" else (400, 409)), \
            page.data[:500]
        preview = client.post("/admin/api/events/preview", data={**posted, "_id": number})
        assert preview.status_code == 200 and preview.json["ok"] is False
        listing = client.get("/admin/events/", query_string={"venue": number,
                                                            "categories": number,
                                                            "paged": number})
        assert listing.status_code == 200

    run()
    assert commit_count(content) == before
    assert git(content, "status", "--porcelain") == ""


@given(ODD_NUMBER)
def test_a_rule_keeps_an_odd_monthday_and_count_as_text_for_the_check(number: str) -> None:
    form = MultiDict({"r.kind": "rule", "r.interval": "1", "r.unit": "month",
                      "r.monthday": number, "r.end": "count", "r.count": number})
    block = rule_form.read(form, "r")
    assert block["on"] == number and block["count"] == number  # refused by validation
    minus = rule_form.read(MultiDict({**form, "r.monthday": f"-{number}"}), "r")
    assert minus["on"] == f"-{number}"


@given(ODD_NUMBER)
def test_a_list_starting_at_an_odd_number_counts_from_one(number: str) -> None:
    assert html_to_text(f'<ol start="{number}"><li>first</li><li>second</li></ol>') == \
        "1. first\n2. second"


@given(ODD_NUMBER)
def test_an_imported_posts_odd_author_is_no_author(number: str) -> None:
    assert _post({"id": 7, "author": number, "title": "x"}, "title", ())["author"] is None


def test_an_odd_retry_after_is_the_usual_back_off() -> None:
    waits: list[float] = []

    @Request.application
    def busy(request: Request) -> Response:
        return Response("busy", 503, headers={"Retry-After": "²"})

    with serve(busy) as url, pytest.raises(fetch.FetchError, match="HTTP 503"):
        fetch.get(url + "/x", sleep=waits.append)
    assert waits == [0.5, 1.0, 2.0]
