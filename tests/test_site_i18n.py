"""The site in the calendar's language (issue 25 item 2): message catalogs complete,
CLDR dates, times, week start, currencies, address order, <html lang dir>, feeds and
JSON-LD left machine-readable. Browsers: test_site_i18n_browser.py; Nu and axe over
every kind of page in each language: test_site_quality.py."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from conftest import compiled_templates
from hypothesis import given, settings
from hypothesis import strategies as st
from sitebuilds import NOW, REPO, language_sites, make_content

from calendar_app.model.resources import EVENT_STATUS_LABELS, RESOURCES
from calendar_app.model.settings import setting_problems, week_start
from calendar_app.site import Options, build
from calendar_app.site.addresses import country_code, postal_lines
from calendar_app.site.i18n import LOCALES, Regional, languages
from calendar_app.site.pages import RESOURCE_LABELS, STATUS_LABELS

REQUIRED_LANGUAGES = {"de", "fr", "es", "ar"}  # and English, the messages' own
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "N_plural": (1, 2)}
PLACEHOLDER = re.compile(r"%\((\w+)\)s|\{(\w+)\}")

@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same calendar four times (sitebuilds, shared with the quality tests):
    English (its calendar.yaml), German from the setting, French and Arabic from
    `build --locale`."""
    return language_sites(tmp_path_factory)


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def text_of(html: str) -> str:
    """The page's text, tags dropped and spaces collapsed (for phrase checks)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# -- catalogs ------------------------------------------------------------------------
def extracted() -> dict[str | tuple[str, ...], set[str]]:
    """Every message of the site's templates and Python code (babel.cfg's mapping),
    with its placeholders: what `pybabel extract -F babel.cfg` finds."""
    with (REPO / "babel.cfg").open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    found = {}
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(REPO), method_map, options_map, keywords=KEYWORDS):
        if isinstance(message, tuple):
            message = tuple(m for m in message if m)
        if message:
            found[message] = _placeholders(message)
    return found


def _placeholders(message: str | tuple[str, ...]) -> set[str]:
    texts = message if isinstance(message, tuple) else (message,)
    return {a or b for text in texts for a, b in PLACEHOLDER.findall(text)}


def test_the_extraction_sees_templates_python_and_scripts_messages() -> None:
    messages = extracted()
    assert "Skip to main content" in messages  # base.html
    assert "Organized by: %(names)s" in messages  # ical.py, gettext on a model
    assert "Type a word or choose a filter." in messages  # pages.py N_, for search.js
    assert ("{n} event matches.", "{n} events match.") in messages  # N_plural
    assert ("And %(count)s more date.", "And %(count)s more dates.") in messages  # trans
    assert len(messages) > 80


def test_every_catalog_translates_every_message() -> None:
    """Fails on any message of the site that a catalog lacks or leaves empty, on a
    translation that drops or invents a placeholder, and on stale entries."""
    messages = extracted()
    assert REQUIRED_LANGUAGES <= set(languages())
    problems = []
    for language in languages():
        with (LOCALES / language / "LC_MESSAGES" / "messages.po").open("rb") as source:
            catalog = read_po(source)
        have = {m.id[0] if isinstance(m.id, tuple) else m.id: m for m in catalog if m.id}
        for message, names in messages.items():
            key = message[0] if isinstance(message, tuple) else message
            entry = have.get(key)
            strings = entry and (entry.string if isinstance(entry.string, tuple)
                                 else (entry.string,))
            if entry is None or not strings or not all(strings):
                problems.append(f"{language}: untranslated {key!r}")
                continue
            if isinstance(message, tuple) != isinstance(entry.id, tuple):
                problems.append(f"{language}: {key!r} plural forms differ")
            for text in strings:
                used = _placeholders(text)
                # A plural form may leave the number out ("one" event); nothing else may.
                if not used <= names or (not isinstance(message, tuple) and used != names):
                    problems.append(f"{language}: {key!r} placeholders {used} != {names}")
            if entry.fuzzy:
                problems.append(f"{language}: {key!r} is fuzzy")
        stale = {k for k in have} - {m[0] if isinstance(m, tuple) else m for m in messages}
        problems += [f"{language}: stale {k!r}" for k in sorted(stale)]
    assert problems == []


def test_the_check_fails_on_an_untranslated_message(tmp_path: Path) -> None:
    """The test above can fail: a catalog with one message emptied is caught."""
    source = LOCALES / "de" / "LC_MESSAGES" / "messages.po"
    text = source.read_text(encoding="utf-8")
    broken = text.replace('msgstr "Zum Hauptinhalt springen"', 'msgstr ""')
    assert broken != text
    with (tmp_path / "messages.po").open("w", encoding="utf-8") as out:
        out.write(broken)
    with (tmp_path / "messages.po").open("rb") as again:
        entry = read_po(again).get("Skip to main content")
    assert entry is not None and entry.string == ""


def test_every_kind_of_record_and_status_has_a_translatable_name() -> None:
    assert {r.label for r in RESOURCES.values()} <= RESOURCE_LABELS
    assert set(EVENT_STATUS_LABELS) - {"Scheduled"} <= STATUS_LABELS  # scheduled: no label


def test_a_fresh_process_reads_the_catalogs_without_a_compile_step() -> None:
    """No .mo files ship: the .po files are read as they are (pip install -e works)."""
    assert not list(LOCALES.rglob("*.mo"))
    code = ("from calendar_app.site.i18n import Regional; "
            "print(Regional('es_ES').gettext('Upcoming events'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == "Próximos eventos"


# -- regional formats ------------------------------------------------------------------
@pytest.mark.parametrize("locale, day, time, month", [
    ("en_US", "Friday, December 11, 2026", "8:00 pm", "December 2026"),
    ("de_DE", "Freitag, 11. Dezember 2026", "20:00", "Dezember 2026"),
    ("fr_FR", "vendredi 11 décembre 2026", "20:00", "décembre 2026"),
    ("es_ES", "viernes, 11 de diciembre de 2026", "20:00", "diciembre de 2026"),
    ("ar_EG", "الجمعة، 11 ديسمبر 2026", "8:00 م", "ديسمبر 2026"),
])
def test_dates_and_times_follow_cldr(locale: str, day: str, time: str, month: str) -> None:
    regional = Regional(locale)
    moment = dt.datetime(2026, 12, 11, 20, 0)
    assert regional.long_date(moment) == day
    assert regional.clock(moment) == time
    assert regional.month_name(moment.date()) == month


@pytest.mark.parametrize("locale, first", [("en_US", 6), ("de_DE", 0), ("fr_FR", 0),
                                           ("es_ES", 0), ("ar_EG", 5), ("he_IL", 6)])
def test_week_start_is_the_locales_first_day(locale: str, first: int) -> None:
    assert week_start({"locale": locale}) == first
    # The setting wins over the locale.
    assert week_start({"locale": locale, "week_start": "Wednesday"}) == 2


@pytest.mark.parametrize("locale, cost, code, shown", [
    ("de_DE", "8", "EUR", "8\xa0€"),
    ("de_DE", "1,200.50", "USD", "1.200,50\xa0$"),
    ("fr_FR", "10 - 25", "EUR", "10\xa0€ – 25\xa0€"),
    ("es_ES", "Free", "EUR", "Gratis"),
    ("de_DE", "Spende", "EUR", "Spende"),  # text only: as typed
    ("en_US", "8", "EUR", "$8"),  # English: the plugin's symbol setting, as before
])
def test_costs_follow_the_locale(locale: str, cost: str, code: str, shown: str) -> None:
    assert Regional(locale).cost(cost, code, "$", "prefix") == shown


@pytest.mark.parametrize("country, default, lines", [
    ("Deutschland", None, ["Karl-Marx-Straße 141", "12043 Berlin"]),
    ("Germany", None, ["Karl-Marx-Straße 141", "12043 Berlin"]),
    ("", "DE", ["Karl-Marx-Straße 141", "12043 Berlin"]),
    ("United States", "DE", ["Karl-Marx-Straße 141", "Berlin, BE 12043"]),
    ("UK", None, ["Karl-Marx-Straße 141", "Berlin", "12043"]),
    ("España", None, ["Karl-Marx-Straße 141", "12043 Berlin BE"]),
    ("Österreich", None, ["Karl-Marx-Straße 141", "12043 Berlin", "BE"]),  # kept, below
    ("Atlantis", None, ["Karl-Marx-Straße 141", "Berlin, BE 12043"]),  # unknown: US order
])
def test_address_order_follows_the_country(country: str, default: str | None,
                                           lines: list[str]) -> None:
    region = "" if country in ("Deutschland", "Germany", "", "UK") else "BE"
    assert postal_lines("Karl-Marx-Straße 141", "Berlin", region, "12043",
                        country_code(country, default)) == lines


def test_missing_parts_leave_no_stray_separators() -> None:
    assert postal_lines("", "Riverside", "", "92501", "US") == ["Riverside 92501"]
    assert postal_lines("", "", "CA", "92501", "US") == ["CA 92501"]
    assert postal_lines("", "Riverside", "CA", "", "US") == ["Riverside, CA"]
    assert postal_lines("", "", "", "", "DE") == []


@settings(max_examples=200, deadline=500)
@given(st.text(max_size=40), st.text(max_size=20), st.text(max_size=20),
       st.text(max_size=12), st.sampled_from([None, "US", "DE", "GB", "BR", "XX"]))
def test_any_address_keeps_every_part_once(street: str, city: str, region: str,
                                           postcode: str, code: str | None) -> None:
    lines = postal_lines(street, city, region, postcode, code)
    joined = "\n".join(lines)
    for part in (street, city, region, postcode):
        assert part.strip() in joined
    assert all(line == line.strip() or line.strip() for line in lines)


# -- settings ----------------------------------------------------------------------------
@settings(max_examples=100, deadline=2000)
@given(st.one_of(st.text(max_size=30), st.integers(), st.none(), st.booleans()),
       st.one_of(st.text(max_size=12), st.integers(), st.none()))
def test_any_locale_or_week_start_is_accepted_or_named(locale: object,
                                                       week: object) -> None:
    found = dict(setting_problems({"locale": locale, "week_start": week}))
    assert set(found) <= {"locale", "week_start"}
    if "locale" in found:
        assert repr(locale) in found["locale"]
    Regional(str(locale))  # never raises: an unknown locale falls back to en_US
    if week is None or str(week).lower() in ("monday", "sunday"):
        assert "week_start" not in found


def test_check_and_build_name_a_bad_locale_with_its_line(tmp_path: Path) -> None:
    content = make_content(tmp_path, "locale: xx_QQ\nweek_start: someday\n")
    report = build(Options(content=content, out=tmp_path / "public", now=NOW,
                           cache_dir=tmp_path / "cache", progress=False,
                           compiled_templates=compiled_templates()))
    assert report.stopped and not (tmp_path / "public").exists()
    problems = {p.message.split(" (")[0].split(",")[0]: p.line for p in report.problems}
    lines = (content / "calendar.yaml").read_text().splitlines()
    assert problems["unknown locale 'xx_QQ'"] == lines.index("locale: xx_QQ") + 1
    assert any("week_start must name a day" in p.message for p in report.problems)
    check = subprocess.run([sys.executable, "-m", "calendar_app", "check", str(content)],
                           capture_output=True, text=True, timeout=120, check=False)
    assert check.returncode == 1
    assert "unknown locale 'xx_QQ'" in check.stdout + check.stderr


def test_build_refuses_an_unknown_locale_option(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "build.py", "--sample", "--out",
                             str(tmp_path / "out"), "--locale", "klingon_XX"], cwd=REPO,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert "unknown locale 'klingon_XX'" in result.stderr
    assert not (tmp_path / "out").exists()


# -- built pages ---------------------------------------------------------------------------
def test_html_lang_and_dir(sites: dict[str, Path]) -> None:
    expected = {"en": ('en-US', 'ltr'), "de": ('de-DE', 'ltr'), "fr": ('fr-FR', 'ltr'),
                "ar": ('ar-EG', 'rtl')}
    for language, (lang, direction) in expected.items():
        for page in ("index.html", "events/month/2026-12/index.html", "404.html"):
            assert f'<html lang="{lang}" dir="{direction}">' in read(sites[language], page)


def test_a_german_event_page_reads_as_germans_write(sites: dict[str, Path]) -> None:
    page = read(sites["de"], "event/adventskonzert/index.html")
    text = text_of(page)
    assert "Freitag, 11. Dezember 2026, 20:00 – 22:00 CET" in text
    assert "Zeitangaben in Mitteleuropäische Zeit." in text
    assert "<dt>Eintritt</dt><dd>8\xa0€</dd>" in page
    assert "Karl-Marx-Straße 141<br>12043 Berlin</address>" in page
    assert '<h2 id="add-heading">Zum Kalender hinzufügen</h2>' in page
    assert "Kommende" in text and "Upcoming" not in text
    venue = read(sites["de"], "venue/salle-oberkampf/index.html")
    assert "12 rue Oberkampf<br>75011 Paris<br>Frankreich</address>" in venue
    assert "<title>Veranstaltungsort: Salle Oberkampf · " in venue
    # The same event in English: the plugin's look, the US order for a US venue.
    english = read(sites["en"], "event/adventskonzert/index.html")
    assert "Friday, December 11, 2026, 8:00 pm – 10:00 pm CET" in text_of(english)


def test_month_grids_start_on_the_locales_first_day(sites: dict[str, Path]) -> None:
    def weekdays(site: Path) -> list[str]:
        page = read(site, "events/month/2026-12/index.html")
        return re.findall(r'<th scope="col"><abbr title="([^"]+)">', page)
    assert weekdays(sites["en"])[0] == "Sunday"
    assert weekdays(sites["de"]) == ["Montag", "Dienstag", "Mittwoch", "Donnerstag",
                                     "Freitag", "Samstag", "Sonntag"]
    assert weekdays(sites["fr"])[0] == "lundi"
    assert weekdays(sites["ar"])[0] == "السبت"  # Egypt's weeks start on Saturday
    # The first cell is that weekday: 2026-11-28 is a Saturday, 11-30 a Monday.
    ar = read(sites["ar"], "events/month/2026-12/index.html")
    assert re.search(r'<td [^>]*data-date="([\d-]+)"', ar).group(1) == "2026-11-28"
    de = read(sites["de"], "events/month/2026-12/index.html")
    assert re.search(r'<td [^>]*data-date="([\d-]+)"', de).group(1) == "2026-11-30"


def test_right_to_left_pages_point_their_arrows_the_other_way(sites: dict[str, Path]) -> None:
    ar = read(sites["ar"], "events/month/2026-12/index.html")
    assert re.search(r'rel="prev">→ نوفمبر 2026</a>', ar)
    assert re.search(r'rel="next">يناير 2027 ←</a>', ar)
    en = read(sites["en"], "events/month/2026-12/index.html")
    assert 'rel="prev">← November 2026</a>' in en


def test_scripts_get_their_words_in_the_pages_language(sites: dict[str, Path]) -> None:
    def data(site: Path) -> dict:
        text = read(site, "assets/calendar-data.js")
        return json.loads(text.removeprefix("window.calendarSite=").rstrip(";\n"))
    fr = data(sites["fr"])
    assert fr["lang"] == "fr-FR" and fr["text"]["today"] == "Aujourd’hui"
    assert set(fr["plurals"]["found"]) == {"one", "many", "other"}
    assert fr["plurals"]["found"]["one"] == "{n} événement correspond."
    ar = data(sites["ar"])
    # Arabic counts in six ways; each category has its own form where it differs.
    assert set(ar["plurals"]["found"]) == {"zero", "one", "two", "few", "many", "other"}
    assert ar["plurals"]["found"]["two"] == "فعاليتان مطابقتان."
    assert ar["plurals"]["found"]["few"] == "{n} فعاليات مطابقة."
    assert data(sites["en"])["plurals"]["found"] == {"one": "{n} event matches.",
                                                     "other": "{n} events match."}


def test_feeds_translate_text_and_keep_machine_values(sites: dict[str, Path]) -> None:
    de = read(sites["de"], "event/adventskonzert/event.ics")
    en = read(sites["en"], "event/adventskonzert/event.ics")
    assert "DESCRIPTION:Veranstaltet von: Nachbarschaftschor" in de
    assert "DESCRIPTION:Organized by: Nachbarschaftschor" in en
    # Names, statuses and dates stay as calendar apps read them.
    for line in ("X-WR-CALNAME:", "STATUS:CONFIRMED", "DTSTART;TZID=Europe/Berlin:"):
        assert [x for x in de.splitlines() if x.startswith(line)] == [
            x for x in en.splitlines() if x.startswith(line)]
    assert "LOCATION:Kulturhaus Neukölln\\, Karl-Marx-Straße 141\\, 12043 Berlin" in de
    atom = read(sites["de"], "feed.xml")
    assert "<title>Riverside Arts &amp; Community Calendar: kommende Veranstaltungen</title>" \
        in atom


def test_json_ld_is_the_same_in_every_language(sites: dict[str, Path]) -> None:
    def json_ld(site: Path) -> dict:
        page = read(site, "event/holiday-messiah-sing-along-2026/index.html")
        found = re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.DOTALL)
        return json.loads(found.group(1))
    english = json_ld(sites["en"])
    assert english["offers"] or english["startDate"]
    for language in ("de", "fr", "ar"):
        assert json_ld(sites[language]) == english, language


def test_no_english_is_left_on_translated_pages(sites: dict[str, Path]) -> None:
    """Words of the site (not of the records) that would show a missed string."""
    words = ("Upcoming events", "Skip to main", "Subscribe", "Add to calendar",
             "Jump to month", "Previous", "Next page", "all day", "Search events",
             "Download .ics", "Times are in", "Embed this calendar", "in a frame",
             "how many events")
    for language in ("de", "fr", "ar"):
        for path in ("index.html", "events/month/2026-12/index.html", "404.html",
                     "embed/index.html",
                     "event/winter-lights-festival-2027/index.html",
                     "venue/magnolia-arts-center/index.html", "search/index.html"):
            if not (sites[language] / path).exists():
                continue
            text = text_of(read(sites[language], path))
            assert [w for w in words if w in text] == [], (language, path)


def test_the_web_component_speaks_every_catalogs_language(sites: dict[str, Path]) -> None:
    """embed.js carries its words in every language the site has a catalog for and
    names the calendar's own; still under 10 KB gzipped with them."""
    script = (sites["fr"] / "assets/embed.js").read_bytes()
    assert len(gzip.compress(script, 9)) < 10 * 1024
    found = re.search(rb"var WORDS = (\{.*?\});\n", script)
    words = json.loads(found.group(1))
    assert words["site"] == "fr"
    assert set(words["languages"]) == set(languages())
    assert words["languages"]["de"]["all"] == "Alle Veranstaltungen"
    assert words["languages"]["fr"]["none"] == "Aucun événement à venir."
    assert words["languages"]["ar"]["dir"] == "rtl"
    for language, table in words["languages"].items():
        assert set(table) == {"lang", "dir", "loading", "none", "all", "failed", "see",
                              "label"}, language
    page = text_of(read(sites["de"], "embed/index.html"))
    assert "Diesen Kalender einbinden" in page
    assert "Englisch, Arabisch, Deutsch, Spanisch und Französisch" in page
