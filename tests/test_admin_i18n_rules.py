"""Recurrence rule errors and the service's sentences naming a kind of record in the
editor's language (issue 25 item 2): worded from model/recurrence.py MESSAGES and
editing/words.py FILLED, translated on the forms and the rule builder's preview, the
English of `check`, `diff` and the interface unchanged."""

from __future__ import annotations

import datetime as dt
import pickle
import re
from pathlib import Path

import pytest
from conftest import csrf_token, localized, sign_in
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st
from submitting import text

from calendar_app.editing import language, words
from calendar_app.http.app import create_app
from calendar_app.model import recurrence, rule_errors
from calendar_app.model.resources import RESOURCES

START = dt.datetime(2027, 3, 6, 18, 0)
LOCALES = ("en_US", "de_DE", "fr_FR", "es_ES", "ar_EG")
# Blocks refused for each kind of reason (normalize, then validate against START).
BAD = (
    5, {"rrule": 5}, {"rrule": "FREQ=WEEKLY;UNTIL=99991231T235959Z"},
    {"rrule": "DTSTART:20270101\nRRULE:FREQ=DAILY"}, {"rrule": "FREQ=WEEKLY;X=1"},
    {"rrule": "FREQ=HOURLY"}, {"rrule": "FREQ=WEEKLY;INTERVAL=0"},
    {"rrule": "FREQ=WEEKLY;COUNT=0"}, {"rrule": "FREQ=DAILY;BYHOUR=3"},
    {"rrule": "FREQ=YEARLY;BYEASTER=1"}, {"rrule": "FREQ=DAILY;BYWEEKNO=3"},
    {"rrule": "FREQ=WEEKLY;BYSETPOS=1"}, {"rrule": "FREQ=WEEKLY;BYMONTHDAY=3"},
    {"rrule": "FREQ=YEARLY;BYMONTH=13"}, {"rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"},
    {"rrule": "FREQ=WEEKLY;UNTIL=99991231T235959"}, {"every": "fortnight"},
    {"every": "0 weeks"}, {"every": "week", "on": "blursday"},
    {"every": "week", "until": "2027-05-01", "count": 3}, {"every": "week", "count": 0},
    {"every": "week", "until": "nope"}, {"every": "week", "until": "0001-01-01"},
    {"rrule": "FREQ=WEEKLY", "bogus": 1}, {"rrule": "FREQ=WEEKLY", "every": "week"},
    {"on": "monday"}, {}, {"rrule": "FREQ=WEEKLY", "changes": 3},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-13 18:00": 1}},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-13 18:00": {"slug": "x"}}},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-13 18:00": {"cancelled": "yes"}}},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-13 18:00": {"title": None}}},
    {"rrule": "FREQ=YEARLY;BYWEEKNO=53;BYMONTH=6"},
    {"rrule": "FREQ=WEEKLY", "exdate": ["2027-03-07 18:00"]},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-14 18:00": {"cancelled": True}}},
    {"rrule": "FREQ=WEEKLY", "changes": {"2027-03-13 18:00": {"end_date": "2027-03-13 10:00"}}},
    {"rrule": ["FREQ=WEEKLY", "FREQ=DAILY;BYHOUR=1"]}, {"every": "week", "on": [0]},
    {"rrule": "FREQ=WEEKLY RRULE:FREQ=DAILY"},
    # dateutil's reasons, worded by our messages
    {"rrule": "FREQ=SOMETIMES"}, {"rrule": "FREQ="}, {"rrule": "FREQ"}, {"rrule": "BYDAY=MO"},
    {"rrule": "X-FOO:bar"}, {"rrule": "FREQ=MONTHLY;BYSETPOS=0"},
)


def refusal(block: object) -> recurrence.RecurrenceError:
    with pytest.raises(recurrence.RecurrenceError) as caught:
        recurrence.validate(recurrence.normalize(block), START)
    return caught.value


@pytest.fixture(scope="module")
def speaking() -> Flask:
    """An app whose editing language is switched by `speaking.locale`."""
    app = Flask(__name__)
    app.config["locale"] = "en_US"
    language.install(app, lambda: {"locale": app.config["locale"]})
    return app


def shown(app: Flask, locale: str, message: str) -> str:
    app.config["locale"] = locale
    with app.app_context():
        return language.service_message(message)


