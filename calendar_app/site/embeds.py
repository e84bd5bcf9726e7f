"""The calendar inside other websites: views for an `<iframe>` and the page that tells
how to embed them (and the `<calendar-events>` web component, `assets/embed.js`).

The iframe views are compact, script-free pages that take the width they are given:
`embed/list/` (the next `per_page` upcoming events) and `embed/month/YYYY-MM/` (a small
month table and the month's events). Their links to events open in the host page's
window (`<base target="_top">`); the month's previous/next links stay in the frame.
They are not for search engines: `noindex`, and left out of the sitemap.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

from . import paths
from .grid import add_months, grid_days, month_agenda, month_grid, months_between, weekdays
from .i18n import N_, SOURCE_LANGUAGE, Regional, languages
from .model import EventView
from .pages import Nav, Pages, listing_deps
from .plan import Output, ids

SCRIPT = "static/embed.js"
_WORDS_SLOT = b"{/*words*/}"
# The web component's own words (embed.js has the English), given to it in every
# language the site has a catalog for.
SCRIPT_WORDS = {
    "loading": N_("Loading events…"), "none": N_("No upcoming events."),
    "all": N_("All events"), "failed": N_("The events could not be loaded."),
    "see": N_("See the calendar"), "label": N_("Upcoming events"),
}


def script_words(site: Regional) -> dict:
    """{"site": the calendar's language, "languages": {language: {"lang", "dir", words}}}:
    what the component picks its words from, by its `language` attribute."""
    found = {}
    for language in languages():
        regional = Regional(language)
        found[language] = {"lang": language, "dir": regional.dir,
                           **{k: regional.gettext(v) for k, v in SCRIPT_WORDS.items()}}
    return {"site": site.locale.language, "languages": found}


def script(source: bytes, words: dict) -> bytes:
    """embed.js with its words (script_words) filled in; a template's own embed.js
    without the slot stays as it is."""
    text = json.dumps(words, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return source.replace(_WORDS_SLOT, text.encode(), 1)


def outputs(pages: Pages) -> Iterator[Output]:
    model = pages.model
    upcoming = model.upcoming[:pages.per_page()]
    yield Output(paths.page(paths.EMBED_LIST), listing_deps(upcoming),
                 f"embed list {[e.id for e in upcoming]}",
                 lambda: pages.render("embed_list.html", paths.page(paths.EMBED_LIST),
                                      events=upcoming, canonical="",
                                      all_events=paths.page(paths.UPCOMING)))
    low, high = model.month_range()
    for first in months_between(low, high):
        path = paths.embed_month(first)
        shown = sorted(set(_month_events(pages, first)), key=lambda e: e.id)
        today = model.today if (model.today.year, model.today.month) == (
            first.year, first.month) else None
        yield Output(path, listing_deps(shown),
                     f"embed month {first} {low} {high} {today} {[e.id for e in shown]}",
                     _month(pages, path, first, low, high))
    yield Output(paths.page(paths.EMBED), ids((*model.categories, *model.venues)),
                 f"embed help {model.today:%Y-%m}",
                 lambda: _help(pages))


def _month_events(pages: Pages, first: dt.date) -> Iterator[EventView]:
    """Every event on a day of the month's table (days of the months around it too)."""
    start, last = grid_days(first, pages.model.settings)
    while start <= last:
        yield from pages.model.by_day.get(start, ())
        start += dt.timedelta(days=1)


def _month(pages: Pages, path: str, first: dt.date, low: dt.date, high: dt.date):
    def render() -> bytes:
        model = pages.model
        weeks = month_grid(model, first)
        before, after = add_months(first, -1), add_months(first, 1)
        return pages.render(
            "embed_month.html", path, month=first, weeks=weeks,
            weekdays=weekdays(model), agenda=month_agenda(model, first),
            day_paths={c.day: paths.day(c.day) for w in weeks for c in w if c.count},
            canonical="", full_month=paths.month(first),
            prev_month=Nav(before, paths.embed_month(before)) if first > low else None,
            next_month=Nav(after, paths.embed_month(after)) if first < high else None)
    return render


def _help(pages: Pages) -> bytes:
    """The page with the snippets to copy, every address absolute (they are pasted
    into other sites), and the categories and venues one may filter by."""
    model = pages.model
    base = pages.base_url
    return pages.render(
        "embed.html", paths.page(paths.EMBED), section="embed",
        list_url=base + paths.EMBED_LIST,
        month_url=base + paths.folder(paths.embed_month(model.today)),
        script_url=base + paths.ASSETS + "embed.js", script_languages=_language_names(pages),
        categories=[(c.slug, c.name) for c in model.categories],
        venues=[(v.slug, v.name) for v in model.venues])


def _language_names(pages: Pages) -> str:
    """"English, German, French, Spanish and Arabic", in the page's language: those the
    component has words in."""
    from babel.lists import format_list
    locale = pages.regional.locale
    names = [locale.languages.get(code, code) for code in (SOURCE_LANGUAGE, *languages())]
    return format_list(names, locale=locale)
