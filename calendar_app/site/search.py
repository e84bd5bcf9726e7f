"""Search on a static host: the listed events as one compact index that the search
page reads and searches in the browser (site_templates/static/search.js).

Our own index rather than Pagefind: at the 10,000 events of bench/build_bench.py it
costs about 0.25 s of CPU inside the build and is one file of 1.1 MB (180 KB
gzipped), where Pagefind, run over the 10,000 built event pages only, took 9.5 s of
CPU and wrote 10,110 files (10.7 MB), without the category, venue and "free" filters
(they would need attributes in every page). The index is a script
(`window.calendarSearchIndex = ...`), not JSON, so the page works from `file://`
too, where a browser refuses to fetch files.

Per event: its page's folder, title, local start, end (UTC seconds, so the browser
can tell upcoming from past on the day it is read), venue id, category ids, a "free"
flag and a few words of its excerpt (or description), already folded as the browser
folds a query: lower case, accents removed.
"""

from __future__ import annotations

import calendar
import json
import re
import unicodedata
from collections.abc import Iterator

from ..model import cost, markup
from . import paths
from .model import EventView
from .pages import Pages
from .plan import Output, ids

PAGE = paths.page("events/search/")
INDEX = "events/search/search-index.js"
TEXT_WORDS = 20  # words of the excerpt or description kept per event
TEXT_CHARS = 1000  # of which only the start is read: enough for those words
_WORD = re.compile(r"[^\W_]+")
# Markdown link targets and bare addresses are not words anyone searches for.
_LINKS = re.compile(r"\]\([^)]*\)|https?://\S+")


def fold(text: str) -> list[str]:
    """The words of `text` as search compares them (search.js `fold` does the same)."""
    text = text.lower()
    if not text.isascii():  # most text: no accents to take off
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(text)


def outputs(pages: Pages) -> Iterator[Output]:
    model = pages.model
    events = model.listed
    venues = _venues(events)
    categories = model.categories
    terms = ids((*venues, *categories))
    yield Output(INDEX, (*terms, *(e.source_id for e in events)),
                 f"search-index {[e.id for e in events]}",
                 lambda: index_script(pages), kind="search")
    yield Output(PAGE, terms, f"search-page {list(terms)}",
                 lambda: pages.render("search.html", PAGE, section="search",
                                      categories=_category_options(pages),
                                      venues=[(v.id, v.name) for v in _venues(model.listed)]))


def index_script(pages: Pages) -> bytes:
    model = pages.model
    events = model.listed
    data = {
        "categories": [[c.id, c.name, _parent_id(pages, c)] for c in model.categories],
        "venues": [[v.id, v.name, str(v.get("city") or "")] for v in _venues(events)],
        "events": [entry(e) for e in events],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"window.calendarSearchIndex={text};\n".encode()


def entry(e: EventView) -> list:
    """One event's row, kept on the view (dropped with its rendered list items when
    the event changes under --watch, model.refresh_event)."""
    found = e.items.get("search-row")
    if found is None:
        start = e.first_day.isoformat() if e.all_day else e.start.isoformat(timespec="minutes")
        prices = cost.price_range(e.record.get("cost"))
        free = prices is not None and prices[0] == "0"
        found = e.items["search-row"] = [
            paths.folder(e.path), e.title_text, start, calendar.timegm(e.end_utc.timetuple()),
            e.venue.id if e.venue is not None else 0, [c.id for c in e.categories],
            int(free), " ".join(_text_words(e))]
    return found


def _text_words(e: EventView) -> list[str]:
    raw = str(e.record.get("excerpt") or e.record.get("description") or "")[:TEXT_CHARS]
    text = markup.plain_text(_LINKS.sub(" ", raw))
    seen = set(fold(e.title_text))
    kept: list[str] = []
    for word in fold(text):
        if len(word) > 1 and word not in seen:
            seen.add(word)
            kept.append(word)
            if len(kept) == TEXT_WORDS:
                break
    return kept


def _venues(events: list[EventView]) -> list:
    found = {e.venue.id: e.venue for e in events if e.venue is not None}
    return sorted(found.values(), key=lambda v: (v.name.lower(), v.id))


def _parent_id(pages: Pages, category) -> int:
    parents = pages.model.parents(category)
    return parents[-1].id if parents else 0


def _category_options(pages: Pages) -> list[tuple[int, str]]:
    """Categories as "Parent › Child" labels, in that order."""
    model = pages.model
    labelled = [(" › ".join([*(p.name for p in model.parents(c)), c.name]), c.id)
                for c in model.categories]
    return [(cid, label) for label, cid in sorted(labelled, key=lambda x: x[0].lower())]
