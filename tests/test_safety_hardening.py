"""Issue 20, items 1, 2, 4, 20 and 24: create-by-name never edits nor reveals a record,
e-mail addresses and control characters are refused where they would do harm, and
every iCalendar feed the builder writes is strict RFC 5545.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import time
from pathlib import Path
from xml.etree import ElementTree

import icalendar
import pytest
import recurring_ical_events
from conftest import BASE, CRAFTED_EVENT, SAMPLE, git, make_repo, site_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.cli import main
from calendar_app.site import build, ical
from calendar_app.store import parsing

JAZZ_COLLECTIVE = 61  # organizers/riverside-jazz-collective.yaml, published, by user 1
JAZZ_COLLECTIVE_FILE = "organizers/riverside-jazz-collective.yaml"
BLUE_LANTERN = 45  # venues/the-blue-lantern.yaml, published
BLUE_LANTERN_FILE = "venues/the-blue-lantern.yaml"
ROLES_THAT_WRITE = ("contributor", "author", "editor")


@pytest.fixture
def content(linked_content: Path) -> Path:
    return linked_content  # the app replaces files by renaming: the template stays intact


def event_body(**extra) -> dict:
    return {"title": "Safety Concert", "start_date": "2027-02-01 19:00:00",
            "end_date": "2027-02-01 21:00:00", **extra}


def post(client, headers: dict, path: str, body: dict):
    response = client.post(f"{BASE}/{path}", headers=headers, json=body)
    return response, response.get_json()


def history(content: Path, path: str) -> tuple[bytes, str]:
    """A record file's bytes and its git log: what reuse must never change."""
    return ((content / path).read_bytes(),
            git(content.parent, "log", "--format=%H", "--", path))


# -- 1. create-by-name never edits the record it names ---------------------------------
@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
@pytest.mark.parametrize("status", [None, "draft", "trash"])
def test_organizer_by_name_with_other_data_is_a_new_record(client, auth, content, role,
                                                           status):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    body = {"organizer": "Riverside Jazz Collective", "email": "thief@evil.example.org",
            "phone": "000"}
    if status:
        body["status"] = status
    response, answer = post(client, auth(role), "organizers", body)
    assert response.status_code == 201
    assert answer["id"] != JAZZ_COLLECTIVE
    assert answer["email"] == "thief@evil.example.org"
    assert answer["slug"] != "riverside-jazz-collective"
    assert history(content, JAZZ_COLLECTIVE_FILE) == before
    untouched = client.get(f"{BASE}/organizers/{JAZZ_COLLECTIVE}").get_json()
    assert untouched["status"] == "publish"
    assert untouched["email"] == "hello@riversidejazz.example.org"


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_exact_duplicate_is_answered_unchanged(client, auth, content, role):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    head = git(content.parent, "rev-parse", "HEAD")
    response, answer = post(client, auth(role), "organizers", {
        "organizer": "riverside jazz collective", "email": "hello@riversidejazz.example.org",
        "phone": "(951) 555-0101"})
    assert response.status_code == 201  # as the plugin answers a reused record
    assert answer["id"] == JAZZ_COLLECTIVE
    assert answer["organizer"] == "Riverside Jazz Collective"
    assert history(content, JAZZ_COLLECTIVE_FILE) == before
    assert git(content.parent, "rev-parse", "HEAD") == head  # nothing committed


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_venue_by_name_with_other_data_is_a_new_record(client, auth, content, role):
    before = history(content, BLUE_LANTERN_FILE)
    response, answer = post(client, auth(role), "venues", {
        "venue": "The Blue Lantern", "address": "1 Elsewhere Road", "status": "trash"})
    assert response.status_code == 201
    assert answer["id"] != BLUE_LANTERN and answer["address"] == "1 Elsewhere Road"
    assert history(content, BLUE_LANTERN_FILE) == before


