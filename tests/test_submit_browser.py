"""Submissions in Chromium (issue 24 items 7 to 9): a visitor proposes an event without
signing in, an editor approves it in the queue, the interface then lists it; axe-core
and the Nu Html Checker on every page on the way. Set SUBMIT_SCREENSHOTS=<folder> to
save each page at 1280 and 390 px (docs/screenshots/ holds the last ones)."""

from __future__ import annotations

import json
import os
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest
from conftest import NOW, SIGN_IN_PASSWORD, make_repo
from sitechecks import assert_nu_clean, axe_violations, with_axe
from werkzeug.serving import make_server

from calendar_app.http.app import create_app


@pytest.fixture(scope="module")
def server(tmp_path_factory, signed_users_master):
    root = tmp_path_factory.mktemp("submit-server")
    with pytest.MonkeyPatch.context() as mp:
        for who in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{who}_NAME", "Test Runner")
            mp.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
        content = make_repo(root)
    shutil.copy(signed_users_master, root / "users.yaml")
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(root / "users.yaml"),
                      "CACHE_DIR": str(root / "cache"), "NOW": NOW, "TESTING": True})
    http = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{http.server_port}", content
    http.shutdown()


def look(page, name: str, seen: dict[str, str]) -> None:
    """axe-core on the page as shown; its HTML kept for the Nu checker; screenshots."""
    assert axe_violations(page, name) == [], name
    seen[name] = page.content()
    folder = os.environ.get("SUBMIT_SCREENSHOTS")
    if folder:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.screenshot(path=str(Path(folder) / f"{name}-{width}.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 900})


def propose_in_browser(page, base: str, seen: dict[str, str]) -> None:
    page.goto(base + "/submit/")
    look(page, "submit-form", seen)
    page.fill("#title", "Harbour Lantern Walk")
    page.fill("#start_date", "2027-03-05T19:30")
    page.fill("#end_date", "2027-03-05T18:00")  # before the start: refused
    page.select_option("#timezone", "Europe/Lisbon")
    page.fill("#venue_name", "Old Harbour Steps")
    page.fill("#venue_address", "1 Quay Street")
    page.fill("#description", "Bring a **lantern**.")
    page.fill("#email", "walker@example.org")
    page.click("button[type=submit]")
    assert "The end date must not be before the start date." in page.inner_text("#problems")
    look(page, "submit-form-errors", seen)
    assert page.input_value("#venue_name") == "Old Harbour Steps"  # kept
    page.fill("#end_date", "2027-03-05T21:00")
    page.focus("#end_date")
    page.keyboard.press("Enter")  # keyboard only
    page.wait_for_url("**/submit/thanks/")
    look(page, "submit-thanks", seen)


# Slow: six pages through axe and Java. The quick run keeps its guarantees in
# test_admin_i18n_browser (axe and Nu on the submission form and the queue, in Arabic;
# German in the slow run) and in process in test_submit and test_moderation (the
# refused and the accepted proposal, one pending commit, the rejection needing a
# reason, approval publishing it).
@pytest.mark.slow
def test_a_visitor_proposes_an_editor_approves_the_interface_lists_it(
        browser, server, tmp_path: Path) -> None:
    base, content = server
    seen: dict[str, str] = {}
    # The pages have no script (test_submit.py); axe needs JavaScript to run, though.
    visitor = with_axe(browser.new_context(viewport={"width": 1280, "height": 900}))
    visitor.set_default_timeout(30_000)
    propose_in_browser(visitor.new_page(), base, seen)
    visitor.close()
    assert "status: pending" in (content / "events/2027/harbour-lantern-walk.yaml").read_text()

    editor = with_axe(browser.new_context(viewport={"width": 1280, "height": 900}))
    editor.set_default_timeout(30_000)
    page = editor.new_page()
    page.goto(base + "/admin/pending/")
    page.fill("#name", "editor")
    page.fill("#password", f"{SIGN_IN_PASSWORD} editor")
    page.click("main button[type=submit]")
    page.wait_for_url("**/admin/pending/")
    assert "walker@example.org" in page.inner_text("main")
    look(page, "moderation-queue", seen)
    page.fill("#reason-157", "")
    page.click("button:has-text('Reject')")  # without a reason: refused, on the page
    assert "Give a reason" in page.inner_text("#error-157")
    look(page, "moderation-queue-error", seen)
    page.click("button:has-text('Approve and publish')")
    page.wait_for_selector("text=Published")
    look(page, "moderation-queue-empty", seen)
    editor.close()

    with urllib.request.urlopen(base + "/wp-json/tribe/events/v1/events?per_page=50"
                                "&start_date=2027-03-05&end_date=2027-03-05") as r:
        listed = {e["title"]: e for e in json.load(r)["events"]}
    assert listed["Harbour Lantern Walk"]["venue"]["venue"] == "Old Harbour Steps"
    nu_check(seen, tmp_path)


def nu_check(seen: dict[str, str], folder: Path) -> None:
    assert_nu_clean(dict(seen), folder)
