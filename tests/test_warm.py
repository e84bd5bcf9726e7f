"""A preloaded master makes ahead what every worker's first lists need
(`Calendar.warm`, gunicorn_conf.when_ready), and term counts stay right."""

from __future__ import annotations

import types

from test_index import BASE, setup  # noqa: F401 - `setup` is a fixture

from calendar_app.http import gunicorn_conf


def naive_count(view, term) -> int:
    return sum(1 for i in view.backlinks.get((term.collection, term.slug), ())
               if (r := view.records.get(i)) is not None and r.collection == "events"
               and r.status == "publish")


def test_when_ready_warms_the_master_before_the_fork(setup) -> None:  # noqa: F811
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    view = cal.catalog.current
    assert not view._derived
    logged = []
    server = types.SimpleNamespace(app=types.SimpleNamespace(callable=app),
                                   log=types.SimpleNamespace(info=lambda *a: logged.append(a)))
    gunicorn_conf.when_ready(server)
    today = cal.reader.site_now().date()
    assert {("event-table", today), "term-counts", "published-events",
            "known-ids"} <= set(view._derived)
    terms = view.all("categories") + view.all("tags")
    counts = view._derived["term-counts"]
    assert len(counts) == len(terms)
    assert all(counts[(t.collection, t.slug)] == naive_count(view, t) for t in terms)
    assert any(counts.values())  # the fixture has published events in its terms
    assert logged
    # The first list reads what was made, and the counts it embeds are those.
    table = view._derived[("event-table", today)]
    body = app.test_client().get(f"{BASE}/events?start_date=2000-01-01").get_json()
    assert view._derived[("event-table", today)] is table
    for event in body["events"]:
        for cat in event["categories"]:
            assert cat["count"] == counts[("categories", cat["slug"])]


def test_term_counts_follow_writes(setup, auth) -> None:  # noqa: F811
    _content, make = setup
    app = make()
    cal = app.extensions["calendar"]
    cal.warm()
    before = cal.catalog.current
    jazz = before.by_slug("categories", "jazz")
    published = [r for r in before.linked("categories", "jazz")
                 if r.collection == "events" and r.status == "publish"]
    assert published and before.term_count(jazz) == len(published)
    r = app.test_client().post(f"{BASE}/events/{published[0].id}", json={"status": "draft"},
                               headers=auth("administrator"))
    assert r.status_code == 200, r.get_json()
    after = cal.catalog.current
    assert after is not before
    assert after.term_count(after.by_slug("categories", "jazz")) == len(published) - 1
    assert before.term_count(jazz) == len(published)  # an old version keeps its own
    assert all(after.term_count(t) == naive_count(after, t)
               for t in after.all("categories") + after.all("tags"))
