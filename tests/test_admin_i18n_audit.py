"""No English left on the editing pages of a translated calendar (issue 25 item 2): every
page an editor, a moderator or a submitter meets (sign-in, lists, new and edit forms
with the rule builder, a form refused with errors, the rule preview, the moderation
queue, the submission form refused and accepted, an unreadable file) is walked in
German, French, Spanish and Arabic, and any English message of the catalogs found
verbatim in its words (text, labels for screen readers, the script's words) fails.
What records and users wrote (titles, names, typed values) is left out of the scan."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from conftest import csrf_token, git, sign_in
from conftest import localized as set_locale
from submitting import GOOD, propose, text

from calendar_app.http.app import create_app
from calendar_app.site.i18n import Regional

LOCALES = Path(__file__).resolve().parent.parent / "calendar_app" / "site" / "locales"
LANGUAGES = ("de_DE", "fr_FR", "es_ES", "ar_EG")
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}|%s")
# English words that are also the same word in a translation, or names (not messages).
SAME = {"Slug", "Tags", "Website", "E-mail", "Online", "Status", "OK"}


@cache
def english_phrases(locale: str) -> tuple[tuple[str, str, re.Pattern], ...]:
    """(msgid, its words, what finds them as words) of each message the catalog translates: its longest
    run of words between placeholders, when the translation does not say it too."""
    language = Regional(locale)
    with (LOCALES / "de" / "LC_MESSAGES" / "messages.po").open("rb") as source:
        ids = [m.id[0] if isinstance(m.id, tuple) else m.id for m in read_po(source) if m.id]
    out = []
    for msgid in ids:
        words = max(PLACEHOLDER.split(msgid), key=len).strip(" .,:;()\"'")
        translated = language.gettext(msgid)
        if (len(words) < 4 or not re.search(r"[A-Za-z]{3}", words) or words in SAME
                or words in translated):
            continue
        out.append((msgid, words, re.compile(rf"(?<![\w-]){re.escape(words)}(?![\w-])")))
    return tuple(out)


class Words(HTMLParser):
    """The words a page says: its text and the attributes people read (labels for
    screen readers, titles, placeholders, the script's words), without what was typed
    (form values, text areas) or stated by records (the options naming records)."""

    SAID = ("aria-label", "title", "placeholder", "alt", "data-words")
    SKIPPED = ("textarea", "script", "style")

    def __init__(self, values: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.values = values
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.SKIPPED:
            self.skipping += 1
        for name, value in attrs:
            if name in self.SAID and value:
                self.parts.append(" ".join(_strings(json.loads(value))) if name ==
                                  "data-words" else value)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)

    def said(self) -> str:
        shown = re.sub(r"\s+", " ", " ".join(self.parts))
        for value in sorted(self.values, key=len, reverse=True):
            shown = shown.replace(value, " ")
        return shown


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def record_values(content: Path) -> set[str]:
    """What the sample calendar's records say (titles, names, addresses...): their
    words may be English without being the pages' words."""
    found = set()
    for path in content.rglob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            value = line.split(":", 1)[1].strip().strip("'\"") if ":" in line else ""
            if len(value) >= 3:
                found.add(html.unescape(value))
    return found | {GOOD["title"], GOOD["venue_name"], GOOD["organizer_name"]}


def english_on(page: str, locale: str, values: set[str]) -> list[str]:
    reader = Words(values)
    reader.feed(page)
    shown = reader.said()
    return [msgid for msgid, words, found in english_phrases(locale)
            if words in shown and found.search(shown)]


def localized(content: Path, locale: str) -> None:
    """The calendar in `locale`, with the Jazz Night's neighbour's file broken (so the
    list names an unreadable file)."""
    set_locale(content, locale)
    (content / "events" / "broken.yaml").write_text("id: 990\ntitle: [Broken\n",
                                                     encoding="utf-8")
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-qm", "a broken file")


@pytest.fixture
def app(config: dict, content: Path, signed_users: dict, request: pytest.FixtureRequest):
    localized(content, request.param)
    return create_app(config)


def pages(client) -> dict[str, str]:
    """Every kind of editing page, as a visitor, a submitter and an editor meet it."""
    seen = {"sign-in": text(client.get("/admin/sign-in")),
            "sign-in refused": text(client.post("/admin/sign-in", data={
                "name": "editor", "password": "wrong",
                "csrf_token": csrf_token(client.get("/admin/sign-in").data)})),
            "submit": text(client.get("/submit/")),
            "submit refused": text(propose(client, end_date="2027-03-05T18:00", email="",
                                           title="")),
            "submit done": text(client.get(propose(client).headers["Location"]))}
    assert sign_in(client, "editor").status_code == 303
    for collection in ("events", "venues", "organizers", "categories", "tags"):
        seen[f"list {collection}"] = text(client.get(f"/admin/{collection}/"))
    for tab in ("past", "drafts", "pending", "trash"):
        seen[f"list events {tab}"] = text(client.get(f"/admin/events/?tab={tab}"))
    seen["new event"] = new = text(client.get("/admin/events/new"))
    seen["edit event"] = text(client.get("/admin/events/106/"))
    seen["edit venue"] = text(client.get("/admin/venues/45/"))
    seen["unreadable"] = text(client.get("/admin/events/990/"))
    form = {"csrf_token": csrf_token(new), "_version": "", "_original": "{}", "_id": "",
            "title": "Kiln Opening", "start_date": "2027-03-28T02:30",
            "end_date": "2027-03-28T01:00", "timezone": "Europe/Berlin",
            "event_status": "scheduled", "event_status_reason": "Weather",
            "recurrence.kind": "rrule", "recurrence.rrule": "FREQ=DAILY;BYHOUR=3",
            "action": "publish"}
    seen["refused event"] = text(client.post("/admin/events/new", data=form))
    seen["refused rule"] = text(client.post("/admin/events/new", data={
        **form, "end_date": "2027-03-28T04:00"}))
    seen["checked event"] = text(client.post("/admin/events/new", data={
        **form, "end_date": "2027-03-28T04:00", "recurrence.kind": "none",
        "action": "check"}))
    preview = client.post("/admin/api/events/preview", data={
        **form, "end_date": "2027-03-28T04:00", "recurrence.kind": "rule",
        "recurrence.every": "1", "recurrence.unit": "week", "recurrence.end": "count",
        "recurrence.count": "3", "recurrence.exdate": "2027-04-04 02:30"}).json
    seen["rule preview"] = html.escape(" ".join(_strings(preview)))
    seen["queue"] = text(client.get("/admin/pending/"))
    return seen


@pytest.mark.parametrize("app", LANGUAGES, indirect=True)
def test_no_english_message_is_left_on_the_editing_pages(app, client, content, request):
    locale = request.node.callspec.params["app"]
    values = record_values(content)
    seen = pages(client)
    # The walk met the pages it meant to: refusals, findings, the broken file, the queue.
    assert "Kiln Opening" in seen["refused event"]
    assert "&#39;FREQ=DAILY;BYHOUR=3&#39;" in seen["refused rule"]
    assert "2027-03-28 02:30:00" in seen["checked event"]
    assert "events/broken.yaml" in seen["unreadable"] and "events/broken.yaml" in seen[
        "list events"]
    assert "Europe/Berlin" in seen["rule preview"] and GOOD["title"] in seen["queue"]
    left = {name: english_on(page, locale, values) for name, page in seen.items()}
    assert {name: found for name, found in left.items() if found} == {}


def test_the_audit_finds_an_english_message(content) -> None:
    """A page with a message left in English fails the audit; typed values do not."""
    page = ('<main><h1>Veranstaltungen</h1><p>Check for problems</p>'
            '<input value="Save as draft"><textarea>Skip to content</textarea>'
            '<button aria-label="Sign out">x</button><p>Harbour Lantern Walk</p></main>')
    found = english_on(page, "de_DE", record_values(content))
    assert found == ["Check for problems", "Sign out"]
