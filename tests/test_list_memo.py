"""Finished list responses kept per catalog version (http/list_memo.py): a repeated
`GET /{collection}` is answered without parsing it again, with the same status, bytes
and headers as the first time; anything the answer depends on (the query as sent, who
asks, the address asked at, the clock, the catalog version) makes a new one."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time

import pytest
from conftest import BASE, NOW
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.catalog import discovery, lists
from calendar_app.http.app import create_app


@pytest.fixture
def memo_app(config: dict):
    app = create_app(config)
    yield app
    app.extensions["calendar"].close()


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every list answered the long way (parsed, looked up or built), in order."""
    seen: list[str] = []
    real = lists.answer

    def counting(ctx, resource, raw):
        seen.append(resource.name)
        return real(ctx, resource, raw)

    monkeypatch.setattr(lists, "answer", counting)
    return seen


def _same(first, second) -> None:
    assert second.status_code == first.status_code
    assert second.data == first.data
    assert sorted(second.headers.items()) == sorted(first.headers.items())


def test_a_repeated_list_is_answered_from_the_memo_byte_for_byte(memo_app, answers) -> None:
    client = memo_app.test_client()
    first = client.get(BASE + "/events?per_page=2", headers={"Origin": "https://a.example"})
    second = client.get(BASE + "/events?per_page=2", headers={"Origin": "https://a.example"})
    assert answers == ["events"]
    _same(first, second)
    h = second.headers
    total = int(h["X-WP-Total"])
    assert total > 2 and h["X-WP-TotalPages"] == str(-(-total // 2))
    assert h["X-TEC-Total"] == h["X-WP-Total"]
    assert second.get_json()["total"] == total and len(second.get_json()["events"]) == 2
    assert h["Content-Type"] == "application/json; charset=UTF-8"
    assert h["Content-Length"] == str(len(second.data))
    assert h["Link"].startswith('<http://localhost/wp-json/>; rel="https://api.w.org/", <')
    assert h["Link"].endswith('page=2>; rel="next"')
    assert h["ETag"].startswith('"') and h["Allow"] == "GET"
    assert h["Cache-Control"] == "public, max-age=10, must-revalidate"
    assert h["Vary"] == "Authorization" and h["Access-Control-Allow-Origin"] == "*"
    assert h["X-Content-Type-Options"] == "nosniff" and h["X-Robots-Tag"] == "noindex"
    # Another query, collection or spelling of the same query is its own entry.
    client.get(BASE + "/events?per_page=3")
    client.get(BASE + "/events?per_page=2&page=1")
    client.get(BASE + "/venues")
    client.get(BASE + "/venues")
    assert answers == ["events", "events", "events", "venues"]


def test_a_hit_revalidates_with_304(memo_app) -> None:
    client = memo_app.test_client()
    etag = client.get(BASE + "/events").headers["ETag"]
    again = client.get(BASE + "/events", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    assert "Content-Type" not in again.headers and "X-TEC-Total" not in again.headers
    assert again.headers["ETag"] == etag
    assert client.get(BASE + "/events", headers={"If-None-Match": '"other"'}).status_code == 200


def test_a_write_starts_afresh_and_each_caller_gets_their_own(memo_app, admin, answers) -> None:
    client = memo_app.test_client()
    before = client.get(BASE + "/events")
    created = client.post(BASE + "/events", headers=admin, json={
        "title": "Memo draft", "status": "draft", "start_date": "2026-11-25 10:00:00",
        "end_date": "2026-11-25 11:00:00"})
    assert created.status_code == 201
    draft = created.get_json()["id"]
    assert client.get(BASE + "/events").data == before.data  # a draft: not public
    mine = client.get(BASE + "/events?per_page=50", headers=admin)
    assert mine.headers["Cache-Control"] == "private, no-store"
    assert mine.headers["Allow"] == "GET, POST"
    assert draft in [e["id"] for e in mine.get_json()["events"]]
    public = client.get(BASE + "/events?per_page=50")
    assert draft not in [e["id"] for e in public.get_json()["events"]]
    assert public.headers["Allow"] == "GET"
    published = client.post(BASE + f"/events/{draft}", headers=admin, json={"status": "publish"})
    assert published.status_code == 200
    after = client.get(BASE + "/events?per_page=50")
    assert int(after.headers["X-WP-Total"]) == int(public.headers["X-WP-Total"]) + 1
    assert draft in [e["id"] for e in after.get_json()["events"]]
    assert after.headers["ETag"] != public.headers["ETag"]
    # The same query was answered anew after each write.
    assert answers.count("events") == 5


def test_the_address_asked_at_is_part_of_the_answer(memo_app) -> None:
    client = memo_app.test_client()
    one = client.get(BASE + "/events", base_url="http://one.example")
    two = client.get(BASE + "/events", base_url="http://two.example:8080")
    assert one.get_json()["rest_url"].startswith("http://one.example/wp-json/")
    assert two.get_json()["rest_url"].startswith("http://two.example:8080/wp-json/")
    assert two.headers["Link"].startswith("<http://two.example:8080/wp-json/>")


def test_the_clock_is_part_of_the_answer(memo_app, answers) -> None:
    client = memo_app.test_client()
    cal = memo_app.extensions["calendar"]
    today = client.get(BASE + "/events").get_json()["rest_url"]
    assert "start_date=2026-11-20 00:00:00" in today
    later = NOW + dt.timedelta(days=3)
    cal.reader = dataclasses.replace(cal.reader, clock=lambda: later)
    moved = client.get(BASE + "/events").get_json()["rest_url"]
    assert "start_date=2026-11-23 00:00:00" in moved
    assert answers == ["events", "events"]


def test_shaped_answers_and_errors_are_not_kept(memo_app, answers) -> None:
    client = memo_app.test_client()
    plain = client.get(BASE + "/events?per_page=2")
    fields = client.get(BASE + "/events?per_page=2&_fields=total")
    assert fields.get_json() == {"total": plain.get_json()["total"]}
    assert client.get(BASE + "/events?per_page=2&_fields=total").get_json() == fields.get_json()
    pretty = client.get(BASE + "/events?per_page=2&_pretty")
    assert pretty.data.startswith(b"{\n    ") and pretty.get_json() == plain.get_json()
    for _ in range(2):
        bad = client.get(BASE + "/events?per_page=abc")
        assert bad.status_code == 400 and bad.get_json()["code"] == "rest_invalid_param"
        assert _raw(client, b"search=%ff").status_code == 400
        raw = _raw(client, b"search=\x80&_pretty")  # not even percent-encoded
        assert raw.status_code == 400 and raw.get_json()["code"] == "rest_invalid_param"
    assert client.get(BASE + "/events?per_page=2").data == plain.data
    assert answers == ["events", "events", "events", "events", "events", "events"]


def _raw(client, query: bytes):
    """GET /events with this query string, byte for byte as a client could send it."""
    return client.get(BASE + "/events", environ_overrides={"QUERY_STRING": query.decode("latin-1")})


_NAMES = [p.name for p in discovery.LIST_PARAMS["events"]] + ["_fields", "_pretty", "x[y]"]
_VALUES = st.one_of(
    st.sampled_from(["", "1", "0", "2", "abc", "true", "2027-01-01", "now", "+1 week",
                     "-1", "99999999999999999999", "jazz", "a,b", "publish", "total,events"]),
    st.text(max_size=12))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(st.sampled_from(_NAMES), _VALUES), max_size=4),
       raw=st.binary(max_size=8))
def test_any_query_twice_gives_the_same_answer(memo_app, pairs, raw) -> None:
    """Hostile and random queries: never a 500, and the second answer (from the memo
    when the first was one) is the first one again."""
    from urllib.parse import urlencode

    client = memo_app.test_client()
    query = urlencode(pairs).encode() + (b"&" + raw if raw else b"")
    started = time.monotonic()
    first, second = _raw(client, query), _raw(client, query)
    assert time.monotonic() - started < 5
    assert first.status_code < 500, (query, first.data[:300])
    _same(first, second)