# -- the words --------------------------------------------------------------------------
def test_the_english_is_what_check_and_the_interface_have_always_said() -> None:
    """Filled-in templates give the sentences the f-strings gave (repr'd values)."""
    assert refusal({"every": "week", "until": "nope"}).message == \
        "recurrence until: 'nope' is not a date like 2027-03-05 19:30:00"
    assert refusal({"rrule": "FREQ=DAILY;BYWEEKNO=3"}).message == \
        "recurrence rrule: 'FREQ=DAILY;BYWEEKNO=3': BYWEEKNO needs FREQ=YEARLY"
    assert refusal({"rrule": "FREQ=WEEKLY;BYMONTHDAY=3"}).message == (
        "recurrence rrule: 'FREQ=WEEKLY;BYMONTHDAY=3': BYMONTHDAY needs FREQ=DAILY or "
        "MONTHLY or YEARLY")
    found = refusal({"rrule": "FREQ=WEEKLY", "bogus": 1})
    assert (found.message, found.key, found.at) == (
        ("recurrence: unknown key 'bogus' (known: rrule, every, on, until, count, rdate, "
        "exdate, changes)"), "bogus", "bogus:")
    assert str(found) == found.message
    assert found.template % found.values == found.message
    again = pickle.loads(pickle.dumps(found))
    assert (again.message, again.key, again.at, again.values) == (
        found.message, found.key, found.at, found.values)


@pytest.mark.parametrize("locale", LOCALES)
def test_every_kind_of_refusal_reads_in_the_editors_language(speaking, locale) -> None:
    """Each template of the table is met (so each is read back), translated in every
    language, its values (rule text, dates, keys) kept as written but the range of years
    the calendar keeps (words, translated)."""
    met = set()
    for block in BAD:
        found = refusal(block)
        met.add(found.template)
        words_ = shown(speaking, locale, found.message)
        if locale == "en_US":
            assert words_ == found.message
            continue
        assert words_ != found.message, found.message
        for name, value in found.values.items():  # the range of years: words, translated
            assert (value in words_) != (name == "range"), (found.message, words_)
        literal = max(re.split(r"%\(\w+\)s", found.template), key=len).strip(" :")
        assert literal not in words_, words_  # no English left around the values
    # "not-a-rule" holds a reason of dateutil's that _DATEUTIL lacks: none we can raise
    assert met == set(rule_errors.MESSAGES.values()) - {rule_errors.MESSAGES["change-field"],
                                                       rule_errors.MESSAGES["not-a-rule"]}


def test_a_refusal_reads_as_a_native_writes_it(speaking) -> None:
    message = refusal({"rrule": "FREQ=DAILY;BYHOUR=3"}).message
    assert shown(speaking, "de_DE", message) == (
        "Wiederholung (rrule): 'FREQ=DAILY;BYHOUR=3': BYHOUR, BYMINUTE und BYSECOND werden "
        "nicht unterstützt: eine Veranstaltung findet höchstens einmal am Tag statt, zur "
        "Uhrzeit ihres Beginns")
    message = refusal({"rrule": "FREQ=WEEKLY;BYMONTHDAY=3"}).message
    assert shown(speaking, "fr_FR", message) == (
        "Répétition (rrule)\xa0: 'FREQ=WEEKLY;BYMONTHDAY=3'\xa0: BYMONTHDAY exige FREQ=DAILY, "
        "MONTHLY ou YEARLY")
    message = refusal({"every": "week", "count": 0}).message
    assert shown(speaking, "es_ES", message) == \
        "Repetición (count): 0 no es un número entero mayor que 0"
    assert shown(speaking, "ar_EG", message) == "التكرار (count): \u200f0 ليس عددًا صحيحًا أكبر من 0"


def test_a_fields_message_inside_a_rules_is_translated_too(speaking) -> None:
    """`recurrence changes <date>: <the field's message>` (fieldtypes.Recurrence)."""
    inner = "Invalid parameter."
    message = rule_errors.MESSAGES["change-field"] % {"when": "2027-03-13 18:00:00",
                                                      "message": inner}
    assert shown(speaking, "de_DE", message) == \
        "Wiederholung (changes 2027-03-13 18:00:00): Ungültiger Wert."
    assert shown(speaking, "en_US", message) == message


blocks = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.sampled_from(
        ["week", "2 weeks", "monday", "second tuesday", "2027-03-13 18:00", "nope", "",
         "FREQ=WEEKLY", "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=DAILY;COUNT=0", "%(x)s {y}"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from([*recurrence.KEYS, "cancelled", "title", "2027-03-13 18:00", "x"]),
        inner, max_size=4), max_leaves=8)


@settings(max_examples=150, deadline=1000)
@given(block=blocks)
def test_any_refusal_is_translated_with_its_values_as_written(speaking, block) -> None:
    try:
        recurrence.validate(recurrence.normalize(block), START)
    except recurrence.RecurrenceError as found:
        german = shown(speaking, "de_DE", found.message)
        assert german != found.message
        assert all(v in german for k, v in found.values.items() if k != "range")
        assert shown(speaking, "en_US", found.message) == found.message


