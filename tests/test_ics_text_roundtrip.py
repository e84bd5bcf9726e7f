"""Text through `export ics` and `import ics`: typographic punctuation and any other
non-ASCII text in titles, descriptions and venues comes back as it was written.

The normalisations that are meant (docs/icalendar-import.md, "Text"): a title is shown
as the site shows it (wptexturize: ASCII quotes, `--` and `...` become typographic;
runs of spaces are one; ends trimmed), a description is its Markdown rendered as text,
a venue's name and address have runs of spaces made one, ends trimmed. Nothing else."""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from pathlib import Path

import pytest
from conftest import NOW, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_importing import empty_tree, open_cal

from calendar_app.catalog.reader import open_reader
from calendar_app.cli import main as cli
from calendar_app.importing.ics import read_ics
from calendar_app.site.export import export_ics
from calendar_app.store import yamlfile

TYPOGRAPHIC = "Ann’s “Big” Night – a… ‘Late’ — ½ café Ünïcödé 😀 Ἀθῆναι 東京 \u00a0no-break"
HEAD = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other//EN\r\nBEGIN:VEVENT\r\nUID:a\r\n" \
       b"DTSTART:20270101T100000Z\r\n"
TAIL = b"\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"


def _tree(root: Path, events: list[dict], venues: list[dict]) -> Path:
    content = root / "content"
    (content / "events").mkdir(parents=True)
    (content / "venues").mkdir()
    (content / "calendar.yaml").write_text("title: T\ntimezone: Europe/Berlin\n")
    for venue in venues:
        (content / "venues" / f"v{venue['id']}.yaml").write_text(yamlfile.dump(venue))
    for event in events:
        (content / "events" / f"e{event['id']}.yaml").write_text(yamlfile.dump(event))
    return content


def _round_trip(events: list[dict], venues: list[dict]) -> dict[int, dict]:
    """Each event's fields as `import ics` reads the calendar's `export ics`, by id,
    with its venue's fields under "venue"."""
    with tempfile.TemporaryDirectory() as tmp:
        content = _tree(Path(tmp), events, venues)
        reader = open_reader(content, Path(tmp) / "cache", NOW)
        assert reader.catalog.problems == {}
        exported = export_ics(reader)
    batch = read_ics(exported.encode("utf-8"), "export.ics", "Europe/Berlin")
    assert batch.problems == []
    places = {(r.collection, r.source_id): r.fields for r in batch.records}
    out = {}
    for record in batch.records:
        if record.collection == "events":
            fields = dict(record.fields)
            ref = fields.get("venue")
            fields["venue"] = places[(ref.collection, ref.source_id)] if ref else None
            out[fields["id"]] = fields
    return out


def _event(n: int, title: str, description: str, venue: int | None = None) -> dict:
    start = dt.datetime(2027, 1, 1, 19) + dt.timedelta(days=n)
    event = {"id": 100 + n, "title": title, "description": description,
             "start_date": start, "end_date": start + dt.timedelta(hours=1)}
    return event | ({"venue": f"v{venue}"} if venue else {})


def test_typographic_and_other_non_ascii_text_survives() -> None:
    venues = [{"id": 7, "name": "Café “Zur Post”, Süd – Köln’s", "address": "Hauptstraße 1",
               "city": "Köln"},
              {"id": 8, "name": "Hall\u00a0B (East)", "address": "Main St"}]
    description = f"{TYPOGRAPHIC}\n\nSecond paragraph; commas, semicolons \\ backslash: ß" * 3
    events = [_event(0, TYPOGRAPHIC, description, 7), _event(1, "Ümläut", "ü", 8)]
    got = _round_trip(events, venues)
    assert got[100]["title"] == TYPOGRAPHIC and got[100]["description"] == description
    assert got[100]["venue"] == {"venue": "Café “Zur Post”, Süd – Köln’s",
                                 "address": "Hauptstraße 1, Köln"}
    assert got[101]["venue"]["venue"] == "Hall\u00a0B (East)"


def test_the_feeds_own_text_rules() -> None:
    """The intended normalisations: titles as the site shows them, descriptions as text."""
    got = _round_trip([_event(0, "Rock 'n' Roll -- the \"90s\"...  live  ",
                              "A *very* good [show](https://example.org/)")], [])
    assert got[100]["title"] == "Rock ‘n’ Roll — the “90s”… live"
    assert got[100]["description"] == "A very good show (https://example.org/)"


@pytest.mark.parametrize("shift", range(4))
def test_a_fold_inside_a_character_is_read_as_utf8(shift: int) -> None:
    """Some producers fold at 75 octets whatever the character there: the text is the
    same, and the file is not taken for Windows-1252."""
    title = "x" * shift + TYPOGRAPHIC * 3
    line = ("SUMMARY:" + title).encode("utf-8")
    parts = [line[:75]] + [line[i:i + 74] for i in range(75, len(line), 74)]
    assert any(part[:1] >= b"\x80" and part[0] & 0xC0 == 0x80 for part in parts[1:])
    batch = read_ics(HEAD + b"\r\n ".join(parts) + TAIL, "other.ics", "UTC")
    assert batch.problems == [] and batch.records[0].fields["title"] == title


