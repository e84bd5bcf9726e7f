"""`import ics`, `export ics` and sources of kind ics, end to end: files in each
producer's style imported once (a second run makes no commit), a feed over HTTP with
its ETag, events gone from a feed, our export imported back, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from test_importing import commits, empty_tree, open_cal, serve
from werkzeug.wrappers import Request, Response

from calendar_app.cli import main
from calendar_app.importing import fetch
from calendar_app.importing.sources import load_source, run_source

ICS = Path(__file__).parent / "fixtures" / "ics"
STYLES = ["meetup_python.ics", "apple_book_club.ics", "nextcloud_repair_cafe.ics",
          "gancio_feed.ics", "mobilizon_group.ics", "outlook_windows_zones.ics",
          "tec_plugin_export.ics", "recurring_events_moved.ics", "duration.ics"]


def cli(*argv: str) -> int:
    return main(list(argv))


@pytest.mark.parametrize("name", STYLES)
def test_import_ics_once_then_no_commit(tmp_path: Path, name: str) -> None:
    tree = empty_tree(tmp_path)
    args = ("import", "ics", str(ICS / name), "--content", str(tree), "--cache-dir",
            str(tmp_path / "c"))
    cli(*args)
    assert commits(tree) == 3
    assert git(tree.parent, "log", "-1", "--format=%an|%s").startswith("import|")
    assert f"from {name}" in git(tree.parent, "log", "-1", "--format=%s")
    cli(*args)
    assert commits(tree) == 3  # idempotent
    text = "".join(p.read_text() for p in (tree / "events").rglob("*.yaml"))
    assert f"source: {name}" in text and "source_id:" in text


def test_webcal_is_https() -> None:
    assert fetch.normalize_url("webcal://cal.example.org/a.ics") == (
        "https://cal.example.org/a.ics")
    assert fetch.is_url("webcal://cal.example.org/a.ics")


def test_not_icalendar_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    tree = empty_tree(tmp_path)
    bad = tmp_path / "feed.ics"
    bad.write_text("<html>not a calendar</html>")
    assert cli("import", "ics", str(bad), "--content", str(tree), "--cache-dir",
               str(tmp_path / "c")) == 1
    assert "feed.ics" in capsys.readouterr().err and commits(tree) == 2


def test_export_ics_imported_back_gives_the_same_events(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.ics"
    assert cli("export", "ics", "--out", str(out), "--content", str(content),
               "--cache-dir", str(tmp_path / "c1")) == 0
    assert out.read_text().startswith("BEGIN:VCALENDAR")
    tree = empty_tree(tmp_path)
    cli("import", "ics", str(out), "--content", str(tree), "--cache-dir", str(tmp_path / "c2"))
    src, new = open_cal(content, tmp_path, cache="c3"), open_cal(tree, tmp_path, cache="c4")
    def plain(name: str) -> str:  # the export writes typographic apostrophes as typed
        return name.replace("\u2019", "'")

    published = {(plain(r.name), r.data["start_date"]) for r in src.catalog.all("events")
                 if r.status == "publish"}
    assert {(plain(r.name), r.data["start_date"])
            for r in new.catalog.all("events")} == published
    src.close()
    new.close()


def test_an_ics_source_over_http(tmp_path: Path) -> None:
    tree = empty_tree(tmp_path)
    feed = {"text": (ICS / "meetup_python.ics").read_text(), "etag": '"1"'}
    asked: list = []

    @Request.application
    def app(request: Request) -> Response:
        asked.append(request.headers.get("If-None-Match"))
        if request.headers.get("If-None-Match") == feed["etag"]:
            return Response(status=304)
        return Response(feed["text"], mimetype="text/calendar",
                        headers={"ETag": feed["etag"]})

    with serve(app) as url:
        (tree / "sources").mkdir()
        (tree / "sources/city.yaml").write_text(
            f"kind: ics\nurl: {url}/feed.ics\n")
        calendar = open_cal(tree, tmp_path)
        source = load_source(tree, "city")
        first = run_source(calendar, source)
        assert first.committed and "from city" in git(tree.parent, "log", "-1", "--format=%s")
        assert git(tree.parent, "log", "-1", "--format=%an") == "sources\n"
        assert run_source(calendar, source) is None and asked[-1] == '"1"'  # 304
        events = [r for r in first.created if r.collection == "events"]
        lines = feed["text"].split("\r\n") if "\r\n" in feed["text"] else feed[
            "text"].split("\n")
        uid = next(line for line in lines if line.startswith("UID:"))[4:]
        start = lines.index(next(line for line in lines if line == "BEGIN:VEVENT"))
        end = lines.index("END:VEVENT", start) + 1
        feed["text"] = "\r\n".join(lines[:start] + lines[end:])
        feed["etag"] = '"2"'
        gone = run_source(calendar, source)
        # cancelled (the event status), kept
        assert [r.data["source_id"] for r in gone.cancelled] == [uid] and not gone.gone
        assert calendar.catalog.get(gone.cancelled[0].id).get("event_status") == "canceled"
        assert len(calendar.catalog.all("events")) == len(events)
        calendar.close()