def test_every_kind_of_record_has_its_whole_sentences() -> None:
    """The service's messages that name a kind of record, filled in for every kind the
    service can name, are whole messages of FILLED (a new resource fails here)."""
    wanted = set()
    for resource in RESOURCES.values():
        wanted.add(f"The {resource.singular} was removed or renamed while this request was "
                   "made; reload it and try again.")
        wanted |= {f"Sorry, you are not allowed to {verb} {resource.name} as this user."
                   for verb in ("create", "update")}
        if resource.trashable:
            wanted.add(f"The {resource.singular} is already trashed")
    assert wanted == set(words.FILLED)


@pytest.mark.parametrize(("locale", "trashed", "refused"), [
    ("en_US", "The venue is already trashed",
     "Sorry, you are not allowed to update events as this user."),
    ("de_DE", "Der Veranstaltungsort liegt bereits im Papierkorb",
     "Sie dürfen leider keine Veranstaltungen als dieser Benutzer ändern."),
    ("fr_FR", "Le lieu est déjà dans la corbeille", ("Désolé, vous n’avez pas l’autorisation "
     "de modifier des événements au nom de cet utilisateur.")),
    ("es_ES", "El lugar ya está en la papelera",
     "Lo sentimos, no tiene permiso para modificar eventos en nombre de este usuario."),
    ("ar_EG", "المكان موجود بالفعل في سلة المهملات",
     "عذرًا، غير مسموح لك بتعديل فعاليات باسم هذا المستخدم."),
])
def test_a_kind_of_record_is_named_in_the_editors_language(speaking, locale, trashed,
                                                           refused) -> None:
    assert shown(speaking, locale, "The venue is already trashed") == trashed
    assert shown(speaking, locale, "Sorry, you are not allowed to update events as this "
                                   "user.") == refused
    if locale != "en_US":
        for sentence in words.FILLED:
            assert shown(speaking, locale, sentence) != sentence


@pytest.mark.parametrize("locale", LOCALES)
def test_parameters_are_named_by_their_fields_labels(speaking, locale) -> None:
    """A translated page names the fields a refusal lists by their labels; an English one
    keeps the interface's wording (its parameter names)."""
    from calendar_app.site.i18n import Regional
    said = shown(speaking, locale, "Missing parameter(s): title, per_page")
    if locale == "en_US":
        assert said == "Missing parameter(s): title, per_page"
    else:
        title = Regional(locale).gettext("Title")
        assert said.endswith(f"{title}, per_page") and title != "Title"
        within = shown(speaking, locale, "start_date must be within years 1000 to 9998.")
        assert Regional(locale).gettext("Starts") in within and "years" not in within
        never = refusal({"every": "week", "until": "0001-01-01"}).message
        assert "years" not in shown(speaking, locale, never)


def test_the_range_of_kept_dates_is_the_one_the_words_translate() -> None:
    from calendar_app.model import dates
    assert words.KEPT_RANGE == dates.KEPT_RANGE
    assert f"%(name)s must be within {dates.KEPT_RANGE}." in words.SERVICE

# -- on the pages -----------------------------------------------------------------------
@pytest.fixture
def app(config: dict, content: Path, signed_users: dict, request: pytest.FixtureRequest):
    localized(content, request.param)
    return create_app(config)


def rule_form(page: str, rule: str, action: str = "publish") -> dict[str, str]:
    return {"csrf_token": csrf_token(page), "_version": "", "_original": "{}", "_id": "",
            "title": "Kiln Opening", "start_date": "2027-05-01T19:00",
            "end_date": "2027-05-01T21:00", "timezone": "Europe/Berlin",
            "recurrence.kind": "rrule", "recurrence.rrule": rule, "action": action}


@pytest.mark.parametrize(("app", "expected"), [
    ("de_DE", ("Wiederholung (rrule): 'FREQ=YEARLY;BYEASTER=1': BYEASTER gehört nicht zu "
              "RFC 5545")),
    ("ar_EG", ("التكرار (rrule): \u200f'FREQ=YEARLY;BYEASTER=1': \u200fBYEASTER ليس جزءًا "
              "من RFC 5545")),
    ("en_US", "recurrence rrule: 'FREQ=YEARLY;BYEASTER=1': BYEASTER is not part of RFC 5545"),
], indirect=["app"])
def test_the_form_and_the_preview_say_why_a_rule_is_refused(app, client, auth, expected):
    assert sign_in(client, "editor").status_code == 303
    page = text(client.get("/admin/events/new"))
    refused = client.post("/admin/events/new", data=rule_form(page, "FREQ=YEARLY;BYEASTER=1"))
    assert refused.status_code == 400
    assert expected in text(refused).replace("&#39;", "'")
    preview = client.post("/admin/api/events/preview",
                          data=rule_form(page, "FREQ=YEARLY;BYEASTER=1")).json
    assert preview == {"ok": False, "general": [], "errors": {"recurrence": [expected]}}
    # The interface keeps the plugin's English, whatever the calendar's language.
    api = client.post("/wp-json/tribe/events/v1/events", headers=auth("editor"), json={
        "title": "X", "start_date": "2027-05-01 19:00:00", "end_date": "2027-05-01 21:00:00",
        "recurrence": "FREQ=YEARLY;BYEASTER=1"})
    assert api.status_code == 400
    assert api.json["data"]["params"] == {"recurrence": "recurrence rrule: "
                                          "'FREQ=YEARLY;BYEASTER=1': BYEASTER is not part "
                                          "of RFC 5545"}


