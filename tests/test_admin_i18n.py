"""The editing, moderation and submission pages in the calendar's language (issue 25
item 2): `locale` in calendar.yaml picks the words of every page, title, label, flash
message, form message and e-mail; `lang` and `dir` are set. The catalogs' completeness
is tests/test_site_i18n.py's (babel.cfg extracts these pages and their code); Chromium,
axe and the Nu checker on the German and Arabic pages: test_admin_i18n_browser.py."""

from __future__ import annotations

import ast
import datetime as dt
import html
import re
from pathlib import Path

import pytest
from conftest import csrf_token, localized, sign_in
from hypothesis import given, settings
from hypothesis import strategies as st
from submitting import GOOD, decision, propose, text

from calendar_app.editing import forms, rule_words, words
from calendar_app.editing.language import regional_for, service_message, service_patterns
from calendar_app.http.app import create_app
from calendar_app.model import records, recurrence, rule_errors
from calendar_app.model.resources import RESOURCES
from calendar_app.site.i18n import Regional

BLUE_LANTERN = 45
JAZZ_NIGHT = 106
# English words of the pages that a missed message would leave on a translated page.
ENGLISH = ("Sign out", "Search", "Filter", "Duplicate", "Save as draft", "Check for problems",
           "Repeats", "Does not repeat", "On these weekdays", "Pending events", "Reject",
           "Approve and publish", "Skip to content", "Calendar editing", "Starts",
           "Published", "Upcoming", "Drafts", "Time zone", "Wall time", "Or a new venue")


class Mails:
    """Stands in for notify.Mailer: what would have been sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[list[str], str, str]] = []

    def send(self, _settings, to: list[str], subject: str, body: str) -> None:
        self.sent.append((to, subject, body))


@pytest.fixture
def app(config: dict, content: Path, signed_users: dict, request: pytest.FixtureRequest):
    localized(content, getattr(request, "param", "de_DE"))
    made = create_app(config)
    made.extensions["mailer"] = Mails()
    return made


@pytest.fixture
def editor(client):
    assert sign_in(client, "editor").status_code == 303
    return client


def page_text(response) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text(response))))


def english_left(response) -> list[str]:
    shown = page_text(response)
    return [w for w in ENGLISH if re.search(rf"\b{re.escape(w)}\b", shown)]


# -- the words ------------------------------------------------------------------------
def test_every_form_field_has_a_label_and_every_kind_its_words() -> None:
    """A field added to a resource without a label here would show its name."""
    missing = [f"{r.name}.{f.name}" for r in RESOURCES.values() for f in forms.form_fields(r)
               if f.name not in words.LABELS]
    assert missing == []
    assert set(words.KINDS) == set(RESOURCES)
    german = Regional("de_DE")
    for kind in words.KINDS.values():
        assert german.gettext(kind.new) != kind.new
        assert german.ngettext(*kind.count, 3) % {"count": 3} != kind.count[1] % {"count": 3}


def test_service_messages_are_translated_on_forms_and_kept_otherwise() -> None:
    assert service_message("Invalid parameter.") == "Invalid parameter."  # no app: English
    german = regional_for({"locale": "de_DE"})
    assert german.gettext("Invalid parameter.") == "Ungültiger Wert."


@settings(max_examples=200, deadline=500)
@given(st.text(max_size=80))
def test_any_message_is_shown_as_given_or_translated_never_formatted(message: str) -> None:
    """A service message may hold typed text ("%", "{"): never used as a format."""
    found = service_message(message)
    assert isinstance(found, str)
    if not any(pattern.fullmatch(message) for _template, pattern in service_patterns()):
        assert found == message


def _raised_messages(source: Path) -> list[str]:
    """The messages a module raises (ApiError's message, errors.invalid's per-field
    ones, `message = ...`), each filled-in part written "x"; a name of a module-level
    text is read as its text."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}

    def texts(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and node.id in constants:
            return [constants[node.id]]
        if isinstance(node, ast.JoinedStr):
            return ["".join(v.value if isinstance(v, ast.Constant) else "x"
                            for v in node.values)]
        if isinstance(node, ast.IfExp):
            return texts(node.body) + texts(node.orelse)
        return []  # a message from elsewhere (a rule's, an exception's)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name == "ApiError" and len(node.args) > 2:
                found += texts(node.args[2])
            if name == "invalid" and node.args and isinstance(node.args[0], ast.Dict):
                found += [t for v in node.args[0].values for t in texts(v)]
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "message"
                                                for t in node.targets):
            found += texts(node.value)
    return found


