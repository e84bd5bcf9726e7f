"""The editing pages (issue 24 items 1-6): lists, forms made from the resource
descriptions, saves through the service (one commit by the signed-in user, a careful
hand edit), stale edits, `check`'s messages next to their field, roles, pickers."""

from __future__ import annotations

import re

import pytest
from conftest import BASE, commit_count, csrf_token, git, sign_in

JAZZ_NIGHT = 106  # author 1 (administrator), published, at the-blue-lantern
BLUE_LANTERN = 45
JAZZ_COLLECTIVE = 61
MUSIC, JAZZ = 1, 2


@pytest.fixture
def app(config, signed_users):
    from calendar_app.http.app import create_app

    return create_app(config)


@pytest.fixture
def editor(client):
    assert sign_in(client, "editor").status_code == 303
    return client


def commits(content) -> int:
    return commit_count(content)


def form_of(client, path: str) -> dict[str, str | list[str]]:
    """The fields a browser would post from the page's record form, untouched."""
    page = client.get(path)
    assert page.status_code == 200, page.data[:500]
    html = page.data.decode()
    form = html[html.index('id="record-form"'):html.index("</form>", html.index('id="record-form"'))]
    data: dict[str, list[str]] = {}
    for tag in re.finditer(r"<(input|textarea|select)\b([^>]*)>", form):
        kind, attrs = tag[1], tag[2]
        inner = form[tag.end():form.find(f"</{kind}>", tag.end())] if kind != "input" else ""
        name = re.search(r'\bname="([^"]+)"', attrs)
        if not name:
            continue
        value = re.search(r'\bvalue="([^"]*)"', attrs)
        if kind == "input":
            if re.search(r'type="(checkbox|radio)"', attrs) and " checked" not in attrs:
                continue
            text = value[1] if value else ""
        elif kind == "textarea":
            text = inner.replace("\n", "\r\n")  # as browsers post a textarea
        else:
            chosen = re.search(r'<option value="([^"]*)" selected', inner)
            first = re.search(r'<option value="([^"]*)"', inner)
            text = chosen[1] if chosen else first[1] if first else ""
        data.setdefault(name[1], []).append(_unescape(text))
    return {k: v if len(v) > 1 or k in ("organizer", "categories") else v[0]
            for k, v in data.items()}


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)


def post(client, path: str, data: dict, action: str = "publish"):
    return client.post(path, data={**data, "action": action})


NEW_EVENT = {"title": "Kiln Opening", "start_date": "2027-04-10T18:00",
             "end_date": "2027-04-10T20:00", "timezone": "Europe/Berlin"}


# -- pages ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", [
    "/admin/events/", "/admin/events/?tab=past", "/admin/events/?tab=drafts",
    "/admin/events/?tab=pending", "/admin/events/?tab=trash", "/admin/events/?q=jazz",
    f"/admin/events/?categories={JAZZ}", "/admin/venues/", "/admin/venues/?tab=trash",
    "/admin/organizers/", "/admin/categories/", "/admin/tags/", "/admin/events/new",
    f"/admin/events/{JAZZ_NIGHT}/", f"/admin/venues/{BLUE_LANTERN}/",
    f"/admin/organizers/{JAZZ_COLLECTIVE}/", f"/admin/categories/{JAZZ}/",
    f"/admin/events/{JAZZ_NIGHT}/duplicate", "/admin/venues/new", "/admin/tags/new"])
def test_every_page_answers_html(editor, path):
    page = editor.get(path)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert b"Sign out" in page.data


def test_anonymous_is_sent_to_sign_in(client):
    for path in ("/admin/", "/admin/events/", f"/admin/events/{JAZZ_NIGHT}/",
                 "/admin/api/venues/search?q=blue"):
        assert client.get(path).status_code == 303


def test_event_lists_search_and_filter(editor):
    page = editor.get("/admin/events/?q=jazz").data.decode()
    assert "Jazz Night: Ana Lucía Ferrer Trio" in page
    assert "Pottery" not in page
    drafts = editor.get("/admin/events/?tab=drafts").data.decode()
    assert "draft" in drafts and "Jazz Night: Ana" not in drafts


def test_form_is_drawn_from_the_description(editor):
    html = editor.get(f"/admin/events/{JAZZ_NIGHT}/").data.decode()
    assert 'type="datetime-local" value="2027-01-07T19:30"' in html
    assert 'value="The Blue Lantern (#45)"' in html and 'data-picker="venues"' in html
    assert f'name="categories" value="{JAZZ}" checked' in html
    assert 'name="tags" value="Live music, 21+"' in html
    assert 'name="recurrence.kind"' in html
    venue = editor.get(f"/admin/venues/{BLUE_LANTERN}/").data.decode()
    assert 'name="geo_lat" type="number"' in venue and 'min="-90"' in venue


