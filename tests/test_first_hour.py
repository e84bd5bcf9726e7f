"""Issue 27: messages that say what to do, and the plugin's refusals seen by clients."""

from __future__ import annotations

import argparse
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CRAFTED_EVENT as EVENT
from conftest import cli_here, git, make_repo
from hypothesis import given, settings
from hypothesis import strategies as st
from sitebuilds import small_sample

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


def test_a_bad_list_date_gives_its_reason(reading_client) -> None:
    response = reading_client.get(f"{BASE}/events?end_date=2027-02-30")
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
def test_near_the_epoch_is_still_a_date(reading_client, value) -> None:
    response = reading_client.get(f"{BASE}/events", query_string={"start_date": value})
    assert response.status_code == 200


def test_an_all_day_event_ending_at_midnight_ends_at_the_end_of_that_day(
        tmp_path: Path) -> None:
    # As the sample's record 102 was written before `fmt` wrote it out in full.
    from calendar_app.http.app import create_app

    content = make_repo(tmp_path)
    path = content / "events/2026/december-makers-market-2026.yaml"
    path.write_text(path.read_text().replace("end_date: 2026-12-06 23:59:59",
                                             "end_date: 2026-12-06 00:00:00"))
    client = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "u.yaml"),
                         "CACHE_DIR": str(tmp_path / "cache"), "TESTING": True}).test_client()
    body = client.get(f"{BASE}/events/102").get_json()
    assert body["all_day"] is True
    assert body["start_date"] == "2026-12-05 00:00:00"
    assert body["end_date"] == "2026-12-06 23:59:59"
    assert json.dumps(body["end_date_details"]).count('"59"') == 2


# -- defaults that ask -------------------------------------------------------------------
def test_init_asks_in_a_terminal(tmp_path: Path) -> None:
    import os

    leader, follower = os.openpty()
    answers = "Glühwein Kalender\nBerlin\nEurope/Berlin\nnot a url\nhttps://k.example.de/\nde_DE\n"
    os.write(leader, answers.encode())
    try:
        result = subprocess.run(
            [sys.executable, "-m", "calendar_app", "init", str(tmp_path / "cal"), "--empty"],
            cwd=REPO_ROOT, stdin=follower, capture_output=True, text=True, timeout=60,
            check=False)
    finally:
        os.close(follower)
        os.close(leader)
    assert result.returncode == 0, result.stderr
    assert "did you mean 'Europe/Berlin'?" in result.stderr
    assert "'not a url' is not an http(s) address" in result.stderr
    settings = (tmp_path / "cal/calendar.yaml").read_text(encoding="utf-8")
    assert "title: Glühwein Kalender\n" in settings
    assert "timezone: Europe/Berlin\n" in settings
    assert "url: https://k.example.de/\n" in settings and "locale: de_DE\n" in settings
    assert git(tmp_path / "cal", "status", "--porcelain") == ""


def test_init_takes_flags_without_asking_and_refuses_bad_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # as from /dev/null: no terminal

    def init(*flags: str) -> subprocess.CompletedProcess:
        return cli_here("init", *flags)

    made = init(str(tmp_path / "a"), "--title", "Arts", "--timezone", "Europe/Paris")
    assert made.returncode == 0, made.stderr
    text = (tmp_path / "a/calendar.yaml").read_text(encoding="utf-8")
    assert "title: Arts\n" in text and "timezone: Europe/Paris\n" in text
    # the sample's comment above `timezone` is kept
    assert "# Events without their own timezone" in text
    bad = init(str(tmp_path / "b"), "--timezone", "Paris")
    assert bad.returncode == 2 and "did you mean 'Europe/Paris'?" in bad.stderr
    assert not (tmp_path / "b").exists()


def test_a_build_without_url_warns_once(tmp_path: Path, capsys, monkeypatch) -> None:
    # In this process (the command's `main`, as `python -m calendar_app build` calls
    # it): a subprocess added two interpreter starts and nothing the test looks at;
    # test_site_now's nightly example runs the command as a process.
    from calendar_app.cli import main

    monkeypatch.chdir(tmp_path)
    content = small_sample(tmp_path / "content")  # the warning is checked, not the size
    settings = content / "calendar.yaml"
    settings.write_text("\n".join(line for line in settings.read_text().splitlines()
                                  if not line.startswith("url:")) + "\n")
    assert main(["build", "--content", str(content), "--out", str(tmp_path / "site")]) == 0
    stderr = capsys.readouterr().err
    assert stderr.count("has no url") == 1
    assert "http://localhost/" in stderr and "--base-url" in stderr
    assert main(["build", "--content", str(content), "--out", str(tmp_path / "site"),
                 "--base-url", "https://x.example/"]) == 0
    assert "has no url" not in capsys.readouterr().err


def test_schema_after_init_writes_inside_the_repository(tmp_path: Path) -> None:
    cal = tmp_path / "cal"
    assert cli_here("init", str(cal), "--no-input").returncode == 0
    result = cli_here("schema", "--content", str(cal), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (cal / "schemas/events.schema.json").is_file()
    assert not (tmp_path / "schemas").exists()
    snippet = json.loads(result.stdout.split("settings.json:\n", 1)[1])
    assert snippet["yaml.schemas"]["./schemas/events.schema.json"] == "events/**/*.yaml"
    assert snippet["yaml.schemas"]["./schemas/calendar.schema.json"] == "calendar.yaml"


def test_schema_in_a_project_layout_points_at_the_content_folder(tmp_path: Path) -> None:
    content = make_repo(tmp_path)  # <repo>/content
    result = subprocess.run([sys.executable, "-m", "calendar_app", "schema", "--content",
                             str(content)], capture_output=True, text=True, timeout=60,
                            check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (content.parent / "schemas/venues.schema.json").is_file()
    snippet = json.loads(result.stdout.split("settings.json:\n", 1)[1])
    assert snippet["yaml.schemas"]["./schemas/venues.schema.json"] == "content/venues/**/*.yaml"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=24, max_size=24))
def test_init_answers_never_fail_on_any_typing(typed: list[str]) -> None:
    from calendar_app.store.starter import StarterError, init_answers

    answers = iter(typed)
    try:
        got = init_answers({}, True, lambda prompt: next(answers))
    except StarterError:
        return
    if "timezone" in got:
        assert dates.zone(got["timezone"]) is not None


def test_a_word_with_punctuation_is_found_as_written(client, admin) -> None:
    # WordPress looks for each search word with LIKE: `c1-1` is not `c1` and `1`.
    made = [_event(client, admin, title=title).get_json()["id"]
            for title in ("Night c1-1", "Night c1-2", "Night c1-10")]
    def found(query: str) -> list[int]:
        body = client.get(f"{BASE}/events", query_string={
            "search": query, "start_date": "2027-01-01", "per_page": 50}).get_json()
        return sorted(e["id"] for e in body.get("events", []))
    assert found("Night c1-1") == [made[0], made[2]]  # c1-10 holds c1-1, as in SQL LIKE
    assert found("c1-2") == [made[1]]
    assert found("c1 -c1-1") == [made[1]]  # c1-10 holds c1-1 too
