"""The HTML pages: lists, month and day views, events, venues, organizers, terms, 404."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass

from jinja2 import Environment, Template
from markupsafe import Markup

from ..catalog.represent import dumps
from ..model import markup
from ..model.records import Record
from . import paths
from .grid import add_months, grid_days, month_agenda, month_grid, months_between, weekdays
from .i18n import N_, N_plural
from .jsonld import page_json_ld
from .meta import HeadMeta, shorten
from .model import EventView, SiteModel, address_lines, map_url
from .plan import Output, ids
from .render import install_locale

SITE_DATA = paths.ASSETS + "calendar-data.js"
UPCOMING_DATES = 10  # dates of a series listed on its pages (and how many more)
# Words of the scripts (now.js, search.js, jump-month.js), given to them translated
# in calendar-data.js; the scripts fill in "{n}", "{limit}", "{min}" and "{max}".
SCRIPT_MESSAGES = {
    "today": N_("Today"), "past": N_("past"), "none": N_("No events match."),
    "type": N_("Type a word or choose a filter."),
    "month_range": N_("Choose a month from {min} to {max}."),
}
# The kinds of record (model/resources.py's labels) as page headings name them.
RESOURCE_LABELS = frozenset({N_("Event"), N_("Venue"), N_("Organizer"), N_("Category"),
                             N_("Tag")})
# An event's status as pages label it (model/resources.py's EVENT_STATUS_LABELS).
STATUS_LABELS = frozenset({N_("Canceled"), N_("Postponed")})
# Counted ones: a text for each plural category (CLDR's, as the browser's
# Intl.PluralRules names them) of the language.
SCRIPT_PLURALS = {
    "ended": N_plural("No longer listed here, as it has ended since this page was published: "
                      "{n} event.", "No longer listed here, as they have ended since this "
                      "page was published: {n} events."),
    "found": N_plural("{n} event matches.", "{n} events match."),
    "shown": N_plural("{n} event matches; the first {limit} are shown.",
                      "{n} events match; the first {limit} are shown."),
}


@dataclass
class Pagination:
    number: int
    pages: int
    base: str

    @property
    def prev(self) -> str | None:
        return paths.list_page(self.base, self.number - 1) if self.number > 1 else None

    @property
    def next(self) -> str | None:
        return paths.list_page(self.base, self.number + 1) if self.number < self.pages else None

    @property
    def links(self) -> list[tuple[int, str]]:
        return [(n, paths.list_page(self.base, n)) for n in range(1, self.pages + 1)]


@dataclass
class Nav:
    day: dt.date
    path: str


def listing_deps(events: list[EventView]) -> tuple[int, ...]:
    """A list item shows the event and its venue's name and city."""
    found: list[int] = []
    for e in events:
        found.append(e.source_id)
        if e.venue is not None:
            found.append(e.venue.id)
    return tuple(found)


def event_deps(model: SiteModel, e: EventView) -> tuple[int, ...]:
    """An event page shows its venue, organizers and terms (term URLs need parents)."""
    found = model.deps.get(e.id)
    if found is None:  # asked by each of the event's outputs and by every feed it is in
        parents = [p for c in e.categories for p in model.parents(c)]
        found = model.deps[e.id] = (e.source_id, *ids((e.venue, *e.organizers,
                                                       *e.categories, *parents, *e.tags)))
    return found


def submit_url(value: object) -> str:
    """calendar.yaml's `submit_url` (the app's public submission form) if it is an
    http(s) address or a path of the site's host; anything else (javascript:...) is
    left out rather than linked."""
    text = str(value or "").strip()
    if text.startswith(("https://", "http://")) or (
            text.startswith("/") and not text.startswith("//")):
        return text
    return ""


