"""What a native editor's review of the catalogs (issue 25) leaves for a machine to
guard: placeholders and markup kept, no fuzzy or empty entry, a Plural-Forms header
that orders its forms as CLDR's plural categories and every plural entry with all its
forms, French no-break spaces, Spanish opening marks, Arabic punctuation, the formal
address, and one word per language for each kind of record (docs/i18n.md, "Reviewing
a language"). Completeness against the extracted messages is test_site_i18n.py's."""

from __future__ import annotations

import gettext
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from calendar_app.site.i18n import LOCALES, languages

CLDR_ORDER = ("zero", "one", "two", "few", "many", "other")
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")
TAG = re.compile(r"</?(?:a|span|code|em|strong|br|p)\b[^>]*>")  # HTML, not <document start>
# What a punctuation check must not read as prose: placeholders, markup, entities,
# quoted code ('---', `fmt`), RFC 5545 and YAML text (FREQ=WEEKLY;BYDAY=TU).
CODE = re.compile(r"<code>.*?</code>|%\(\w+\)s|\{\w+\}|<[^>]+>|&\w+;|'[^']*'|`[^`]*`"
                  r"|\b[A-Z]+=[\w;=,-]+|\b[a-z_]+: (?:true|false)\b")

# One word per language for each kind of record and for a repeating event: a msgstr
# whose msgid names the thing holds one of these stems (lowered, Arabic without its
# short vowels). German follows The Events Calendar's own translation.
TERMS: dict[str, dict[str, tuple[str, ...]]] = {
    "event": {"de": ("veranstaltung",), "fr": ("événement",), "es": ("evento",),
              "ar": ("فعالي",)},
    "venue": {"de": ("veranstaltungsort",), "fr": ("lieu",), "es": ("lugar",),
              "ar": ("مكان", "أماكن")},
    "organizer": {"de": ("veranstalter",), "fr": ("organisat",), "es": ("organizador",),
                  "ar": ("منظم",)},
    "category": {"de": ("kategorie",), "fr": ("catégorie",), "es": ("categoría",),
                 "ar": ("فئ",)},
    "tag": {"de": ("schlagw",), "fr": ("étiquette",), "es": ("etiqueta",),
            "ar": ("وسم", "وسوم")},
    "repeat": {"de": ("wiederhol", "wiederkehrend"), "fr": ("répét", "répèt", "récurrent"),
               "es": ("repeti", "repite", "recurrente"), "ar": ("تكرار", "متكرر", "تتكرر")},
    "calendar": {"de": ("kalender",), "fr": ("calendrier",), "es": ("calendario",),
                 "ar": ("تقويم",)},
}
# English words of a msgid that name each thing (whole words, lowered).
NAMES = {
    "event": ("event", "events"), "venue": ("venue", "venues"),
    "organizer": ("organizer", "organizers"), "category": ("category", "categories"),
    "tag": ("tag", "tags"), "repeat": ("repeating", "repeats", "recurrence"),
    "calendar": ("calendar",),
}
# Where the English word means something else or the sentence rightly needs none of
# the stems: YAML's own tags; "events" as data or code; the app's name.
NOT_TERMS = {
    ("tag", "YAML tags are not allowed in record files"),
    ("calendar", "Apple Calendar and other apps"),
    ("calendar", ("No password yet? An administrator sets one with <code>calendar-app "
                  "users passwd NAME</code>.")),
    ("event", "Calendar"),
}
# Words of the familiar address a formal catalog must not use.
FAMILIAR = {
    "de": re.compile(r"\b(du|dich|dir|dein\w*|euch|euer\w*)\b", re.IGNORECASE),
    "fr": re.compile(r"\b(tu|toi|ton|ta|tes)\b|\bt’|\bte\b", re.IGNORECASE),
    "es": re.compile(r"\b(tú|tu|tus|te|ti|contigo|tienes|puedes|quieres)\b"
                     r"|(?<!se )\b(elige|indica|inserta|deja|escribe|cuéntanos)\b", re.IGNORECASE),
}
REVIEWED = ("de", "fr", "es", "ar")


@cache
def catalog(language: str) -> Catalog:
    with (LOCALES / language / "LC_MESSAGES" / "messages.po").open("rb") as source:
        return read_po(source, locale=language)


def entries(language: str) -> list[tuple[object, tuple[str, ...]]]:
    found = catalog(language)
    return [(m.id, tuple(m.string) if isinstance(m.string, (tuple, list)) else (m.string,))
            for m in found if m.id]


def msgid_text(message_id: object) -> str:
    return message_id[-1] if isinstance(message_id, tuple) else str(message_id)


def prose(text: str) -> str:
    return CODE.sub(" ", text)


def test_every_shipped_language_is_reviewed_here() -> None:
    assert set(languages()) == set(REVIEWED)


@pytest.mark.parametrize("language", REVIEWED)
def test_placeholders_and_markup_survive_translation(language: str) -> None:
    """The same `%(name)s`/`{name}` and the same HTML tags as the msgid; a plural form
    may leave the number out ("one event"), nothing else."""
    problems = []
    for message_id, strings in entries(language):
        ids = message_id if isinstance(message_id, tuple) else (message_id,)
        wanted = {p for text in ids for p in PLACEHOLDER.findall(text)}
        tags = sorted(TAG.findall(ids[-1]))
        for text in strings:
            used = set(PLACEHOLDER.findall(text))
            plural_number = isinstance(message_id, tuple) and wanted - used <= {
                "%(count)s", "{n}"}
            if used - wanted or (used != wanted and not plural_number):
                problems.append((ids[0], text))
            if sorted(TAG.findall(text)) != tags:
                problems.append((ids[0], text))
    assert problems == []


