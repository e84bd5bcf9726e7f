"""The loader refuses what the calendar cannot serve: each such file is left out and
reported with its path and line, and the rest of the calendar keeps being served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BASE, NOW, SAMPLE_NEXT_ID, git, make_repo
from conftest import CRAFTED_EVENT as EVENT

from calendar_app.cli import main
from calendar_app.http.app import create_app
from calendar_app.model.ids import MAX_ID
from calendar_app.site import Options, build, paths, writer
from calendar_app.store import parsing
from calendar_app.store.content import ContentTree


def loaded(content: Path, relpath: str) -> tuple:
    """What the app's loader makes of one file: ("record", data) or ("problem", line,
    message)."""
    tree = ContentTree(content, content.parent / "lock")
    return parsing.parse(tree, relpath, tree.collection_of(relpath))


def check_errors(content: Path, capsys, relpath: str) -> list[tuple[int, str, str]]:
    main(["check", str(content), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return [(f["line"], f["code"], f["message"]) for f in findings
            if f["path"].endswith(relpath) and f["severity"] == "error"]


# -- ids ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad_id", [2**64 + 5, 2**53 + 1, MAX_ID + 1, 0, -3])
def test_ids_outside_json_safe_range_are_refused(tmp_path: Path, capsys, bad_id: int) -> None:
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(EVENT.replace("id: 900", f"id: {bad_id}"))
    outcome = loaded(content, relpath)
    assert outcome[:2] == ("problem", 1) and "id" in outcome[2]
    assert [(line, code) for line, code, _ in check_errors(content, capsys, relpath)] == [
        (1, "wrong-type")]


def test_the_largest_json_safe_id_is_fine(tmp_path: Path) -> None:
    """MAX_ID: the largest id whose occurrences' ids are JSON-safe too."""
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(EVENT.replace("id: 900", f"id: {MAX_ID}"))
    assert loaded(content, relpath)[0] == "record"


def test_an_id_beyond_64_bits_leaves_the_lists_working(content: Path, config: dict) -> None:
    def events(cache: str, query: str = "") -> tuple[int, dict]:
        app = create_app({**config, "CACHE_DIR": str(content.parent.parent / cache)})
        try:
            response = app.test_client().get(f"{BASE}/events{query}")
            return response.status_code, response.get_json()
        finally:
            app.extensions["calendar"].close()

    _, before = events("cache-before")
    (content / "events/2027/crafted.yaml").write_text(
        EVENT.replace("id: 900", f"id: {2**64}").replace("2027-05-01", "2026-12-01"))
    status, after = events("cache-after")
    assert status == 200 and after["total"] == before["total"]
    assert events("cache-after", "?search=crafted")[0] == 200


# -- dates ----------------------------------------------------------------------------------
def files_and_commits(content: Path) -> tuple[set[str], str]:
    return ({p.relative_to(content).as_posix() for p in content.rglob("*") if p.is_file()},
            git(content.parent, "rev-parse", "HEAD"))


@pytest.mark.parametrize("body", [
    {"start_date": "9999-12-31 22:00:00", "end_date": "9999-12-31 23:00:00",
     "timezone": "America/Los_Angeles"},
    {"start_date": "9999-12-31 22:00:00", "end_date": "9999-12-31 23:00:00"},
    {"start_date": "0999-12-31 22:00:00", "end_date": "2027-01-01 10:00:00"},
    {"start_date": "253402300000", "end_date": "253402300000"},  # a timestamp in year 10000
])
def test_a_date_the_calendar_cannot_keep_is_refused_before_any_commit(
        content: Path, client, admin: dict, body: dict) -> None:
    before = files_and_commits(content)
    response = client.post(f"{BASE}/events", headers=admin, json={"title": "Far", **body})
    assert response.status_code == 400, response.get_json()
    error = response.get_json()
    assert error["code"] == "rest_invalid_param" and "start_date" in error["data"]["params"]
    assert files_and_commits(content) == before