def test_every_message_the_service_raises_has_a_translation() -> None:
    """A new English message in service.py, model/errors.py or a field type's body
    validation that words.SERVICE lacks fails here; one that SERVICE has but a catalog
    lacks fails test_site_i18n's completeness test (item 1c)."""
    code = Path(__file__).resolve().parent.parent / "calendar_app"
    raised = [m for path in ("service.py", "model/errors.py", "model/fieldtypes.py",
                             "model/fieldbase.py") for m in _raised_messages(code / path)]
    assert len(raised) > 20 and "Invalid parameter." in raised
    missing = [m for m in raised
               if not any(p.fullmatch(m) for _t, p in service_patterns())]
    assert missing == []
    german = regional_for({"locale": "de_DE"})
    for message in raised:
        template = next(t for t, p in service_patterns() if p.fullmatch(message))
        assert german.gettext(template) != template, template


def _unworded_rule_errors(source: str) -> list[str]:
    """Each RecurrenceError a module raises that rule_errors.MESSAGES does not word: its
    first argument is not the name of a template there, or a choice among such names
    (a sentence written in place, or a name from elsewhere)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(
                node.func, "id", getattr(node.func, "attr", "")) == "RecurrenceError":
            first = node.args[0] if node.args else ast.Constant(None)
            if isinstance(first, ast.Subscript):
                first = first.value  # ("a", "b")[n]: one of these names
            names = first.elts if isinstance(first, ast.Tuple) else [first]
            if isinstance(first, ast.Name) and first.id == "name":  # _refused's: a table's
                names = [ast.Constant(n) for _pattern, n in recurrence._DATEUTIL]
            if not all(isinstance(n, ast.Constant) and n.value in rule_errors.MESSAGES
                       for n in names):
                found.append(ast.unparse(node)[:80])
    return found


def test_every_rule_error_is_worded_by_the_table_and_translated() -> None:
    """A recurrence rule's error that model/recurrence.py writes in place (not a MESSAGES
    name) fails here; a template a catalog lacks fails here and in test_site_i18n."""
    code = Path(__file__).resolve().parent.parent / "calendar_app" / "model"
    source = (code / "recurrence.py").read_text(encoding="utf-8")
    assert source.count("raise RecurrenceError(") > 25
    assert _unworded_rule_errors(source) == []
    for locale in ("de_DE", "fr_FR", "es_ES", "ar_EG"):
        language = Regional(locale)
        left = [t for t in rule_errors.MESSAGES.values() if language.gettext(t) == t]
        assert left == [], locale


def test_the_rule_error_scan_fails_on_a_sentence_written_in_place() -> None:
    written = ('raise RecurrenceError(f"recurrence on: {item!r} is odd", "on")\n'
               'raise RecurrenceError("no-such-name", "on")\n'
               'raise RecurrenceError(reason, "on")\n'
               'raise RecurrenceError(("count", "other")[n], "on")\n'
               'raise RecurrenceError("count", "count", "0", count="0")\n')
    assert len(_unworded_rule_errors(written)) == 4


def test_service_messages_keep_their_values_in_translation(app) -> None:
    with app.app_context():
        assert service_message("start_date must be within 1900-2100.") == \
            "Beginn muss zwischen 1900-2100 liegen."
        assert service_message("Missing parameter(s): title, email") == \
            "Fehlende Angabe(n): Titel, E-Mail-Adresse"
        assert service_message('The slug "x%(y)s" is already in use by another term.') == \
            "Der Slug „x%(y)s“ wird bereits von einem anderen Begriff verwendet."


SATURDAY = dt.datetime(2027, 3, 6, 18, 0)
RULES = {  # a repetition block, and its summary by locale
    "weekly": ({"every": "week", "on": "saturday"}, {
        "en_US": "every Saturday at 6:00 pm", "en_GB": "every Saturday at 18:00",
        "de_DE": "jeden Samstag um 18:00", "fr_FR": "chaque samedi à 18:00",
        "es_ES": "cada sábado a las 18:00", "ar_EG": "كل يوم السبت الساعة 6:00 م"}),
    "counted": ({"rrule": "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;COUNT=10"}, {
        "en_US": "every 2 weeks on Monday and Thursday at 6:00 pm, 10 times",
        "de_DE": "alle 2 Wochen am Montag und Donnerstag um 18:00, 10-mal",
        "fr_FR": "toutes les 2 semaines le lundi et jeudi à 18:00, 10 fois",
        "es_ES": "cada 2 semanas el lunes y jueves a las 18:00, 10 veces",
        "ar_EG": "كل أسبوعين يوم الاثنين والخميس الساعة 6:00 م، 10 مرات"}),
    "nth": ({"rrule": "FREQ=MONTHLY;BYDAY=1MO,-1FR;UNTIL=20271231T235959"}, {
        "en_US": "every month on the first Monday and the last Friday at 6:00 pm, "
                 "until Dec 31, 2027",
        "de_DE": "jeden Monat am ersten Montag und letzten Freitag um 18:00, "
                 "bis 31. Dez. 2027",
        "fr_FR": "tous les mois le premier lundi et dernier vendredi à 18:00, "
                 "jusqu’au 31 déc. 2027",
        "es_ES": "todos los meses el primer lunes y último viernes a las 18:00, "
                 "hasta el 31 dic 2027"}),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_rule_summary_reads_natively(rule: str) -> None:
    """Day names, lists, times (12 or 24 hours) and dates from CLDR, the sentence
    shapes from the catalogs (item 1b)."""
    block, expected = RULES[rule]
    block = records.from_file("events", {"id": 1, "title": "T", "slug": "t",
                                         "start_date": "2027-03-06 18:00",
                                         "end_date": "2027-03-06 20:00",
                                         "recurrence": block}, "events/t.yaml"
                              ).data["recurrence"]
    for locale, words_ in expected.items():
        assert rule_words.summary(block, SATURDAY, Regional(locale)) == words_, locale


def test_extra_dates_are_counted_in_the_languages_plural_forms() -> None:
    block = {"rdate": [SATURDAY + dt.timedelta(days=n) for n in range(1, 4)]}
    assert rule_words.summary(block, SATURDAY, Regional("de_DE")) == "3 zusätzliche Termine"
    assert rule_words.summary({"rdate": block["rdate"][:2]}, SATURDAY,
                              Regional("ar_EG")) == "تاريخان إضافيان"  # the dual
    assert rule_words.summary({}, SATURDAY, Regional("fr_FR")) == "une seule fois"


# -- pages in German ------------------------------------------------------------------------
def test_the_lists_speak_german(editor) -> None:
    page = editor.get("/admin/events/")
    body = text(page)
    assert '<html lang="de-DE" dir="ltr">' in body
    assert "<h1>Veranstaltungen</h1>" in body
    assert ">Neue Veranstaltung</a>" in body
    assert re.search(r">\d+ Veranstaltungen\.</p>", body)
    assert ">Kommende</a>" in body and ">Entwürfe</a>" in body
    assert "<td>Veröffentlicht</td>" in body
    assert english_left(page) == []
    venues = text(editor.get("/admin/venues/"))
    assert ">Neuer Veranstaltungsort</a>" in venues  # the noun's gender


def test_the_event_form_speaks_german(editor) -> None:
    page = editor.get(f"/admin/events/{JAZZ_NIGHT}/")
    body = text(page)
    assert "<title>Veranstaltung bearbeiten: Jazz Night: Ana Lucía Ferrer Trio" in body
    assert '<label for="f-start_date">Beginn <span aria-hidden="true">*</span></label>' in body
    assert "Ortszeit in der Zeitzone der Veranstaltung" in body
    assert '<option value="canceled">Abgesagt</option>' in body
    # Weekday names from CLDR, the rule builder's words from the catalog.
    assert 'class="inline">Montag</label>' in body
    assert ">Wiederholt sich nicht</option>" in body
    assert ">Oder ein neuer Veranstaltungsort</summary>" in body
    assert "data-words=" in body and "existiert bereits" in html.unescape(body)
    assert english_left(page) == []


def test_refusals_and_flash_messages_speak_german(editor, content: Path) -> None:
    page = text(editor.get("/admin/events/new"))
    data = {"csrf_token": csrf_token(page), "_version": "", "_original": "{}", "_id": "",
            "title": "100 % {n} %(name)s", "start_date": "2027-05-01T19:00",
            "end_date": "2027-05-01T18:00", "timezone": "Europe/Berlin",
            "recurrence.kind": "none", "action": "publish"}
    refused = editor.post("/admin/events/new", data=data)
    assert refused.status_code == 400
    assert "Das Ende darf nicht vor dem Beginn liegen." in page_text(refused)
    data["end_date"] = "2027-05-01T21:00"
    saved = editor.post("/admin/events/new", data=data)
    assert saved.status_code == 303
    shown = page_text(editor.get(saved.headers["Location"]))
    # The title is a value, never a format: "%" and braces arrive as typed.
    assert "Gespeichert: 100 % {n} %(name)s (Veröffentlicht)." in shown
    missing = editor.get("/admin/events/999999/")
    assert missing.status_code == 404 and "Diesen Eintrag gibt es nicht" in page_text(missing)


def test_check_findings_on_the_form_speak_german(editor) -> None:
    """`check`'s findings as the form shows them: the template from findings.MESSAGES
    translated, its values (a date, a key) filled in as check prints them (item 1a)."""
    page = text(editor.get("/admin/events/new"))
    data = {"csrf_token": csrf_token(page), "_version": "", "_original": "{}", "_id": "",
            "title": "Kiln Opening", "start_date": "2027-03-28T02:30",
            "end_date": "2027-03-28T04:00", "timezone": "Europe/Berlin",
            "event_status": "scheduled", "event_status_reason": "Weather",
            "recurrence.kind": "none", "action": "check"}
    checked = editor.post("/admin/events/new", data=data)
    shown = page_text(checked)
    assert checked.status_code == 400  # the clocks skip 02:30 that night: an error
    assert ("start_date 2027-03-28 02:30:00 gibt es in Europe/Berlin nicht (die Uhren "
            "überspringen diese Stunde; gelesen würde 2027-03-28 03:30:00)") in shown
    assert "Die Veranstaltung hat weder einen Veranstaltungsort noch eine Online-Adresse" \
        in shown
    assert "Der Grund für den Status wird nur beim Status „abgesagt“ oder „verschoben“" \
        in shown
    for english in ("does not exist in", "neither a venue", "is shown only with"):
        assert english not in shown


def test_findings_keep_checks_english_wording() -> None:
    """The command prints the template filled in: the same text as before the table."""
    from calendar_app.editorial.validate import check_file
    found = check_file("events", "events/x.yaml", b"id: 1\ntitle: X\nslug: x\n"
                       b"start_date: 2027-01-01 10:00\nend_date: 2027-01-01 09:00\n"
                       b"venu: hall\n", "UTC").findings
    assert [f.message for f in found] == [
        "unknown key 'venu' (did you mean 'venue'?)",
        "end_date 2027-01-01 09:00:00 is before start_date 2027-01-01 10:00:00"]
    assert found[0].as_dict() == {"path": "events/x.yaml", "line": 6, "column": 0,
                                  "severity": "error", "code": "unknown-key",
                                  "message": found[0].message}
    french = regional_for({"locale": "fr_FR"})
    assert french.gettext(found[0].template) % dict(found[0].values) == \
        "clé inconnue 'venu' (vouliez-vous dire 'venue'\u202f?)"


def test_sign_in_errors_speak_german(client) -> None:
    refused = sign_in(client, "editor", "wrong")
    assert refused.status_code == 401
    assert "Unbekannter Benutzername oder falsches Passwort." in page_text(refused)
    expired = client.post("/admin/sign-in", data={"name": "editor", "password": "x"})
    assert expired.status_code == 400
    assert "Formular abgelaufen" in page_text(expired)
    assert "Das CSRF-Token fehlt." in page_text(expired)


def test_submission_moderation_and_mails_speak_german(app, client, content: Path) -> None:
    bad = propose(client, end_date="2027-03-05T18:00", email="")
    assert bad.status_code == 400
    shown = page_text(bad)
    assert "Fehlende Angabe(n): E-Mail-Adresse" in shown
    assert "Das Ende darf nicht vor dem Beginn liegen." in shown
    assert propose(client).status_code == 303
    assert sign_in(client, "editor").status_code == 303
    queue = client.get("/admin/pending/")
    body = page_text(queue)
    assert "Eingereichte Veranstaltungen" in body and "Vorgeschlagen von" in body
    assert "(neu: Entwurf)" in body
    assert english_left(queue) == []
    event = int(re.search(r'id="event-(\d+)"', text(queue))[1])
    empty = decision(client, event, "reject", reason=" ")
    assert empty.status_code == 400 and "Geben Sie einen Grund an" in page_text(empty)
    assert decision(client, event, "reject", reason="Privatfeier").status_code == 303
    after = page_text(client.get("/admin/pending/"))
    assert f"„{GOOD['title']}“ abgelehnt; sie liegt im Papierkorb." in after
    to, subject, mail = app.extensions["mailer"].sent[-1]
    assert to == [GOOD["email"]]
    assert subject == f"Ihre Veranstaltung wurde nicht veröffentlicht: {GOOD['title']}"
    assert "Begründung der Redaktion: Privatfeier" in mail


@pytest.mark.parametrize("app", ["ar_EG"], indirect=True)
def test_arabic_pages_are_right_to_left(editor) -> None:
    for path in ("/admin/events/", f"/admin/events/{JAZZ_NIGHT}/", "/admin/pending/"):
        body = text(editor.get(path))
        assert '<html lang="ar-EG" dir="rtl">' in body, path
    assert "<h1>الفعاليات</h1>" in text(editor.get("/admin/events/"))