def test_export_to_standard_output_is_utf8(tmp_path: Path,
                                           capsysbinary: pytest.CaptureFixture) -> None:
    content = empty_tree(tmp_path, "source")
    (content / "events").mkdir()
    (content / "events" / "typographic.yaml").write_text(
        yamlfile.dump(_event(0, TYPOGRAPHIC, "ü", None)))
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-qm", "a typographic title")
    assert cli(["export", "ics", "--content", str(content), "--cache-dir",
                str(tmp_path / "c")]) == 0
    data = capsysbinary.readouterr().out
    (tmp_path / "out.ics").write_bytes(data)
    tree = empty_tree(tmp_path)
    assert cli(["import", "ics", str(tmp_path / "out.ics"), "--content", str(tree),
                "--cache-dir", str(tmp_path / "c2")]) == 0
    calendar = open_cal(tree, tmp_path, cache="c3")
    try:
        assert TYPOGRAPHIC in {r.name for r in calendar.catalog.all("events")}
    finally:
        calendar.close()


# -- any text ------------------------------------------------------------------------
# Everything but controls, surrogates and line separators (dropped from text on import:
# icalendar-import.md, "Bad input").
_ANY = st.characters(blacklist_categories=("Cs", "Cc"),
                     blacklist_characters="\u2028\u2029\x85")
# Titles: ASCII quotes aside (the site's typographic ones are tested above).
_TITLE = st.text(st.characters(blacklist_categories=("Cs", "Cc"),
                               blacklist_characters="\u2028\u2029\x85'\""),
                 min_size=1, max_size=30).filter(
    lambda t: t.strip() and "--" not in t and "..." not in t)
# Descriptions: prose, no Markdown syntax (that is rendered: above).
_WORD = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp", "P", "S"),
                              blacklist_characters="\x85"), min_size=1, max_size=12) | \
    st.sampled_from(["’", "“", "”", "–", "…", "—", "«", "»", "€", "½", "😀", ";", ",", "?"])
_PARAGRAPH = st.lists(_WORD, min_size=1, max_size=12).map(" ".join).filter(
    lambda p: not re.match(r"\d", p))
_DESCRIPTION = st.lists(_PARAGRAPH, min_size=1, max_size=3).map("\n\n".join)
_NAME = st.text(_ANY, min_size=1, max_size=30).filter(str.strip)


def _spaces(text: str) -> str:
    return re.sub(r"[ \t\n\r\f\v]+", " ", text).strip()


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(_TITLE, _DESCRIPTION, _NAME), min_size=1, max_size=6))
def test_any_text_survives_the_round_trip(texts: list[tuple[str, str, str]]) -> None:
    venues = [{"id": 10 + n, "name": name, "address": "Straße 1", "city": "Zürich"}
              for n, (_, _, name) in enumerate(texts)]
    events = [_event(n, title, description, 10 + n)
              for n, (title, description, _) in enumerate(texts)]
    got = _round_trip(events, venues)
    for n, (title, description, name) in enumerate(texts):
        fields = got[100 + n]
        assert fields["title"] == _spaces(title)
        assert fields["description"] == description
        assert fields["venue"] == {"venue": _spaces(name), "address": "Straße 1, Zürich"}


def test_what_no_one_reads_is_cut_before_parsing_and_nothing_else() -> None:
    """Bookkeeping, producers' X- properties and alarms are not parsed (speed); what
    is read (SEQUENCE, X-GOOGLE-CONFERENCE, X-WR-TIMEZONE) still is, lines still count."""
    body = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Google Inc//Google Calendar//EN\r\n"
            "X-WR-TIMEZONE:Europe/Berlin\r\nX-PUBLISHED-TTL:PT1H\r\nBEGIN:VEVENT\r\n"
            "DTSTAMP:20261101T120000Z\r\nX-MOZ-GENERATION:3\r\n  and a fold\r\n"
            "UID:g1\r\nDTSTART:20270105T180000Z\r\nSEQUENCE:2\r\nSUMMARY:Café\r\n"
            "X-GOOGLE-CONFERENCE:https://meet.example.org/abc\r\nBEGIN:VALARM\r\n"
            "ACTION:DISPLAY\r\nTRIGGER:-PT30M\r\nEND:VALARM\r\nRESOURCES:Projector\r\n"
            "END:VEVENT\r\nEND:VCALENDAR\r\n")
    batch = read_ics(body.encode(), "google.ics", "UTC")
    (event,) = [r for r in batch.records if r.collection == "events"]
    assert event.fields["title"] == "Café"
    assert event.fields["online_url"] == "https://meet.example.org/abc"
    assert event.fields["start_date"] == dt.datetime(2027, 1, 5, 19)  # X-WR-TIMEZONE read
    assert [(p.message, p.line) for p in batch.problems] == [
        ("RESOURCES not imported (no such field here)", 19)]