@pytest.mark.parametrize(("date_utc", "named"), [
    ("9999-12-31 23:00:00", "date_utc"),
    ("1000-01-01 03:00:00", "date"),  # 0999-12-31 in the calendar's zone (Los Angeles)
])
def test_a_publish_date_the_calendar_cannot_keep_is_refused(
        content: Path, client, admin: dict, date_utc: str, named: str) -> None:
    before = files_and_commits(content)
    response = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Far", "start_date": "2027-01-01 10:00:00", "end_date": "2027-01-01 11:00:00",
        "date_utc": date_utc})
    assert response.status_code == 400 and list(response.get_json()["data"]["params"]) == [
        named]
    assert files_and_commits(content) == before


def test_a_publish_date_in_utc_alone_is_taken(client, admin: dict) -> None:
    response = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Dated", "start_date": "2027-01-01 10:00:00",
        "end_date": "2027-01-01 11:00:00", "date_utc": "2026-01-02 20:00:00"})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["date_utc"] == "2026-01-02 20:00:00"


def test_the_last_date_the_calendar_keeps_is_served(content: Path, client, admin: dict) -> None:
    response = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Last", "start_date": "9998-12-31 22:00:00", "end_date": "9998-12-31 23:59:59",
        "timezone": "America/Los_Angeles"})
    assert response.status_code == 201, response.get_json()
    event = response.get_json()
    assert event["utc_end_date"] == "9999-01-01 07:59:59"
    assert client.get(f"{BASE}/events/{event['id']}").status_code == 200
    listed = client.get(f"{BASE}/events?start_date=9998-12-01&end_date=9998-12-31 23:59:59")
    assert listed.status_code == 200 and listed.get_json()["total"] == 1


@pytest.mark.parametrize(("start", "line"), [
    ("9999-12-31 22:00:00", 4), ("0999-06-01 10:00:00", 4)])
def test_loader_and_check_refuse_dates_out_of_range(tmp_path: Path, capsys, start: str,
                                                    line: int) -> None:
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(EVENT.replace("2027-05-01 19:00:00", start).replace(
        "end_date: 2027-05-01 21:00:00", f"end_date: {start}") + "timezone: America/Los_Angeles\n")
    outcome = loaded(content, relpath)
    assert outcome[:2] == ("problem", line) and "start_date" in outcome[2]
    errors = check_errors(content, capsys, relpath)
    assert [(line_, code) for line_, code, _ in errors] == [(4, "invalid-date"),
                                                            (5, "invalid-date")]
    assert "1000" in errors[0][2] and "9998" in errors[0][2]


# -- slugs ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("relpath", "text", "line"), [
    ("events/2027/crafted.yaml", EVENT.replace("slug: crafted", "slug: ../../../../tmp/x"), 3),
    ("events/2027/crafted.yaml",
     EVENT.replace("slug: crafted", "slug: ../../venues/the-blue-lantern"), 3),
    ("venues/x.yaml", "id: 900\nname: X\nslug: /etc/x\n", 3),
    ("events/2027/Crafted Night.yaml", EVENT.replace("slug: crafted\n", ""), 0),
])
def test_a_slug_that_is_not_a_slug_is_refused(tmp_path: Path, capsys, relpath: str, text: str,
                                              line: int) -> None:
    content = make_repo(tmp_path)
    (content / relpath).write_text(text)
    outcome = loaded(content, relpath)
    assert outcome[:2] == ("problem", line) and "slug" in outcome[2]
    errors = check_errors(content, capsys, relpath)
    assert [(line_, code) for line_, code, _ in errors] == [(line, "bad-slug")]
    assert errors[0][2] == outcome[2]  # one rule, one message