class Pages:
    def __init__(self, model: SiteModel, env: Environment, base_url: str) -> None:
        self.model = model
        self.env = env
        self.base_url = base_url
        settings = model.settings
        self.regional = model.regional
        install_locale(env, model.regional)
        self.site = {"title": settings.get("title", ""),
                     "description": settings.get("description", ""),
                     "url": base_url,  # for absolute links: feeds to subscribe to
                     "submit_url": submit_url(settings.get("submit_url"))}
        self.this_month = paths.month(model.today)
        self._templates: dict = {}
        self._jump_menus: dict[str, Markup] = {}
        # What list items ask of the model (the event_item macro).
        self.item_helpers = {"cost_of": model.cost_text, "thumbnail": self.thumbnail,
                             "month_groups": month_groups}

    def render(self, template: str | Template, path: str, **context: object) -> bytes:
        tpl = template if isinstance(template, Template) else self._templates.get(template)
        if tpl is None:
            tpl = self._templates[template] = self.env.get_template(template)
        context.setdefault("canonical", self.base_url + paths.folder(path))
        context.setdefault("meta", HeadMeta(self.site["title"], shorten(self.site["description"]),
                                            str(context["canonical"])))
        # The site root as seen from this page: the header and footer's links are
        # `root` + a path (a dozen |url filter calls a page, 47,000 pages a build).
        # Markup: a path of "../", never escaped (a dozen times a page).
        root = Markup(context.get("absolute_root") or paths.root_of(path))
        return tpl.render(site=self.site, lang=self.regional.lang, dir=self.regional.dir,
                          back=self.regional.back, forward=self.regional.forward,
                          page_path=path, root=root,
                          this_month=self.this_month, **self.item_helpers,
                          **context).encode("utf-8")

    # -- list items ----------------------------------------------------------------
    def thumbnail(self, e: EventView) -> dict | None:
        """The event's image for its list item, with the file's size when it is local."""
        value = e.record.get("image")
        if not value:
            return None
        image = self.model.rep.image(str(value))
        return {"url": local_or_remote(image["url"], self.model),
                "width": image.get("width"), "height": image.get("height")}

    def items_stamp(self, events: list[EventView]) -> str:
        """What list items show besides their records: the size of their local images."""
        return " ".join(media_stamp(self.model, e.record.get("image")) for e in events
                        if e.record.get("image"))

    def jump_menu(self, path: str, number: int = 1) -> Markup:
        """"Jump to month": a link to every month page (works without JavaScript) and a
        month field that jump-month.js turns on. The same on every page at one depth.

        On month pages and the first page of each list only: on every page of every
        list it was 5 KB a page, 36 MB at 10,000 events, and a new last month
        rewrote all of them."""
        if number > 1:
            return Markup()
        root = paths.root_of(path)
        found = self._jump_menus.get(root)
        if found is None:
            low, high = self.model.month_range()
            years: dict[int, list[tuple[str, str, str]]] = {}
            for first in months_between(low, high):
                years.setdefault(first.year, []).append(
                    (f"{first:%Y-%m}", self.regional.month_abbr(first.month),
                     root + paths.month(first)))
            found = self._jump_menus[root] = Markup(self.env.get_template(
                "_jump_month.html").render(years=years, low=f"{low:%Y-%m}",
                                           high=f"{high:%Y-%m}",
                                           current=f"{self.model.today:%Y-%m}"))
        return found

    def jump_stamp(self, number: int) -> str:
        if number > 1:
            return ""
        low, high = self.model.month_range()
        return f"jump {low} {high}"

    # -- the plan ----------------------------------------------------------------
    def outputs(self) -> Iterator[Output]:
        yield from self.lists()
        yield from self.months()
        yield from self.days()
        for event in self.model.events:
            yield self.event_page(event)
        for found in self.model.occurrences.values():
            for occurrence in found:
                yield self.event_page(occurrence)
        for record in (*self.model.venues, *self.model.organizers,
                       *self.model.categories, *self.model.tags):
            yield from self.collection_pages(record)
        yield Output(paths.NOT_FOUND, (), self.this_month, self.not_found)
        yield self.site_data()

    def site_data(self) -> Output:
        """What now.js needs to correct a page on the day it is read: the calendar's
        time zone and the months that have a page (one small file, not in every page:
        a new last month rewrites it alone)."""
        low, high = self.model.month_range()
        _ = self.regional.gettext
        data = {"timezone": self.model.site_tz, "firstMonth": f"{low:%Y-%m}",
                "lastMonth": f"{high:%Y-%m}", "lang": self.regional.lang,
                "text": {key: _(message) for key, message in SCRIPT_MESSAGES.items()},
                "plurals": {key: self.regional.plural_forms(*pair)
                            for key, pair in SCRIPT_PLURALS.items()}}
        text = f"window.calendarSite={json.dumps(data)};\n"
        return Output(SITE_DATA, (), text, lambda: text.encode(), kind="asset")

    def per_page(self) -> int:
        return max(1, int(self.model.settings.get("per_page") or 10))

    def paged(self, base: str, events: list[EventView]) -> Iterator[tuple[list[EventView],
                                                                          Pagination]]:
        """`events` cut into pages of `per_page`: page 1 at `base`, N at `base`page/N/."""
        size = self.per_page()
        pages = max(1, math.ceil(len(events) / size))
        for number in range(1, pages + 1):
            yield events[(number - 1) * size: number * size], Pagination(number, pages, base)

    def lists(self) -> Iterator[Output]:
        _ = self.regional.gettext
        for base, events, heading, empty, section in (
                (paths.UPCOMING, self.model.upcoming, _("Upcoming events"),
                 _("No upcoming events."), "upcoming"),
                (paths.PAST, self.model.past, _("Past events"), _("No past events."), "past")):
            for chunk, pagination in self.paged(base, events):
                number, pages = pagination.number, pagination.pages
                outputs = [paths.list_page(base, number)]
                if base == paths.UPCOMING and number == 1:
                    outputs.append(paths.HOME)  # the home page is the first upcoming page
                for path in outputs:
                    yield Output(path, listing_deps(chunk),
                                 f"list {number}/{pages} {[e.id for e in chunk]} "
                                 f"{self.items_stamp(chunk)} {self.jump_stamp(number)}",
                                 self._list(path, chunk, pagination, heading, empty, section))

    def _list(self, path: str, events: list[EventView], pagination: Pagination,
              heading: str, empty: str, section: str):
        canonical = self.base_url + paths.folder(paths.list_page(pagination.base,
                                                                 pagination.number))
        meta = HeadMeta(heading, shorten(self.site["description"]), canonical)
        return lambda: self.render("list.html", path, events=events, pagination=pagination,
                                   heading=heading, empty=empty, section=section,
                                   canonical=canonical, meta=meta,
                                   jump_month=self.jump_menu(path, pagination.number))

    def months(self) -> Iterator[Output]:
        low, high = self.model.month_range()
        for first in months_between(low, high):
            # The grid's weeks show some days of the months around it too.
            start, last = grid_days(first, self.model.settings)
            shown = sorted({e for d, evs in self.model.by_day.items() if start <= d <= last
                            for e in evs}, key=lambda e: e.id)
            today = self.model.today if start <= self.model.today <= last else None
            path = paths.month(first)
            yield Output(path, listing_deps(shown),
                         f"month {first} {low} {high} {today} {[e.id for e in shown]}",
                         self._month(path, first, low, high))

    def _month(self, path: str, first: dt.date, low: dt.date, high: dt.date):
        def render() -> bytes:
            weeks = month_grid(self.model, first)
            day_paths = {c.day: paths.day(c.day) for w in weeks for c in w if c.count}
            prev_first, next_first = add_months(first, -1), add_months(first, 1)
            return self.render(
                "month.html", path, month=first, weeks=weeks,
                weekdays=weekdays(self.model),
                agenda=month_agenda(self.model, first), site_tz=self.model.site_tz,
                day_paths=day_paths, section="month", jump_month=self.jump_menu(path),
                prev_month=Nav(prev_first, paths.month(prev_first)) if first > low else None,
                next_month=Nav(next_first, paths.month(next_first)) if first < high else None)
        return render

    def days(self) -> Iterator[Output]:
        for day in self.model.event_days:
            events = self.model.by_day[day]
            before, after = self.model.neighbour_days(day)
            path = paths.day(day)
            yield Output(path, listing_deps(events),
                         f"day {day} {before} {after} {[e.id for e in events]} "
                         f"{self.items_stamp(events)}",
                         self._day(path, day, events, before, after))

    def _day(self, path: str, day: dt.date, events: list[EventView],
             before: dt.date | None, after: dt.date | None):
        return lambda: self.render(
            "day.html", path, day=day, events=events, section="month",
            month_path=paths.month(day),
            prev_day=Nav(before, paths.day(before)) if before else None,
            next_day=Nav(after, paths.day(after)) if after else None)

    def event_page(self, e: EventView) -> Output:
        image = e.record.get("image")
        # The previous/next links show the neighbours' titles and dates: an edit of
        # one of them signs (and --watch re-renders) this page too.
        neighbours = [n for n in self.model.neighbours(e) if n is not None]
        # The upcoming dates of a series move with "now": the ones shown are the shape.
        dates = self.model.upcoming_dates(e)
        return Output(e.path, (*event_deps(self.model, e), *(n.source_id for n in neighbours)),
                      f"event {media_stamp(self.model, image)} {[n.id for n in neighbours]} "
                      f"{[o.id for o in dates[:UPCOMING_DATES]]} {len(dates)}",
                      lambda: self._event(e))

    def _event(self, e: EventView) -> bytes:
        model = self.model
        body = e.body()
        image = body["image"] or None
        venue = e.venue
        # On unless the event or venue says no: the plugin's editor ticks it for a new
        # event (only its REST interface stores "no" when a client leaves it out).
        show_link = bool(venue is not None and e.record.get("show_map_link", True)
                         and venue.get("show_map_link", True))
        before, after = model.neighbours(e)
        upcoming = model.upcoming_dates(e)
        # `<` escaped as well: no "</script>" or "<!--" can end the JSON-LD early.
        json_ld = dumps(page_json_ld(model, e.record, body)).replace("<", "\\u003c")
        return self.render(
            "event.html", e.path, e=e, json_ld=Markup(json_ld),
            meta=HeadMeta(e.title_text, shorten(e.summary_text), self.base_url + paths.folder(
                e.path), image["url"] if image else "",
                noindex=bool(e.record.get("hide_from_listings"))),
            image=local_or_remote(image["url"], model) if image else None,
            image_size=(image["width"], image["height"]) if image and "width" in image
            else None,
            cost=model.cost_text(e), website=e.record.get("website"),
            # Links made here, the arguments of the shared sections (render.rendered_for).
            venue_href=paths.relative(model.page_of(venue), e.path) if venue else None,
            venue_address=tuple(address_lines(venue, territory=model.territory))
            if venue else (),
            map_url=map_url(venue, model.territory) if venue is not None and show_link else None,
            term_paths={t.id: model.page_of(t) for t in (*e.categories, *e.tags)},
            organizer_hrefs=tuple(paths.relative(model.page_of(o), e.path)
                                  for o in e.organizers),
            breadcrumbs=[{"name": c.name, "path": model.page_of(c)}
                         for c in model.breadcrumb_categories(e)],
            all_events=paths.page(paths.UPCOMING), prev_event=before, next_event=after,
            upcoming_dates=upcoming[:UPCOMING_DATES], more_dates=len(upcoming) - UPCOMING_DATES,
            series=e.series)

    def collection_pages(self, record: Record) -> Iterator[Output]:
        """A record's page, its upcoming events paginated like the lists."""
        model = self.model
        base = paths.folder(model.page_of(record))
        events = model.upcoming_of(record)
        extra: list[Record] = []
        if record.collection == "categories":
            extra = [*model.parents(record), *model.descendants(record)]
        stamp = media_stamp(model, record.get("image"))
        for chunk, pagination in self.paged(base, events):
            path = paths.list_page(base, pagination.number)
            yield Output(path, (record.id, *ids(extra), *listing_deps(chunk)),
                         f"{record.collection} {pagination.number}/{pagination.pages} "
                         f"{[e.id for e in chunk]} {stamp} {self.items_stamp(chunk)} "
                         f"{self.jump_stamp(pagination.number)}",
                         self._collection(record, path, chunk, pagination))

    def _collection(self, record: Record, path: str, events: list[EventView],
                    pagination: Pagination):
        return lambda: self._render_collection(record, path, events, pagination)

    def _render_collection(self, record: Record, path: str, events: list[EventView],
                           pagination: Pagination) -> bytes:
        model = self.model
        _ = self.regional.gettext
        kind = _(record.resource.label)  # one of RESOURCE_LABELS (a test checks)
        context: dict = {"record": record, "kind": kind,
                         "heading": _("%(kind)s: %(name)s") % {"kind": kind,
                                                               "name": record.name},
                         "events": events, "pagination": pagination,
                         "canonical": self.base_url + paths.folder(path),
                         "ics_path": pagination.base + "calendar.ics",
                         "jump_month": self.jump_menu(path, pagination.number)}
        body = model.rep.represent(record) if not record.resource.is_term else None
        if body is not None:
            context["description"] = Markup(body.get("description", ""))
            if body.get("image"):
                context["image"] = local_or_remote(body["image"]["url"], model)
        else:
            context["description"] = record.get("description", "")
        context["meta"] = HeadMeta(
            context["heading"], shorten(markup.plain_text(str(context["description"]))
                                        or self.site["description"]),
            context["canonical"], body["image"]["url"] if body and body.get("image") else "")
        if record.collection == "venues":
            context["address"] = address_lines(record, territory=model.territory)
            if record.get("show_map_link", True):
                context["map_url"] = map_url(record, model.territory)
        if record.collection in ("venues", "organizers"):
            context["contact"] = {k: record.get(k) for k in ("phone", "email", "website")
                                  if record.collection == "organizers" or k != "email"}
        if record.collection == "categories":
            context["breadcrumbs"] = [{"name": p.name, "path": model.page_of(p)}
                                      for p in model.parents(record)]
            context["children"] = [{"name": c.name, "path": model.page_of(c)}
                                   for c in model.children(record)]
        return self.render("collection.html", path, **context)

    def not_found(self) -> bytes:
        # Served for any missing address, at any depth: links must be absolute here.
        root = "/" + self.base_url.split("://", 1)[-1].partition("/")[2]
        return self.render("404.html", paths.NOT_FOUND, absolute_root=root, canonical="")


def month_groups(events: list[EventView]) -> list[tuple[dt.date, list[EventView]]]:
    """Events in runs of the same month (of their first day), with that month's 1st."""
    groups: list[tuple[dt.date, list[EventView]]] = []
    current = None
    for e in events:
        start = e.start
        if (start.year, start.month) != current:
            current = (start.year, start.month)
            groups.append((dt.date(start.year, start.month, 1), []))
        groups[-1][1].append(e)
    return groups


def local_or_remote(url: str, model: SiteModel) -> str:
    """A media URL of this site as a site path (copied into the output), else as is."""
    site = model.rep.site_url
    return url.removeprefix(site)


def media_stamp(model: SiteModel, image: object) -> str:
    """Size and time of a local image: dimensions shown on pages come from the file."""
    if not image or "://" in str(image):
        return ""
    try:
        stat = (model.catalog.tree.root / str(image)).stat()
    except OSError:
        return "missing"
    return f"{stat.st_size}:{stat.st_mtime_ns}"