# -- saving --------------------------------------------------------------------------
def test_create_event_with_a_new_venue_is_one_commit_by_the_user(editor, content):
    before = commits(content)
    data = {**form_of(editor, "/admin/events/new"), **NEW_EVENT,
            "venue.new_venue": "Kiln House", "venue.new_address": "1 Clay St",
            "venue.new_city": "Riverside"}
    done = post(editor, "/admin/events/new", data)
    assert done.status_code == 303, done.data[:2000]
    assert commits(content) == before + 1
    assert git(content, "log", "-1", "--format=%an").strip() == "editor"
    text = (content / "events/2027/kiln-opening.yaml").read_text()
    assert "start_date: 2027-04-10 18:00:00\nend_date: 2027-04-10 20:00:00" in text
    assert "timezone: Europe/Berlin" in text and "venue: kiln-house" in text
    venue = (content / "venues/kiln-house.yaml").read_text()
    assert "address: 1 Clay St" in venue and "city: Riverside" in venue


def test_edit_touches_only_the_changed_line(editor, content):
    path = f"/admin/events/{JAZZ_NIGHT}/"
    data = {**form_of(editor, path), "title": "Jazz Night, renamed"}
    done = post(editor, path, data)
    assert done.status_code == 303, done.data[:3000]
    diff = git(content, "show", "--format=", "-U0", "HEAD")
    changed = [line for line in diff.splitlines() if line[:1] in "+-"
               and not line.startswith(("+++", "---"))]
    assert sorted(changed) == sorted([
        "-title: 'Jazz Night: Ana Lucía Ferrer Trio'", "+title: 'Jazz Night, renamed'",
        "-modified: 2026-09-12 18:18:00", "+modified: 2026-11-21 04:00:00"]), changed
    assert "# Tickets go on sale in January" in (
        content / "events/2027/jazz-night-january-2027.yaml").read_text()


def test_saving_an_untouched_form_commits_nothing(editor, content):
    path = f"/admin/events/{JAZZ_NIGHT}/"
    before = commits(content)
    done = post(editor, path, form_of(editor, path))
    assert done.status_code == 303
    assert commits(content) == before
    assert b"Nothing changed" in editor.get(path).data


BAD_EVENT_INPUT = [
    ({"title": "  "}, "title", "Invalid parameter."),
    ({"end_date": "2027-01-07T18:00"}, "end_date",
     "The end date must not be before the start date."),
    ({"website": "javascript:alert(1)"}, "website", "Invalid parameter."),
    ({"timezone": "Mars/Olympus"}, "timezone", "Invalid parameter."),
    ({"start_date": "2027-03-14T02:30", "end_date": "2027-03-14T03:30",
      "timezone": "America/New_York"}, "start_date",
     ("start_date 2027-03-14 02:30:00 does not exist in America/New_York (clocks skip that "
     "hour; it would be read as 2027-03-14 03:30:00)")),
    ({"venue": "No Such Place"}, "venue", "Invalid parameter."),
    ({"recurrence.kind": "rule", "recurrence.interval": "0"}, "recurrence",
     "recurrence every: the interval must be at least 1"),
    ({"recurrence.kind": "rrule", "recurrence.rrule": "FREQ=HOURLY"}, "recurrence", ""),
    ({"start_date": "not a date"}, "start_date", "Invalid parameter."),
]


@pytest.mark.parametrize(("change", "field", "message"), BAD_EVENT_INPUT,
                         ids=[c[1] + str(i) for i, c in enumerate(BAD_EVENT_INPUT)])
def test_bad_event_input_is_shown_on_the_form_and_nothing_is_committed(
        editor, content, change, field, message):
    path = f"/admin/events/{JAZZ_NIGHT}/"
    before = commits(content)
    page = post(editor, path, {**form_of(editor, path), **change})
    assert page.status_code == 400
    html = page.data.decode()
    errors = re.search(rf'id="{field}-errors">(.*?)</div>', html, re.DOTALL)
    assert errors, html[:3000]
    if message:
        import html as h
        assert message in h.unescape(errors[1])
    assert commits(content) == before
    assert field == "recurrence" or 'aria-invalid="true"' in html