@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_inline_venue_and_organizer_never_edit_the_named_records(client, auth, content,
                                                                  role):
    venue_before = history(content, BLUE_LANTERN_FILE)
    organizer_before = history(content, JAZZ_COLLECTIVE_FILE)
    headers = auth(role)
    response, event = post(client, headers, "events", event_body(
        venue={"venue": "The Blue Lantern", "phone": "999", "status": "draft"},
        organizer=[{"organizer": "Riverside Jazz Collective",
                    "email": "thief@evil.example.org"}]))
    assert response.status_code == 201
    assert event["venue"]["id"] != BLUE_LANTERN
    assert [o["id"] for o in event["organizer"]] != [JAZZ_COLLECTIVE]
    # The same through an update of the event.
    response = client.post(f"{BASE}/events/{event['id']}", headers=headers, json={
        "venue": {"venue": "the blue lantern", "status": "trash", "city": "Nowhere"},
        "organizer": [{"organizer": "Riverside Jazz Collective", "phone": "1"}]})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["venue"]["id"] != BLUE_LANTERN
    assert history(content, BLUE_LANTERN_FILE) == venue_before
    assert history(content, JAZZ_COLLECTIVE_FILE) == organizer_before


def test_inline_exact_duplicate_is_linked_unchanged(client, auth, content):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    response, event = post(client, auth("contributor"), "events", event_body(
        organizer=[{"organizer": "Riverside Jazz Collective"}]))
    assert response.status_code == 201
    assert [o["id"] for o in event["organizer"]] == [JAZZ_COLLECTIVE]
    assert history(content, JAZZ_COLLECTIVE_FILE) == before


ORGANIZER_FIELDS = st.fixed_dictionaries({}, optional={
    "email": st.sampled_from(["hello@riversidejazz.example.org", "x@example.org", ""]),
    "phone": st.sampled_from(["(951) 555-0101", "1", ""]),
    "website": st.sampled_from(["https://riversidejazz.example.org/", "https://x.org/"]),
    "description": st.text(max_size=20),
    "status": st.sampled_from(["publish", "draft", "pending", "private", "trash"]),
    "slug": st.sampled_from(["riverside-jazz-collective", "other-slug"]),
})


