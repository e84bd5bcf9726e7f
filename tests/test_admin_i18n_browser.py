"""The editing, moderation and submission pages in Arabic and German in Chromium (issue
25 item 2): laid out from the right in Arabic, the script's words (the rule preview, the
likely-duplicate note) in the page's language, axe-core with no violation and the Nu
Html Checker with no error on every page. Set ADMIN_SCREENSHOTS=<folder> to also save
screenshots of the Arabic pages at 1280 and 390 px, as test_admin_browser does."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import NOW, SIGN_IN_PASSWORD, git, make_repo
from gitserver import serve_in_thread
from sitechecks import assert_nu_clean, axe_violations
from submitting import propose
from werkzeug.serving import make_server

from calendar_app.http.app import create_app

JAZZ_NIGHT = 106


class Server:
    def __init__(self, root: Path, users: Path, locale: str) -> None:
        self.content = make_repo(root)
        with (self.content / "calendar.yaml").open("a", encoding="utf-8") as out:
            out.write(f"locale: {locale}\n")
        # A file the calendar cannot read: the events list names it (in the page's
        # language and direction, checked with the rest of the page).
        (self.content / "events" / "broken.yaml").write_text("id: 990\ntitle: [x\n",
                                                             encoding="utf-8")
        git(self.content.parent, "add", "-A")
        git(self.content.parent, "commit", "-qm", "locale")
        shutil.copy(users, root / "users.yaml")
        self.app = create_app({"CONTENT_DIR": str(self.content),
                               "USERS_FILE": str(root / "users.yaml"),
                               "CACHE_DIR": str(root / "cache"), "NOW": NOW, "TESTING": True,
                               "LOGIN_MAX_FAILURES": 10_000})
        # A visitor's proposal, so that the moderation queue has an entry.
        assert propose(self.app.test_client()).status_code == 303
        self.http = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        serve_in_thread(self.http)


def serving(tmp_path_factory, users: Path, language: str, locale: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp(language), users, locale)
    yield server
    server.http.shutdown()


# One server per language, each made only for the test that reads it (xdist may run the
# two tests in different processes).
@pytest.fixture(scope="module")
def arabic(tmp_path_factory, signed_users_master):
    yield from serving(tmp_path_factory, signed_users_master, "ar", "ar_EG")


@pytest.fixture(scope="module")
def german(tmp_path_factory, signed_users_master):
    yield from serving(tmp_path_factory, signed_users_master, "de", "de_DE")


@pytest.fixture
def page(axe_page):
    """The process's axe tab (conftest), signed out: both servers are on 127.0.0.1,
    whose cookies a browser shares between ports."""
    axe_page.context.clear_cookies()
    axe_page.set_viewport_size({"width": 1280, "height": 900})
    return axe_page


@pytest.fixture
def seen() -> dict[str, str]:
    return {}


def look(page, name: str, seen: dict[str, str]) -> None:
    """axe-core on the page as shown, its HTML kept for the Nu checker; screenshots of
    the Arabic pages where ADMIN_SCREENSHOTS names a folder (as test_admin_browser)."""
    assert axe_violations(page, name) == [], name
    seen[name] = page.content()
    shots = os.environ.get("ADMIN_SCREENSHOTS")
    if not shots or not name.startswith("ar-"):  # German is laid out as English
        return
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(Path(shots) / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def sign_in(page, server: Server) -> None:
    page.goto(server.url + "/admin/")
    page.fill("#name", "editor")
    page.fill("#password", f"{SIGN_IN_PASSWORD} editor")
    page.click("button[type=submit]")
    page.wait_for_url("**/admin/events/")


def test_arabic_editing_pages_read_from_the_right(arabic, page, seen, tmp_path) -> None:
    server = arabic
    page.goto(server.url + "/submit/")
    assert page.get_attribute("html", "dir") == "rtl"
    look(page, "ar-submit", seen)
    sign_in(page, server)
    assert page.get_attribute("html", "lang") == "ar-EG"
    assert page.inner_text("#unreadable") == "ملفات تتعذر قراءتها"
    assert "events/broken.yaml، السطر 3: كان متوقعًا ',' أو ']'" in page.inner_text(
        "section.error li")
    look(page, "ar-events", seen)
    # Right to left: the heading starts at the right edge, the sign-out form (pushed
    # to the end of the line) sits at the left.
    heading = page.locator("h1").bounding_box()
    assert heading["x"] + heading["width"] > 1280 - 40
    assert page.locator("h1").evaluate("e => getComputedStyle(e).direction") == "rtl"
    out = page.locator(".signout button").bounding_box()
    assert out["x"] < 640
    first, last = (page.locator("table thead th").nth(i).bounding_box() for i in (0, -1))
    assert first["x"] > last["x"]  # the name column on the right

    page.goto(f"{server.url}/admin/events/{JAZZ_NIGHT}/")
    look(page, "ar-event", seen)
    page.goto(server.url + "/admin/events/new")
    page.fill("#f-title", "أمسية")
    page.fill("#f-start_date", "2027-04-10T18:00")
    page.fill("#f-end_date", "2027-04-10T20:00")
    page.select_option("#f-recurrence-kind", "rule")
    page.check("#f-recurrence-saturday")
    page.check("#f-recurrence-end-count")
    page.fill("#f-recurrence-count", "3")
    page.dispatch_event("#f-recurrence-count", "change")
    # The preview's sentences from the server, in Arabic: "3 مواعيد", "من … إلى …".
    page.wait_for_selector("#occurrences p:has-text('3 مواعيد')")
    assert page.locator("#occurrences li").first.inner_text().startswith("من 2027-04-10")
    page.click("summary")
    page.fill("#f-venue-new-venue", "Blue Lantern")
    page.wait_for_selector("[data-duplicate-note]:not([hidden])")
    assert "موجود بالفعل" in page.inner_text("[data-duplicate-note]")
    look(page, "ar-event-new", seen)
    page.goto(server.url + "/admin/pending/")
    assert "فعاليات قيد الانتظار" in page.inner_text("h1")
    look(page, "ar-pending", seen)
    assert_nu_clean(seen, tmp_path)


# The German pages are laid out as the English ones: the slow run (CI runs both). The
# Arabic test above is the quick run's browser check of the editing and submission
# pages (test_admin_browser and test_submit_browser count on it).
@pytest.mark.slow
def test_german_editing_pages(german, page, seen, tmp_path) -> None:
    server = german
    sign_in(page, server)
    assert page.inner_text("h1") == "Veranstaltungen"
    look(page, "de-events", seen)
    page.goto(f"{server.url}/admin/venues/45/")
    assert page.inner_text("h1").startswith("Veranstaltungsort bearbeiten: ")
    page.fill("#f-venue", "")
    page.click("button[value=check]")
    page.wait_for_selector(".field-error")
    assert "Ungültiger Wert." in page.inner_text(".field-error")
    look(page, "de-venue-refused", seen)
    page.goto(server.url + "/admin/pending/")
    assert page.inner_text("h1") == "Eingereichte Veranstaltungen"
    seen["de-pending"] = page.content()
    assert_nu_clean(seen, tmp_path)