def test_bad_venue_and_term_input(editor, content):
    before = commits(content)
    path = f"/admin/venues/{BLUE_LANTERN}/"
    page = post(editor, path, {**form_of(editor, path), "geo_lat": "91"})
    assert page.status_code == 400 and b'id="geo_lat-errors"' in page.data
    page = post(editor, "/admin/tags/new", {**form_of(editor, "/admin/tags/new"),
                                            "name": "Live Music"}, "save")
    assert page.status_code == 400
    assert b"A term with the name provided already exists in this taxonomy." in page.data
    assert commits(content) == before


def test_stale_edit_shows_what_changed_and_keeps_the_input(editor, content, admin):
    path = f"/admin/events/{JAZZ_NIGHT}/"
    data = {**form_of(editor, path), "title": "Mine"}
    other = editor.post(f"{BASE}/events/{JAZZ_NIGHT}", json={"cost": "25"}, headers=admin)
    assert other.status_code == 200
    before = commits(content)
    page = post(editor, path, data)
    assert page.status_code == 409
    html = page.data.decode()
    assert "Someone saved this event" in html
    assert "<th scope=\"row\">Cost</th><td>15</td><td>25</td>" in html
    assert 'name="title" type="text" value="Mine"' in html
    assert 'name="cost" type="text" value="25"' in html  # theirs, untouched by this person
    assert commits(content) == before
    again = post(editor, path, form_of_page(html))
    assert again.status_code == 303
    text = (content / "events/2027/jazz-night-january-2027.yaml").read_text()
    assert "title: 'Mine'" in text and "cost: '25'" in text


def form_of_page(html: str) -> dict:
    """Re-post a page that was answered to a POST (a conflict)."""
    class Page:
        status_code = 200
        data = html.encode()

    class Client:
        def get(self, _path):
            return Page()

    return form_of(Client(), "")


def test_check_shows_warnings_without_saving(editor, content):
    before = commits(content)
    data = {**form_of(editor, "/admin/events/new"), **NEW_EVENT}
    page = post(editor, "/admin/events/new", data, "check")
    assert page.status_code == 200
    assert b"event has neither a venue nor an online_url" in page.data
    assert commits(content) == before


def test_likely_duplicate_venue_is_warned(editor, content):
    data = {**form_of(editor, "/admin/events/new"), **NEW_EVENT,
            "venue.new_venue": "Blue Lantern"}
    page = post(editor, "/admin/events/new", data, "check")
    assert "A venue named “The Blue Lantern” (#45) already exists" in page.text
    found = editor.get("/admin/api/venues/duplicates?name=blue%20lantern").json
    assert [v["id"] for v in found] == [BLUE_LANTERN]


def test_picker_search(editor):
    found = editor.get("/admin/api/venues/search?q=blue").json
    assert found[0] == {"id": BLUE_LANTERN, "name": "The Blue Lantern",
                        "text": "The Blue Lantern (#45)", "city": "Riverside"}
    assert editor.get("/admin/api/venues/search?q=").json == []
    assert editor.get("/admin/api/organizers/search?q=jazz").json[0]["id"] == JAZZ_COLLECTIVE


