"""Issue 27: messages that say what to do, and the plugin's refusals seen by clients."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CRAFTED_EVENT as EVENT
from conftest import git, make_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.editorial import register
from calendar_app.model import dates, hints
from calendar_app.store import yamlfile

BASE = "/wp-json/tribe/events/v1"
REPO_ROOT = Path(__file__).resolve().parent.parent


def check(content: Path, capsys, *extra: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["check", str(content), *extra])
    code = args.func(args)
    return code, capsys.readouterr().out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


# -- messages in files -------------------------------------------------------------------
@pytest.mark.parametrize(("text", "line"), [
    ("id: 1\n\ttitle: x\n", 2),
    ("id: 1\ncategories:\n\t- music\n", 3),
    ("\tid: 1\n", 1),
])
def test_a_tab_is_named_with_its_place(text: str, line: int) -> None:
    with pytest.raises(yamlfile.YamlError) as caught:
        yamlfile.load(text.encode())
    assert caught.value.message.startswith(f"a tab character at line {line}, column 1")
    assert "spaces" in caught.value.message and caught.value.line == line


def test_check_names_the_tab(tree: Path, capsys) -> None:
    (tree / "events/2027/crafted.yaml").write_text(EVENT.replace("slug: crafted", "\tslug: x"))
    code, out = check(tree, capsys)
    assert code == 1
    assert "a tab character at line 3, column 1" in out
    assert "cannot start any token" not in out


@pytest.mark.parametrize(("key", "meant"), [
    ("start", "start_date"), ("end", "end_date"), ("Begin", "start_date"),
    ("location", "venue"), ("organiser", "organizers"), ("category", "categories"),
    ("price", "cost"), ("url", "website"), ("tz", "timezone"), ("titel", "title"),
])
def test_unknown_key_suggests_what_editors_mean(tree: Path, capsys, key: str,
                                                 meant: str) -> None:
    (tree / "events/2027/crafted.yaml").write_text(EVENT + f"{key}: something\n")
    code, out = check(tree, capsys)
    assert code == 1
    assert f"unknown key {key!r} (did you mean {meant!r}?)" in out


def test_a_short_form_is_suggested_only_where_the_resource_has_the_key() -> None:
    assert hints.key_meant("start", ["name", "address"]) is None
    assert hints.key_meant("lat", ["geo_lat", "geo_lng"]) == "geo_lat"


@pytest.mark.parametrize(("city", "zone"), [
    ("Berlin", "Europe/Berlin"), ("new york", "America/New_York"),
    ("Los_Angeles", "America/Los_Angeles"), ("Tokio", None)])
def test_a_city_suggests_its_zone(tree: Path, capsys, city: str, zone: str | None) -> None:
    (tree / "events/2027/crafted.yaml").write_text(EVENT + f"timezone: {city}\n")
    code, out = check(tree, capsys)
    assert code == 1
    assert f"unknown timezone {city!r}" in out
    assert (f"(did you mean {zone!r}?)" in out) == (zone is not None)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_zone_hints_never_fail_and_name_real_zones(text: str) -> None:
    meant = hints.zone_meant(text)
    assert meant is None or dates.zone(meant) is not None


def test_a_clean_check_says_all_files_were_checked(tree: Path, capsys) -> None:
    code, out = check(tree, capsys)
    assert code == 0
    assert out.startswith("All 99 files checked: no errors, no warnings (")
    assert "in 0 files" not in out


# -- serve on a taken port ---------------------------------------------------------------
def test_serve_on_a_taken_port_says_so_and_names_the_option(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "calendar_app", "serve", "--content", str(content),
             "--users", str(tmp_path / "users.yaml"), "--port", str(port)],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert "Serving at" not in result.stdout
    assert f"127.0.0.1:{port} is already in use" in result.stderr
    assert f"--port {port + 1}" in result.stderr


# -- dates through the interface ---------------------------------------------------------
def _event(client, admin: dict, **fields) -> object:
    body = {"title": "Dated", "start_date": "2027-03-01 10:00:00",
            "end_date": "2027-03-01 11:00:00", **fields}
    return client.post(f"{BASE}/events", json=body, headers=admin)


def test_a_bad_date_keeps_the_plugins_message_and_adds_the_reason(client, admin,
                                                                  content: Path) -> None:
    commits = git(content, "rev-list", "--count", "HEAD")
    response = _event(client, admin, start_date="the day after my birthday")
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "rest_invalid_param"
    assert body["message"] == "Invalid parameter(s): start_date"
    assert body["data"]["params"] == {"start_date": "Invalid parameter."}
    detail = body["data"]["details"]["start_date"]
    assert detail["code"] == "rest_invalid_date" and detail["data"] == {"param": "start_date"}
    assert detail["message"].startswith("Invalid date: ") and len(detail["message"]) > 15
    assert git(content, "rev-list", "--count", "HEAD") == commits


def test_a_bad_list_date_gives_its_reason(client) -> None:
    response = client.get(f"{BASE}/events?end_date=2027-02-30")
    assert response.status_code == 400
    body = response.get_json()
    assert body["data"]["params"] == {"end_date": "Invalid parameter."}
    assert body["data"]["details"]["end_date"]["code"] == "rest_invalid_date"


@pytest.mark.parametrize("value", ["1970-01-01", "1970-01-01 00:00:00",
                                   "1970-01-01T00:00:00+00:00", "1969-12-31 16:00:00 -08:00"])
def test_the_epoch_as_text_is_refused_as_on_the_plugins_sites(client, admin, value) -> None:
    listed = client.get(f"{BASE}/events", query_string={"start_date": value})
    assert listed.status_code == 400
    assert listed.get_json()["code"] == "rest_invalid_param"
    assert "start_date" in listed.get_json()["data"]["params"]
    created = _event(client, admin, start_date=value, end_date="2027-03-01 11:00:00")
    assert created.status_code == 400 and "start_date" in created.get_json()["data"]["params"]


@pytest.mark.parametrize("value", ["0", "1970-01-02", "1970-01-01 00:00:01"])
def test_near_the_epoch_is_still_a_date(client, value) -> None:
    assert client.get(f"{BASE}/events", query_string={"start_date": value}).status_code == 200


def test_an_all_day_event_ending_at_midnight_ends_at_the_end_of_that_day(client) -> None:
    # The sample's record 102 is written `end_date: 2026-12-06 00:00:00`, all day.
    body = client.get(f"{BASE}/events/102").get_json()
    assert body["all_day"] is True
    assert body["start_date"] == "2026-12-05 00:00:00"
    assert body["end_date"] == "2026-12-06 23:59:59"
    assert json.dumps(body["end_date_details"]).count('"59"') == 2