def test_the_builder_leaves_out_a_record_whose_slug_climbs_out(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    (content / "events/2027/crafted.yaml").write_text(
        EVENT.replace("slug: crafted", "slug: ../../../../escaped"))
    out = tmp_path / "site" / "public"
    report = build(Options(content=content, out=out, cache_dir=tmp_path / "cache",
                           now=NOW, progress=False))
    assert [p.path for p in report.problems] == ["events/2027/crafted.yaml"]
    assert not list(tmp_path.rglob("escaped*"))
    assert not report.refused


def test_an_image_path_climbing_out_is_not_copied(tmp_path: Path) -> None:
    """A media path that stays in the content tree but would climb out of the output
    folder (`media/../../content/...`) is not a file of the media folder: it is not
    copied anywhere (the writer's own refusal is tested above)."""
    content = make_repo(tmp_path)
    event = content / "events/2027/jazz-night-february-2027.yaml"
    event.write_text(event.read_text().replace(
        "image: media/jazz-night.png", "image: media/../../content/media/jazz-night.png"))
    out = tmp_path / "site" / "public"
    main(["build", "--content", str(content), "--out", str(out)])
    assert not (tmp_path / "site" / "content").exists()
    assert (out / "index.html").exists()  # the rest of the site is built


@pytest.mark.parametrize("relpath", [
    "../escape.html", "event/../../escape.html", "/tmp/escape.html", "a/\0/b", "", ".",
    "event/..", "event/x/../../../escape.html"])
def test_the_writer_refuses_paths_outside_the_output(tmp_path: Path, relpath: str) -> None:
    out = tmp_path / "site" / "public"
    out.mkdir(parents=True)
    with pytest.raises(paths.OutsideOutput):
        writer.write(out, relpath, b"x")
    with pytest.raises(paths.OutsideOutput):
        writer.link(out, "index.html", relpath)
    with pytest.raises(paths.OutsideOutput):
        writer.link(out, relpath, "index.html")
    with pytest.raises(paths.OutsideOutput):
        writer.remove(out, relpath)
    assert [p.name for p in tmp_path.rglob("*")] == ["site", "public"]


def test_the_writer_writes_inside_the_output(tmp_path: Path) -> None:
    writer.write(tmp_path, "event/a.b/index.html", b"x")
    assert (tmp_path / "event/a.b/index.html").read_bytes() == b"x"


# -- writes the calendar could not read back ------------------------------------------------
def test_a_write_larger_than_a_record_file_may_be_is_refused(content: Path, client,
                                                             admin: dict) -> None:
    # 1,020 KB of JSON ("a\\n" a line), under the request limit; the YAML block indents
    # every line ("  a\n"): 1.36 MB, over the limit of a record file.
    description = "a\n" * 340_000
    before = files_and_commits(content)
    response = client.post(f"{BASE}/events", headers=admin, json={
        "title": "Long", "start_date": "2027-01-01 10:00:00",
        "end_date": "2027-01-01 11:00:00", "description": description})
    assert response.status_code == 413
    error = response.get_json()
    assert set(error) == {"code", "message", "data"} and error["data"]["status"] == 413
    assert "description" in error["message"] and list(error["data"]["params"]) == [
        "description"]
    assert files_and_commits(content) == before


def test_an_update_that_grows_a_file_too_large_is_refused(content: Path, client,
                                                          admin: dict) -> None:
    before = files_and_commits(content)
    response = client.post(f"{BASE}/venues/45", headers=admin,
                           json={"description": "x\n" * 340_000})
    assert response.status_code == 413 and "description" in response.get_json()["message"]
    assert files_and_commits(content) == before
    assert client.get(f"{BASE}/venues/45").status_code == 200


@pytest.mark.parametrize(("text", "expected"), [
    ("id: 500\ntitle: [unclosed\n", 501),  # no YAML at all, the id line still counts
    ("# draft\nid: 500 # mine\ntitle: x\n  bad: indentation\n", 501),
    (f"id: {2**60}\ntitle: Too big\n", SAMPLE_NEXT_ID),  # never an id: next stays JSON-safe
    ("title: x\n  nested:\n    id: 900\n", SAMPLE_NEXT_ID),  # not the top-level id
])
def test_next_id_skips_ids_held_by_files_that_do_not_load(content: Path, config: dict,
                                                          admin: dict, text: str,
                                                          expected: int) -> None:
    (content / "events/2027/broken.yaml").write_text(text)
    app = create_app(config)
    try:
        response = app.test_client().post(f"{BASE}/tags", headers=admin,
                                          json={"name": "Fresh"})
        assert response.status_code == 201, response.get_json()
        assert response.get_json()["id"] == expected
    finally:
        app.extensions["calendar"].close()
