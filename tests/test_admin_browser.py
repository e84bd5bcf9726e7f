"""The editing pages in Chromium (issue 24 items 2, 3 and 9): sign in, create an event
with a new venue, edit its rule and see the preview, a conflict on a stale edit; the
same form from browsers in UTC-10 and UTC+14 gives the same bytes; axe-core and the Nu
Html Checker on every page. Set ADMIN_SCREENSHOTS=<folder> to also save screenshots of
each page at 1280 and 390 px (docs/screenshots/ holds the last ones)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import NOW, SIGN_IN_PASSWORD, make_repo
from gitserver import serve_in_thread
from sitechecks import assert_nu_clean, axe_violations, with_axe
from werkzeug.serving import make_server

from calendar_app.http.app import create_app

SCREENSHOTS = ("sign-in", "events", "event-new", "event-rule-preview", "event-conflict",
               "event-refused", "venue", "categories")
EVENT = {"title": "Kiln Opening", "start": "2027-04-10T18:00", "end": "2027-04-10T20:00",
         "zone": "Europe/Berlin"}


class Server:
    def __init__(self, root: Path, users: Path) -> None:
        self.content = make_repo(root)
        shutil.copy(users, root / "users.yaml")
        app = create_app({"CONTENT_DIR": str(self.content), "USERS_FILE": str(root / "users.yaml"),
                          "CACHE_DIR": str(root / "cache"), "NOW": NOW, "TESTING": True,
                          "LOGIN_MAX_FAILURES": 10_000})
        self.http = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        serve_in_thread(self.http)


@pytest.fixture
def servers(tmp_path_factory, signed_users_master):
    """`servers(n)`: n servers over calendars of the test's own, made as it asks (none
    for a test the run leaves out), shut down after it."""
    made: list[Server] = []

    def make(count: int) -> list[Server]:
        new = [Server(tmp_path_factory.mktemp("server"), signed_users_master)
               for _ in range(count)]
        made.extend(new)
        return new

    yield make
    for server in made:
        server.http.shutdown()


@pytest.fixture
def seen() -> dict[str, str]:
    """HTML of every page a test visits, for the Nu checker at its end."""
    return {}


def sign_in(page, server: Server) -> None:
    page.goto(server.url + "/admin/")
    page.fill("#name", "editor")
    page.fill("#password", f"{SIGN_IN_PASSWORD} editor")
    page.click("button[type=submit]")
    page.wait_for_url("**/admin/events/")


def look(page, name: str, seen: dict[str, str]) -> None:
    """axe-core on the page as shown, its HTML kept for the Nu checker, screenshots."""
    assert axe_violations(page, name) == [], name
    seen[name] = page.content()
    folder = os.environ.get("ADMIN_SCREENSHOTS")
    if folder and name in SCREENSHOTS:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.screenshot(path=str(Path(folder) / f"admin-{name}-{width}.png"))
        page.set_viewport_size({"width": 1280, "height": 900})


# Slow: a dozen pages through axe and Java. The quick run keeps its guarantees in
# test_admin_i18n_browser (the same templates and scripts in Chromium: the rule preview,
# the likely-duplicate note, axe and Nu on the events list, an event's form, the new
# event form, the queue) and in process in test_admin_pages (a new venue with its
# event in one commit, the duplicate warning, the preview equal to the interface, the
# stale edit's conflict keeping the input).
@pytest.mark.slow
def test_sign_in_create_with_new_venue_rule_preview_and_conflict(browser, servers, seen,
                                                                 tmp_path):
    [server] = servers(1)
    context = with_axe(browser.new_context(viewport={"width": 1280, "height": 900}))
    page = context.new_page()
    page.goto(server.url + "/admin/")
    look(page, "sign-in", seen)
    page.fill("#name", "editor")
    page.fill("#password", f"{SIGN_IN_PASSWORD} editor")
    page.keyboard.press("Enter")  # keyboard only
    page.wait_for_url("**/admin/events/")
    look(page, "events", seen)
    for name in ("venues", "organizers", "categories", "tags"):
        page.goto(f"{server.url}/admin/{name}/")
        look(page, name, seen)

    page.goto(server.url + "/admin/events/new")
    look(page, "event-new", seen)
    page.fill("#f-title", "Kiln Opening")
    page.fill("#f-start_date", EVENT["start"])
    page.fill("#f-end_date", EVENT["end"])
    page.fill("#f-timezone", EVENT["zone"])
    page.click("summary:has-text('Or a new venue')")
    page.fill("#f-venue-new-venue", "Blue Lantern")
    page.wait_for_selector("[data-duplicate-note]:not([hidden])")
    assert "The Blue Lantern (#45)" in page.inner_text("[data-duplicate-note]")
    page.fill("#f-venue-new-venue", "Kiln House")
    page.fill("#f-venue-new-address", "1 Clay St")
    page.click("button[value=publish]")
    page.wait_for_url("**/admin/events/*/")
    assert "Saved: Kiln Opening" in page.inner_text("main")
    text = (server.content / "events/2027/kiln-opening.yaml").read_text()
    assert "venue: kiln-house" in text
    assert (server.content / "venues/kiln-house.yaml").is_file()

    edit_url = page.url
    page.select_option("#f-recurrence-kind", "rule")
    page.check("#f-recurrence-saturday")
    page.check("#f-recurrence-end-count")
    page.fill("#f-recurrence-count", "3")
    page.dispatch_event("#f-recurrence-count", "change")
    page.wait_for_selector("#occurrences p:has-text('3 dates')")
    dates = page.locator("#occurrences li").all_inner_texts()
    assert dates == ["2027-04-10 18:00:00 to 2027-04-10 20:00:00",
                     "2027-04-17 18:00:00 to 2027-04-17 20:00:00",
                     "2027-04-24 18:00:00 to 2027-04-24 20:00:00"]
    look(page, "event-rule-preview", seen)
    page.click("button[value=publish]")
    page.wait_for_url(edit_url)
    assert "every: week" in (server.content / "events/2027/kiln-opening.yaml").read_text()

    other = context.new_page()  # the same person in a second tab: a stale form
    other.goto(edit_url)
    page.fill("#f-cost", "12")
    page.click("button[value=publish]")
    page.wait_for_url(edit_url)
    other.fill("#f-title", "Kiln Opening Night")
    other.click("button[value=publish]")
    other.wait_for_selector("#conflict")
    assert "Cost" in other.inner_text("#conflict")
    assert other.input_value("#f-title") == "Kiln Opening Night"
    assert other.input_value("#f-cost") == "12"
    look(other, "event-conflict", seen)
    other.click("button[value=publish]")
    other.wait_for_url(edit_url)
    text = (server.content / "events/2027/kiln-opening.yaml").read_text()
    assert "title: Kiln Opening Night" in text and "cost: '12'" in text

    other.fill("#f-end_date", "2027-04-10T17:00")
    other.click("button[value=check]")
    other.wait_for_selector("#end_date-errors")
    look(other, "event-refused", seen)
    other.goto(server.url + "/admin/venues/45/")
    look(other, "venue", seen)
    other.goto(server.url + "/admin/categories/2/")
    look(other, "category", seen)
    context.close()
    # In this test, not one after it: xdist may run the next test in another process.
    assert_nu_clean(seen, tmp_path)


@pytest.mark.slow  # browsers in three zones against two servers, end to end
def test_browsers_in_any_zone_write_the_same_bytes(browser, servers):
    """One tab, its zone set through Chromium's own override (what a context's
    `timezone_id` sends) before each calendar: a context and its tab cost most of a
    second of Chromium's CPU."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    chromium = context.new_cdp_session(page)
    texts = []
    for server, (zone, offset) in zip(servers(2), (("Pacific/Honolulu", 600),
                                                   ("Pacific/Kiritimati", -840)), strict=True):
        chromium.send("Emulation.setTimezoneOverride", {"timezoneId": zone})
        context.clear_cookies()  # both servers are on 127.0.0.1: signed out of the first
        sign_in(page, server)
        assert page.evaluate("new Date(Date.UTC(2027, 2, 28)).getTimezoneOffset()") == offset
        page.goto(server.url + "/admin/events/new")
        page.fill("#f-title", "Zone Test")
        page.fill("#f-start_date", "2027-03-28T10:30")
        page.fill("#f-end_date", "2027-03-28T12:30")
        page.fill("#f-timezone", "Europe/London")
        page.click("button[value=publish]")
        page.wait_for_url("**/admin/events/*/")
        texts.append((server.content / "events/2027/zone-test.yaml").read_bytes())
    context.close()
    assert texts[0] == texts[1]
    assert b"start_date: 2027-03-28 10:30:00\nend_date: 2027-03-28 12:30:00\n" in texts[0]