@pytest.mark.parametrize("language", REVIEWED)
def test_no_fuzzy_or_empty_entry(language: str) -> None:
    found = catalog(language)
    assert [m.id for m in found if m.id and m.fuzzy] == []
    assert [m.id for m in found if m.id and not all(
        m.string if isinstance(m.string, (tuple, list)) else (m.string,))] == []


@pytest.mark.parametrize("language", REVIEWED)
def test_plural_forms_follow_cldr_and_every_entry_has_them_all(language: str) -> None:
    """Form i of the header is the i-th of the language's CLDR categories (zero, one,
    two, few, many, other), for every count a page shows; each plural entry fills
    every form."""
    found = catalog(language)
    rule = Locale.parse(language).plural_form
    # French and Spanish "many" is for millions only: not a count the pages show.
    shown = {rule(n) for n in range(1001)}
    categories = [c for c in CLDR_ORDER if c in shown]
    assert found.num_plurals == len(categories)
    index = gettext.c2py(found.plural_expr)  # the header's rule, as gettext runs it
    for n in range(1001):
        assert categories[index(n)] == rule(n), (language, n)
    for message_id, strings in entries(language):
        if isinstance(message_id, tuple):
            assert len(strings) == found.num_plurals and all(strings), message_id


def test_arabic_counted_nouns_take_the_case_of_their_form() -> None:
    """11 to 99 ("many", form 4) count with an accusative singular ("11 منظِّمًا"),
    100 ("other", form 5) with a genitive one ("100 منظِّم"): a tanwin in form 5 but
    not form 4 means the two were swapped."""
    swapped = [strings for message_id, strings in entries("ar")
               if isinstance(message_id, tuple) and "ً" in strings[5] and "ً" not in strings[4]]
    assert swapped == []


def test_french_puts_no_break_spaces_before_high_punctuation() -> None:
    """Before ':' a no-break space, before ';', '!', '?' a narrow one (or a no-break
    one), inside « » no-break spaces: never an ordinary space or none at all."""
    problems = []
    for message_id, strings in entries("fr"):
        for text in strings:
            plain = prose(text)
            if re.search(r"(?<![\xa0\u202f])[;:!?](?=\s|$|\))", plain) or re.search(
                    r"«(?!\xa0)|(?<!\xa0)»", plain):
                problems.append(text)
    assert problems == []


def test_spanish_questions_and_exclamations_open_with_their_marks() -> None:
    problems = [text for _id, strings in entries("es") for text in strings
                if ("?" in prose(text)) != ("¿" in prose(text))
                or ("!" in prose(text)) != ("¡" in prose(text))]
    assert problems == []


def test_arabic_uses_its_own_comma_semicolon_and_question_mark() -> None:
    """"،" "؛" "؟" after Arabic words; the Latin marks stay only in code and quoted
    characters ("',' أو ']'")."""
    arabic = r"[\u0621-\u064A\u0660-\u0669]"
    problems = [text for _id, strings in entries("ar") for text in strings
                if re.search(rf"{arabic}[\u064B-\u0652]*\s*[,;?]", prose(text))]
    assert problems == []


@pytest.mark.parametrize("language", ("de", "fr", "es"))
def test_the_address_is_formal_throughout(language: str) -> None:
    """German "Sie", French "vous", Spanish "usted": one register in a catalog."""
    problems = [text for _id, strings in entries(language) for text in strings
                if FAMILIAR[language].search(prose(text))]
    assert problems == []


def _plain(text: str, language: str) -> str:
    text = prose(text).lower()
    if language == "ar":  # short vowels, shadda and tatweel are optional in writing
        text = "".join(c for c in unicodedata.normalize("NFC", text)
                       if not "\u064B" <= c <= "\u0652" and c != "\u0640")
    return text


@pytest.mark.parametrize("language", REVIEWED)
def test_one_word_for_each_kind_of_record(language: str) -> None:
    """A msgstr whose msgid names an event, a venue, an organizer, a category, a tag,
    a repeating event or the calendar uses the catalog's chosen word for it."""
    problems = []
    for message_id, strings in entries(language):
        english = set(re.findall(r"\w+", prose(msgid_text(message_id)).lower()))
        for thing, words in NAMES.items():
            if not english & set(words) or (thing, msgid_text(message_id)) in NOT_TERMS:
                continue
            stems = TERMS[thing][language]
            problems += [(thing, text) for text in strings
                         if not any(s in _plain(text, language) for s in stems)]
    assert problems == []


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """Each check finds a planted mistake: an ordinary space before a French colon, a
    familiar Spanish imperative, a Latin comma after Arabic, a wrong word for venue."""
    assert re.search(r"(?<![\xa0\u202f])[;:!?](?=\s|$)", prose("Statut : %(status)s"))
    assert FAMILIAR["es"].search(prose("Elige un mes."))
    assert re.search(r"[\u0621-\u064A]\s*[,;?]", prose("فعالية, مكان"))
    assert not any(s in _plain("Der Ort", "de") for s in TERMS["venue"]["de"])