@settings(max_examples=20, deadline=5000,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(fields=ORGANIZER_FIELDS, role=st.sampled_from(ROLES_THAT_WRITE),
       inline=st.booleans())
def test_no_body_naming_an_organizer_changes_it(client, auth, content, fields, role, inline):
    before = history(content, JAZZ_COLLECTIVE_FILE)
    started = time.monotonic()
    named = {"organizer": "Riverside Jazz Collective", **fields}
    if inline:
        response, answer = post(client, auth(role), "events", event_body(organizer=[named]))
    else:
        response, answer = post(client, auth(role), "organizers", named)
    assert response.status_code in (201, 400), answer
    assert time.monotonic() - started < 5
    assert history(content, JAZZ_COLLECTIVE_FILE) == before


# -- 2. reuse never reveals a record the caller may not read ----------------------------
@pytest.mark.parametrize("status", ["draft", "pending", "private"])
@pytest.mark.parametrize("role", ROLES_THAT_WRITE)
def test_unreadable_venue_is_never_revealed_by_name(client, auth, admin, content, status,
                                                    role):
    response, hidden = post(client, admin, "venues", {
        "venue": "Secret Loft", "address": "7 Hidden Lane", "phone": "555-SECRET",
        "status": status})
    assert response.status_code == 201 and hidden["status"] == status
    before = history(content, f"venues/{hidden['slug']}.yaml")
    response, answer = post(client, auth(role), "venues", {"venue": "Secret Loft"})
    assert response.status_code == 201
    readable = role == "editor"  # editors read others' drafts and private records
    assert (answer["id"] == hidden["id"]) is readable
    if not readable:
        assert "Hidden" not in str(answer) and "SECRET" not in str(answer)
    assert history(content, f"venues/{hidden['slug']}.yaml") == before
    response, event = post(client, auth(role), "events", event_body(
        venue={"venue": "Secret Loft"}))
    assert response.status_code == 201
    assert (event["venue"]["id"] == hidden["id"]) is readable
    assert history(content, f"venues/{hidden['slug']}.yaml") == before


# -- 4. e-mail addresses are addresses, at write time and in files ----------------------
HOSTILE_EMAILS = ["a@b.org\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:forged",
                  "a@b.org\r\nX-EVIL:1", "a b@example.org", '"quoted"@example.org',
                  "<a@b.org>", "a@b.org,c@d.org", "no-at-sign", "a@localhost", "a@b.org\x85"]
ORGANIZER_FILE = "id: 950\nname: Handmade\nslug: handmade\nemail: {}\n"


@pytest.mark.parametrize("email", HOSTILE_EMAILS)
def test_interface_refuses_what_is_not_an_e_mail_address(client, auth, content, email):
    head = git(content.parent, "rev-parse", "HEAD")
    for role in ("author", "editor"):
        response, error = post(client, auth(role), "organizers",
                               {"organizer": "Mailer", "email": email})
        assert response.status_code == 400
        assert error["code"] == "rest_invalid_param" and error["data"]["status"] == 400
        assert "email" in error["data"]["params"]
        response = client.post(f"{BASE}/organizers/{JAZZ_COLLECTIVE}", headers=auth(role),
                               json={"email": email})
        assert response.status_code == 400
        response, error = post(client, auth(role), "events", event_body(
            organizer=[{"organizer": "Mailer", "email": email}]))
        assert response.status_code == 400 and error["code"] == "rest_invalid_param"
    assert git(content.parent, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("email", ["a@b.org", "first.last+tag@mail.example.co.uk",
                                   "jörg@bücher.example", "o'brien@example.org"])
def test_e_mail_addresses_are_taken(client, admin, email):
    response, answer = post(client, admin, "organizers", {"organizer": "Fine", "email": email})
    assert response.status_code == 201 and answer["email"] == email
    assert parsing.parse_data(ORGANIZER_FILE.format(json.dumps(email)).encode(),
                              "organizers/handmade.yaml", "organizers")[0] == "record"


@pytest.mark.parametrize("email", HOSTILE_EMAILS)
def test_loader_and_check_refuse_a_bad_e_mail_with_its_line(tmp_path, capsys, email):
    content = make_repo(tmp_path)
    relpath = "organizers/handmade.yaml"
    (content / relpath).write_text(ORGANIZER_FILE.format(json.dumps(email)))
    outcome = parsing.parse_data((content / relpath).read_bytes(), relpath, "organizers")
    assert outcome[:2] == ("problem", 4) and "email" in outcome[2]
    assert (4, "invalid-email") in check_errors(content, capsys, relpath) or (
        4, "control-character") in check_errors(content, capsys, relpath)


# -- 20. control characters: refused in files as the interface refuses them -------------
# Each as a YAML double-quoted escape (the raw characters are not YAML at all).
REFUSED = {"\x00": "\\0", "\x01": "\\x01", "\x1b": "\\e", "\x0b": "\\v", "\x7f": "\\x7F",
           "\x85": "\\N", "\u2028": "\\L", "\ufffe": "\\uFFFE"}


def check_errors(content: Path, capsys, relpath: str) -> list[tuple[int, str]]:
    main(["check", str(content), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return [(f["line"], f["code"]) for f in findings
            if f["path"].endswith(relpath) and f["severity"] == "error"]


def crafted(key_and_value: str) -> bytes:
    return (CRAFTED_EVENT + key_and_value).encode()


@pytest.mark.parametrize("char", list(REFUSED))
def test_interface_and_loader_refuse_the_same_characters(client, admin, char):
    response, error = post(client, admin, "events", event_body(title=f"Bad{char}title"))
    assert response.status_code == 400 and error["code"] == "rest_invalid_param"
    text = CRAFTED_EVENT.replace("title: Crafted", f'title: "Bad{REFUSED[char]}title"')
    outcome = parsing.parse_data(text.encode(), "events/crafted.yaml", "events")
    assert outcome[:2] == ("problem", 2) and f"U+{ord(char):04X}" in outcome[2]


@pytest.mark.parametrize("value", ["Tab\there", "Line\nbreak", "C1 \x80 and \x9f", "Ünïcödé"])
def test_interface_and_loader_take_the_same_characters(client, admin, value):
    response, _ = post(client, admin, "events", event_body(title=value))
    assert response.status_code == 201
    outcome = parsing.parse_data(crafted(f"excerpt: {json.dumps(value)}\n"),
                                 "events/crafted.yaml", "events")
    assert outcome[0] == "record" and outcome[1]["excerpt"] == value


@pytest.mark.parametrize("addition", [
    'description: "Fine\\n\\nthen a NUL \\0 here"\n',
    'performer: ["Ann", "B\\x01b"]\n',
    ('recurrence:\n  rrule: FREQ=WEEKLY;COUNT=3\n  changes:\n'
     '    2027-05-08 19:00:00:\n      title: "Moved\\x07"\n'),
])
def test_control_characters_anywhere_in_a_file_are_refused_with_their_line(
        tmp_path, capsys, addition):
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(CRAFTED_EVENT + addition)
    outcome = parsing.parse_data((content / relpath).read_bytes(), relpath, "events")
    assert outcome[:2] == ("problem", 7)  # the line of the key holding it
    assert check_errors(content, capsys, relpath) == [(7, "control-character")]


def test_a_build_leaves_the_file_out_feed_xml_stays_well_formed(tmp_path):
    content = make_repo(tmp_path)
    relpath = "events/2027/crafted.yaml"
    (content / relpath).write_text(CRAFTED_EVENT.replace(
        "title: Crafted", 'title: "Crafted\\0\\x01\\x1b[31m"').replace(
        "slug: crafted", 'slug: crafted\nexcerpt: "bell\\a"'))
    out = tmp_path / "public"
    options = site_options(content, out, tmp_path / "cache")
    options.keep_going = True
    report = build(options)
    assert [p.path for p in report.problems] == [relpath]
    assert report.problems[0].line == 2
    ElementTree.parse(out / "feed.xml")  # well-formed
    for page in out.rglob("*"):
        if page.suffix in (".html", ".xml", ".ics", ".json") and page.is_file():
            assert b"\x00" not in page.read_bytes() and b"\x1b" not in page.read_bytes()


# -- 4 and 24. every iCalendar feed is strict RFC 5545, whatever the records hold -------
HOSTILE = '"Evil" Org;X-A=1:\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:forged\\,;'
Q = json.dumps(HOSTILE)  # as a YAML double-quoted scalar
HOSTILE_FILES = {
    "organizers/evil-org.yaml": f"id: 9001\nname: {Q}\nslug: evil-org\n"
                                "email: \"evil+x'%?#/@example.org\"\n",
    "organizers/second-org.yaml": "id: 9002\nname: Second, Org\nslug: second-org\n"
                                  "email: second@example.org\n",
    "organizers/no-mail-org.yaml": f"id: 9003\nname: {json.dumps('No Mail ' + HOSTILE)}\n"
                                   "slug: no-mail-org\n",
    "venues/evil-venue.yaml": f"id: 9004\nname: {Q}\nslug: evil-venue\naddress: {Q}\n",
    "categories/evil-cat.yaml": f"id: 9005\nname: {Q}\nslug: evil-cat\n",
    "events/2027/evil-event.yaml": f"""\
id: 9006
title: {Q}
slug: evil-event
start_date: 2027-01-15 19:00:00
end_date: 2027-01-15 21:00:00
venue: evil-venue
organizers: [evil-org, second-org, no-mail-org]
categories: [evil-cat]
description: {Q}
recurrence:
  rrule: FREQ=WEEKLY;COUNT=3
  changes:
    2027-01-22 19:00:00:
      title: {Q}
""",
}
# A content line once unfolded (RFC 5545 3.1): name, parameters, ":" and a value
# without control characters (tab aside).
_PARAM_VALUE = r'(?:"[^"\x00-\x08\x0a-\x1f\x7f]*"|[^";:,\x00-\x08\x0a-\x1f\x7f]*)'
CONTENT_LINE = re.compile(rf"[A-Za-z0-9-]+(?:;[A-Za-z0-9-]+={_PARAM_VALUE}"
                          rf"(?:,{_PARAM_VALUE})*)*:[^\x00-\x08\x0a-\x1f\x7f]*")


def strict_vevents(raw: bytes) -> list:
    """The VEVENTs of a feed that passes a structural RFC 5545 check and `icalendar`."""
    assert raw.endswith(b"\r\n")
    physical = raw[:-2].split(b"\r\n")
    assert all(b"\r" not in line and b"\n" not in line for line in physical)
    assert all(len(line) <= 75 for line in physical)  # folded at 75 octets
    logical = raw.replace(b"\r\n ", b"").decode("utf-8").split("\r\n")[:-1]
    for line in logical:
        assert CONTENT_LINE.fullmatch(line), line
    begins = logical.count("BEGIN:VEVENT")
    assert begins == logical.count("END:VEVENT")
    calendar = icalendar.Calendar.from_ical(raw)
    vevents = list(calendar.walk("VEVENT"))
    assert len(vevents) == begins
    for vevent in vevents:
        assert sum(1 for name, _ in vevent.property_items() if name == "ORGANIZER") <= 1
    recurring_ical_events.of(calendar).between(dt.date(2026, 1, 1), dt.date(2029, 1, 1))
    return vevents


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    shutil.copytree(SAMPLE, tmp / "content")
    for relpath, text in HOSTILE_FILES.items():
        (tmp / "content" / relpath).write_text(text)
    report = build(site_options(tmp / "content", tmp / "public", tmp / "cache"))
    assert not report.problems, report.problems
    return tmp / "public"


def test_every_feed_is_strict_and_carries_one_organizer_per_vevent(hostile_site):
    feeds = sorted(hostile_site.rglob("*.ics"))
    assert len(feeds) > 20 and hostile_site / "calendar.ics" in feeds
    for feed in feeds:
        strict_vevents(feed.read_bytes())
    # The sample's matinee has two organizers, both with an address.
    [matinee] = [v for v in strict_vevents((hostile_site / "calendar.ics").read_bytes())
                 if "Family Film Matinee" in str(v["SUMMARY"])]
    assert str(matinee["ORGANIZER"]) == "mailto:friends@library.example.org"
    assert matinee["ORGANIZER"].params["CN"] == "Friends of the Eastside Library"
    attendee = matinee["ATTENDEE"]
    assert str(attendee) == "mailto:programming@lanternfilm.example.com"
    assert attendee.params["ROLE"] == "NON-PARTICIPANT"
    assert attendee.params["CN"] == "Lantern Film Society"


def test_hostile_values_stay_inside_their_property(hostile_site):
    [feed] = hostile_site.rglob("evil-event/event.ics")
    vevents = strict_vevents(feed.read_bytes())
    assert len(vevents) == 2  # the series and its changed date: nothing forged
    title = HOSTILE.replace("\r\n", "\n")
    for vevent in vevents:
        # The page's title (typographic quotes, one line), still one value.
        assert str(vevent["SUMMARY"]).endswith(" END:VEVENT BEGIN:VEVENT SUMMARY:forged\\,;")
        assert str(vevent["LOCATION"]).startswith(title)
        assert vevent["CATEGORIES"].cats == [title]
        # A backslash is literal in a parameter (RFC 5545); icalendar drops it.
        cn = title.replace('"', "'").replace("\n", " ").replace("\\", "")
        assert vevent["ORGANIZER"].params["CN"] == cn
        assert str(vevent["ORGANIZER"]) == "mailto:evil+x'%25%3F%23%2F@example.org"
        attendee = vevent["ATTENDEE"]
        assert attendee.params["CN"] == "Second, Org"
        assert str(attendee) == "mailto:second@example.org"
        assert "Organized by: No Mail \"Evil\" Org;X-A=1:" in str(vevent["DESCRIPTION"])
    everything = [v for v in strict_vevents((hostile_site / "calendar.ics").read_bytes())
                  if str(v["UID"]).startswith("9006@")]
    assert len(everything) == 2


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120), st.text(max_size=40))
def test_escaped_values_cannot_leave_their_property(value: str, address: str) -> None:
    started = time.monotonic()
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT",
             "UID:" + ical.text(value) + "@example.org", "DTSTAMP:20270101T000000Z",
             "DTSTART:20270101T190000Z",
             "SUMMARY:" + ical.text(value), "LOCATION:" + ical.text(value),
             "CATEGORIES:" + ical.text(value) + "," + ical.text(value),
             f"ORGANIZER;CN={ical._param(value)}:{ical.mailto(address)}",
             "URL:" + ical.uri("https://example.org/" + value),
             "END:VEVENT", "END:VCALENDAR", ""]
    raw = b"\r\n".join(ical.fold(line) for line in lines)
    [vevent] = strict_vevents(raw)
    # Line breaks survive (as \n escapes), other control characters are dropped.
    assert str(vevent["SUMMARY"]) == re.sub("[\x00-\x08\x0b-\x1f\x7f]", "", value)
    assert time.monotonic() - started < 2