# -- files the calendar cannot read -----------------------------------------------------
JAZZ_NIGHT = 106
JAZZ_FILE = "events/2027/jazz-night-january-2027.yaml"


def broken(content: Path, locale: str) -> None:
    """The Jazz Night's file with a tab where YAML wants spaces (line 3), committed."""
    path = content / JAZZ_FILE
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[2] = "\t" + lines[2]
    path.write_text("\n".join(lines), encoding="utf-8")
    localized(content, locale)


@pytest.fixture
def broken_app(config: dict, content: Path, signed_users: dict,
               request: pytest.FixtureRequest):
    broken(content, request.param)
    return create_app(config)


@pytest.mark.parametrize(("broken_app", "title", "where"), [
    ("de_DE", "Dateien, die sich nicht lesen lassen",
     (f"{JAZZ_FILE}, Zeile 3: ein Tabulator in Zeile 3, Spalte 1: YAML rückt nur mit "
     "Leerzeichen ein; ersetzen Sie den Tabulator durch Leerzeichen")),
    ("fr_FR", "Fichiers illisibles", (f"{JAZZ_FILE}, ligne 3\xa0: une tabulation à la ligne 3, "
     "colonne 1\xa0: YAML n’indente qu’avec des espaces\u202f; remplacez la tabulation par des "
     "espaces")),
    ("en_US", "Files that cannot be read", (f"{JAZZ_FILE}, line 3: a tab character at line 3, "
     "column 1: YAML indents with spaces only; replace the tab with spaces")),
], indirect=["broken_app"])
def test_an_unreadable_file_is_named_with_its_line(broken_app, title, where) -> None:
    client = broken_app.test_client()
    assert sign_in(client, "editor").status_code == 303
    listed = text(client.get("/admin/events/?tab=past"))
    assert f'<h2 id="unreadable">{title}</h2>' in listed
    assert f"<li>{where}</li>" in listed.replace("&#39;", "'")
    opened = client.get(f"/admin/events/{JAZZ_NIGHT}/")
    assert opened.status_code == 404
    assert f'<p role="alert">{where}</p>' in text(opened).replace("&#39;", "'")
    assert "unreadable" not in text(client.get("/admin/venues/"))  # another collection's
    assert client.get("/admin/events/999999/").status_code == 404


@pytest.mark.parametrize("locale", LOCALES[1:])
def test_the_yaml_readers_words_are_translated(speaking, locale) -> None:
    from calendar_app.store import yamlfile
    samples = [b"title: a: b\n", b"title: [a\n", b"title: 'a\n", b"a:\n  - b\n c: d\n",
               b"title: x\n\tslug: y\n", b"- a\n", b"title: &a x\nslug: *a\n",
               b"title: !!python/object x\n", b"key: {a: 1\n", b"title: x\nfoo\n",
               b"title: @x\n", b"\xff\xfe", b"a: 1\x00", b"title: x\n---\nb: 1\n",
               b"title: 2027-02-30 10:00:00\n", b"title: 2027-13-01 10:00:00\n"]
    speaking.config["locale"] = locale
    for sample in samples:
        with pytest.raises(yamlfile.YamlError) as caught:
            yamlfile.load(sample)
        message = caught.value.message
        with speaking.app_context():
            said = language.file_message(message)
        assert said != message, message
        assert "cannot" not in said and "found" not in said, said


@settings(max_examples=150, deadline=1000)
@given(data=st.binary(max_size=120) | st.text(
    alphabet="ab:- \t\n'\"[]{}&*!#%@`|>0123", max_size=80).map(str.encode))
def test_any_unreadable_file_is_named_without_failing(speaking, data: bytes) -> None:
    """Whatever a file holds, its problem is a sentence naming file and line, in the
    editor's language, its values (the parser's text) kept as written."""
    from calendar_app.catalog.catalog import Problem
    from calendar_app.editing import unreadable
    from calendar_app.store import yamlfile
    try:
        yamlfile.load(data)
    except yamlfile.YamlError as exc:
        problem = Problem("events/x.yaml", exc.line, exc.message)
        speaking.config["locale"] = "de_DE"
        with speaking.app_context():
            said = unreadable.text(problem)
        assert said.startswith(f"events/x.yaml, Zeile {exc.line}: " if exc.line
                               else "events/x.yaml: ")