def test_duplicate_trash_and_restore(editor, content):
    copy = form_of(editor, f"/admin/events/{JAZZ_NIGHT}/duplicate")
    assert copy["title"] == "Jazz Night: Ana Lucía Ferrer Trio (copy)"
    done = post(editor, "/admin/events/new", copy)
    assert done.status_code == 303
    new_id = int(done.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    text = next(content.glob("events/2027/jazz-night-ana-lucia-ferrer-trio-copy.yaml")).read_text()
    assert "venue: the-blue-lantern" in text and "- riverside-jazz-collective" in text
    token = csrf_token(editor.get("/admin/events/").data)
    before = commits(content)
    assert editor.post(f"/admin/events/{new_id}/trash",
                       data={"csrf_token": token}).status_code == 303
    assert "status: trash" in next(content.glob("events/2027/*copy__trashed.yaml")).read_text()
    assert editor.post(f"/admin/events/{new_id}/restore",
                       data={"csrf_token": token}).status_code == 303
    assert "status: draft" in next(content.glob("events/2027/*copy.yaml")).read_text()
    assert commits(content) == before + 2


# -- time ------------------------------------------------------------------------------
def test_all_day_and_multi_day(editor, content):
    data = {**form_of(editor, "/admin/events/new"), "title": "Festival",
            "start_date": "2027-06-01T10:00", "end_date": "2027-06-03T12:00", "all_day": "true",
            "timezone": "Pacific/Kiritimati"}
    assert post(editor, "/admin/events/new", data).status_code == 303
    text = (content / "events/2027/festival.yaml").read_text()
    assert "start_date: 2027-06-01 00:00:00\nend_date: 2027-06-03 23:59:59\nall_day: true" in text


def test_same_form_same_bytes(editor, content, config, tmp_path):
    """The form posts wall times and a zone name: the file depends on nothing else
    (browsers' own zones are tried in tests/test_admin_browser.py)."""
    from conftest import make_repo

    from calendar_app.http.app import create_app

    data = {**form_of(editor, "/admin/events/new"), **NEW_EVENT}
    assert post(editor, "/admin/events/new", data).status_code == 303
    other_content = make_repo(tmp_path / "other")
    other = create_app({**config, "CONTENT_DIR": str(other_content),
                        "CACHE_DIR": str(tmp_path / "other-cache")}).test_client()
    assert sign_in(other, "editor").status_code == 303
    data["csrf_token"] = csrf_token(other.get("/admin/events/new").data)
    assert post(other, "/admin/events/new", data).status_code == 303
    path = "events/2027/kiln-opening.yaml"
    assert (content / path).read_bytes() == (other_content / path).read_bytes()


# -- recurrence --------------------------------------------------------------------------
def test_rule_builder_writes_the_block_and_preview_equals_the_interface(editor, content,
                                                                       client):
    data = {**form_of(editor, "/admin/events/new"), "title": "Kilnwork Tuesdays",
            "start_date": "2027-03-02T19:00", "end_date": "2027-03-02T21:00",
            "timezone": "America/Los_Angeles", "venue": "The Blue Lantern (#45)",
            "recurrence.kind": "rule", "recurrence.interval": "1", "recurrence.unit": "week",
            "recurrence.weekdays": "tuesday", "recurrence.end": "count",
            "recurrence.count": "6", "recurrence.exdate": "2027-03-16 19:00",
            "recurrence.change_date": ["2027-03-23T19:00", "2027-03-30 19:00"],
            "recurrence.change_action": ["title", "move"],
            "recurrence.change_value": ["Glazing night", "2027-03-31T18:00"]}
    preview = editor.post("/admin/api/events/preview", data=data).json
    assert preview["ok"], preview
    done = post(editor, "/admin/events/new", data)
    assert done_ok(done)
    text = (content / "events/2027/kilnwork-tuesdays.yaml").read_text()
    assert "recurrence:\n  every: week\n  'on': tuesday\n  count: 6\n" in text, text
    listed = client.get(f"{BASE}/events?start_date=2027-03-01&search=kilnwork").json["events"]
    assert [e["start_date"] for e in listed] == [d["start"] for d in preview["preview"]["dates"]
                                                 if not d["cancelled"]]
    titled = {d["start"]: d["title"] for d in preview["preview"]["dates"]}
    assert titled["2027-03-23 19:00:00"] == "Glazing night"
    assert "2027-03-31 18:00:00" in titled and "2027-03-16 19:00:00" not in titled
    assert preview["preview"]["summary"] == "every Tuesday at 7:00 pm, 6 times"  # en_US: 12 h
    series = int(done.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    page = editor.get(f"/admin/events/{series}/").data.decode()
    assert 'name="recurrence.count" type="number" min="1" value="6"' in page
    assert 'value="tuesday" checked' in page and "Glazing night" in page


def done_ok(response) -> bool:
    assert response.status_code == 303, response.data[:3000]
    return True


# -- roles ---------------------------------------------------------------------------------
def test_contributor_submits_for_review(client, content):
    assert sign_in(client, "contributor").status_code == 303
    form = client.get("/admin/events/new").data
    assert b"Submit for review" in form and b"Save and publish" not in form
    data = {**form_of(client, "/admin/events/new"), **NEW_EVENT}
    assert post(client, "/admin/events/new", data, "pending").status_code == 303
    assert "status: pending" in (content / "events/2027/kiln-opening.yaml").read_text()
    assert git(content, "log", "-1", "--format=%an").strip() == "contributor"
    assert client.get(f"/admin/events/{JAZZ_NIGHT}/").status_code == 403
    listed = client.get("/admin/events/").data.decode()
    assert f'href="/admin/events/{JAZZ_NIGHT}/"' not in listed  # no edit link on others'
    assert client.get("/admin/tags/new").status_code == 403


def test_contributor_asking_to_publish_gets_pending(client, content):
    assert sign_in(client, "contributor").status_code == 303
    data = {**form_of(client, "/admin/events/new"), **NEW_EVENT}
    assert post(client, "/admin/events/new", data, "publish").status_code == 303
    assert "status: pending" in (content / "events/2027/kiln-opening.yaml").read_text()


def test_subscriber_may_not_edit(client):
    assert sign_in(client, "subscriber").status_code == 303
    assert client.get("/admin/events/").status_code == 403
    assert client.get("/admin/api/venues/search?q=blue").status_code == 403


def test_author_publishes_own_but_not_others(client, content):
    assert sign_in(client, "author").status_code == 303
    assert b"Save and publish" in client.get("/admin/events/new").data
    data = {**form_of(client, "/admin/events/new"), **NEW_EVENT}
    assert post(client, "/admin/events/new", data).status_code == 303
    assert "status: publish" in (content / "events/2027/kiln-opening.yaml").read_text()
    assert client.get(f"/admin/events/{JAZZ_NIGHT}/").status_code == 403
    token = csrf_token(client.get("/admin/events/").data)
    assert client.post(f"/admin/events/{JAZZ_NIGHT}/trash",
                       data={"csrf_token": token}).status_code == 403


@pytest.mark.parametrize(("path", "change", "field", "message"), [
    (f"/admin/organizers/{JAZZ_COLLECTIVE}/", {"email": "not an address"}, "email",
     "Invalid parameter."),
    (f"/admin/organizers/{JAZZ_COLLECTIVE}/", {"organizer": ""}, "organizer",
     "Invalid parameter."),
    (f"/admin/categories/{JAZZ}/", {"parent": str(JAZZ)}, "parent", "Invalid parameter."),
    (f"/admin/categories/{JAZZ}/", {"slug": "  "}, "slug", "Invalid parameter."),
    (f"/admin/venues/{BLUE_LANTERN}/", {"website": "ftp://x"}, "website", "Invalid parameter."),
    (f"/admin/venues/{BLUE_LANTERN}/", {"geo_lng": "east"}, "geo_lng",
     "geo_lng is not of type number."),
])
def test_bad_input_on_the_other_forms(editor, content, path, change, field, message):
    before = commits(content)
    page = post(editor, path, {**form_of(editor, path), **change}, "save")
    assert page.status_code == 400
    found = re.search(rf'id="{field}-errors">(.*?)</div>', page.data.decode(), re.DOTALL)
    assert found and message in found[1], page.data.decode()[:3000]
    assert commits(content) == before


def test_trash_and_restore_need_the_token_and_the_right(editor, content):
    before = commits(content)
    assert editor.post(f"/admin/events/{JAZZ_NIGHT}/trash").status_code == 400
    token = csrf_token(editor.get("/admin/events/").data)
    done = editor.post(f"/admin/events/{JAZZ_NIGHT}/restore", data={"csrf_token": token},
                       follow_redirects=True)
    assert b"is not in the trash" in done.data  # a published event stays published
    assert commits(content) == before
    assert editor.post("/admin/events/999999/trash", data={"csrf_token": token}
                       ).status_code == 404


def test_a_time_that_happens_twice_is_warned_and_saved(editor, content):
    data = {**form_of(editor, "/admin/events/new"), **NEW_EVENT,
            "start_date": "2027-11-07T01:30", "end_date": "2027-11-07T03:00",
            "timezone": "America/New_York", "venue": "45"}
    page = post(editor, "/admin/events/new", data, "check")
    assert page.status_code == 200
    assert (b"start_date 2027-11-07 01:30:00 happens twice in America/New_York (clocks go "
            b"back); the first one is used") in page.data
    assert post(editor, "/admin/events/new", data).status_code == 303


@pytest.mark.parametrize("block", [
    {"every": "month", "on": "second tuesday", "until": "2027-12-31 23:59:59"},
    {"every": "2 weeks", "on": ["monday", "thursday"], "count": 8},
    {"every": "month", "on": 15},
    {"rrule": "FREQ=YEARLY;BYMONTH=6;BYMONTHDAY=21"},
    {"rdate": ["2027-05-20 19:00:00", "2027-06-20 19:00:00"]},
])
def test_rule_builder_shows_and_reads_back_the_same_block(block):
    from werkzeug.datastructures import MultiDict

    from calendar_app.editing.forms import _rule_pairs
    from calendar_app.model import recurrence, rule_form

    normal = recurrence.normalize(block)
    posted = rule_form.read(MultiDict(_rule_pairs("recurrence", rule_form.show(normal))),
                            "recurrence")
    assert recurrence.normalize(posted) == normal
