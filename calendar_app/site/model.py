"""What the site shows: published records as view objects, and the indexes pages need.

Only records with status `publish` enter the model, so nothing downstream can leak a
draft, a trashed or a private record. Events hidden from listings keep their own page
and `.ics` but stay out of lists, grids and feeds (the plugin's meaning of the flag).
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING
from urllib.parse import quote

from markupsafe import Markup

from ..catalog import occurrences
from ..catalog.catalog import Catalog
from ..catalog.represent import Representer
from ..model import cost, dates, markup
from ..model.records import Record
from ..model.resources import EVENTS
from ..model.settings import multiday_cutoff, recurrence_horizon
from . import addresses, paths
from .i18n import Regional, site_locale
from .memo import Recent

if TYPE_CHECKING:  # render imports this module
    from .render import ItemShape

PUBLISHED = "publish"
_STATUS_TYPE = EVENTS.field("event_status").type  # type: ignore[union-attr]
# An excerpt's closing ellipsis: "…", "...", "[…]" or "[...]" (WordPress writes those).
_ELLIPSIS = re.compile(r"\s*\[?(?:…|\.\.\.)\]?\s*$")


@dataclass(eq=False)
class EventView:
    record: Record
    tzname: str
    start: dt.datetime  # naive, local to tzname
    end: dt.datetime
    start_utc: dt.datetime  # naive UTC
    end_utc: dt.datetime
    all_day: bool
    path: str  # the event page
    venue: Record | None = None
    organizers: list[Record] = field(default_factory=list)
    categories: list[Record] = field(default_factory=list)
    tags: list[Record] = field(default_factory=list)
    # The API representation (single read): pages take their HTML from it, so the
    # Markdown of a description is converted once per build and matches the API.
    body: Callable[[], dict] = field(default=dict, repr=False)
    items: dict = field(default_factory=dict, repr=False)  # render.cached_item
    # The first movable list item, cut to be made at any depth and heading
    # (render.ItemShape), kept when `items` is dropped.
    kept_item: ItemShape | None = field(default=None, repr=False)
    # An occurrence's series (docs/recurring-events.md): the occurrence shares its
    # record file, so outputs showing it depend on the series' record (`source_id`).
    series: EventView | None = None
    # The calendar's end-of-day cutoff (settings.multiday_cutoff): an end up to this
    # long after midnight still belongs to the day before.
    cutoff: dt.timedelta = dt.timedelta(0)
    id: int = field(init=False)  # asked a million times in a 10,000-event build
    source_id: int = field(init=False)  # the catalog record behind the view

    def __post_init__(self) -> None:
        self.id = self.record.id
        self.source_id = self.series.id if self.series is not None else self.id

    @property
    def slug(self) -> str:
        return self.record.slug

    @property
    def ics_path(self) -> str:
        # An occurrence is downloaded as its series: the .ics with the rule.
        return paths.folder((self.series or self).path) + "event.ics"

    @property
    def date_ics_path(self) -> str:
        """An occurrence's own .ics, this date alone ("" for a single event or series)."""
        return paths.folder(self.path) + "event.ics" if self.series is not None else ""

    @cached_property
    def status_label(self) -> str:
        """The plugin's label of an event that does not take place as planned
        ("Canceled", "Postponed"); "" for a scheduled one, which pages do not label."""
        status = str(self.record.get("event_status") or "scheduled")
        return "" if status == "scheduled" else _STATUS_TYPE.label(status)

    @property
    def status_reason(self) -> str:
        return str(self.record.get("event_status_reason") or "") if self.status_label else ""

    @cached_property
    def title(self) -> Markup:
        # render_title escapes markup and adds typographic entities, as the API does.
        return Markup(markup.render_title(self.record.name))

    @cached_property
    def title_text(self) -> str:
        return markup.plain_text(str(self.title), keep_no_break=True)

    @property
    def description(self) -> Markup:
        return Markup(self.body()["description"])

    @cached_property
    def excerpt(self) -> Markup:
        # Lists need only this: no full representation. Kept on the view: an event is
        # listed on a dozen pages and markup's own cache is smaller than 10,000 events.
        return Markup(markup.render_excerpt(self.record.get("excerpt")))

    @cached_property
    def summary_text(self) -> str:
        """Plain text of the excerpt, else of the description (the page's meta tags)."""
        return markup.plain_text(str(self.excerpt or self.description))

    @cached_property
    def shows_excerpt(self) -> bool:
        """Whether the page shows the excerpt above the description: not when it only
        repeats the description's start up to a word's end (a closing ellipsis and
        punctuation aside), compared as plain text, spaces collapsed, ignoring case."""
        if not self.excerpt:
            return False
        # summary_text is the excerpt's plain text here (and made once for the feeds).
        lead = _ELLIPSIS.sub("", self.summary_text.casefold()).rstrip(" .,;:!?")
        if not lead:
            return False
        text = _plain_start(str(self.description), len(lead) + 1).casefold()
        return not (text.startswith(lead) and not text[len(lead):len(lead) + 1].isalnum())

    @property
    def zone(self) -> dt.tzinfo:
        return dates.zone(self.tzname)

    @property
    def abbr(self) -> str:
        return dates.abbreviation(self.start, self.zone, self.tzname)

    @property
    def end_abbr(self) -> str:
        return dates.abbreviation(self.end, self.zone, self.tzname)

    # The days and the <time> values below are asked for by every page and list item
    # that shows the event (a week view ~200 times): made once per view, whose times
    # do not change (an edit that moves them makes new views).
    @cached_property
    def first_day(self) -> dt.date:
        return self.start.date()

    @cached_property
    def iso_start(self) -> str:
        """The start as a <time> element's value: a date for an all-day event."""
        return _iso(self.start, self.all_day, self.zone)

    @cached_property
    def iso_end(self) -> str:
        return _iso(self.end, self.all_day, self.zone)

    @cached_property
    def last_day(self) -> dt.date:
        """Last local day the event occupies: an end at midnight, or before the end-of-day
        cutoff, counts for the day before."""
        if self.all_day:
            return self.end.date()
        shifted = self.end - self.cutoff
        last = shifted.date()
        if shifted.time() == dt.time(0):
            last -= dt.timedelta(days=1)
        return max(last, self.first_day)

    @property
    def multi_day(self) -> bool:
        return self.last_day > self.first_day

    def days(self) -> list[dt.date]:
        span = (self.last_day - self.first_day).days
        return [self.first_day + dt.timedelta(days=i) for i in range(span + 1)]


def _iso(moment: dt.datetime, all_day: bool, zone: dt.tzinfo) -> str:
    return moment.date().isoformat() if all_day else dates.offset_iso(moment, zone)


def _plain_start(html: str, length: int) -> str:
    """Plain text of the start of an HTML fragment, `length` characters at least if it
    has them. Only as much HTML as needed is read: the plain text of a whole
    description costs a tenth of a millisecond, 1.5 s of CPU at 10,000 events."""
    cut = 2 * length + 200
    while cut < len(html):
        head = html[:cut]
        if head.rfind("<") > head.rfind(">"):
            head = head[:head.rfind("<")]  # not within a tag (an entity cut in two
            # leaves a few characters at the end, as may a ">" in an attribute: the margin)
        text = markup.plain_text(head)
        if len(text) >= length + 40:
            return text
        cut *= 2
    return markup.plain_text(html)


# (id(venue), with_name, territory) -> (venue, lines): a venue's address is asked
# four times by each of its events' pages and once by each .ics (thousands of events,
# a few dozen venues). Records are replaced, never changed, when their file changes:
# the record itself is compared, so a reused id() is no false hit.
_ADDRESSES: dict[tuple[int, bool, str | None], tuple[Record, list[str]]] = {}


def address_lines(venue: Record, with_name: bool = False,
                  territory: str | None = None) -> list[str]:
    """The venue's address in its country's order (addresses.py); a venue that names
    no country known there is taken to be in `territory` (the calendar's locale's)."""
    key = (id(venue), with_name, territory)
    found = _ADDRESSES.get(key)
    if found is None or found[0] is not venue:
        if len(_ADDRESSES) > 4096:  # edited venues in a long --watch session
            _ADDRESSES.clear()
        found = _ADDRESSES[key] = (venue, _address_lines(venue, with_name, territory))
    return list(found[1])


def _address_lines(venue: Record, with_name: bool, territory: str | None) -> list[str]:
    region = venue.get("stateprovince") or venue.get("state") or venue.get("province") or ""
    lines = [venue.name] if with_name else []
    lines += addresses.postal_lines(str(venue.get("address") or ""),
                                    str(venue.get("city") or ""), str(region),
                                    str(venue.get("zip") or ""),
                                    addresses.country_code(venue.get("country"), territory))
    if venue.get("country"):
        lines.append(str(venue.get("country")))
    return lines


def map_url(venue: Record, territory: str | None = None) -> str | None:
    """A map search for the venue's address (or its coordinates), None when unknown."""
    query = ", ".join(address_lines(venue, territory=territory))
    if not query and venue.get("geo_lat") is not None and venue.get("geo_lng") is not None:
        query = f"{venue.data['geo_lat']},{venue.data['geo_lng']}"
    if not query:
        return None
    return "https://www.google.com/maps/search/?api=1&query=" + quote(query)


class SiteModel:
    """Published records of one catalog at one moment, indexed for the pages."""

    def __init__(self, catalog: Catalog, rep: Representer, now: dt.datetime,
                 locale: str | None = None) -> None:
        self.catalog = catalog
        self.rep = rep
        # `locale` (build --locale) stands in for calendar.yaml's, for every reader of
        # the settings (the week's first day among them).
        self.settings = dict(catalog.settings, locale=site_locale(catalog.settings, locale))
        self.regional = Regional(self.settings["locale"])
        self.territory = self.regional.locale.territory
        self.site_tz = str(self.settings.get("timezone") or "UTC")
        self.cutoff = multiday_cutoff(self.settings)[0]
        self.now_utc = now.astimezone(dt.UTC).replace(tzinfo=None)
        self.today = dates.from_utc(self.now_utc, dates.zone(self.site_tz)).date()
        self.bodies: dict[int, dict] = Recent()
        self._parents: dict[int, list[Record]] = {}
        self._children: dict[int, list[Record]] = {}
        self._upcoming: dict[int, list[EventView]] = {}
        self._upcoming_at = self.now_utc
        # Series id -> (now, its upcoming dates): asked twice by each of its pages.
        self._dates: dict[int, tuple[dt.datetime, list[EventView]]] = {}
        self.deps: dict[int, tuple[int, ...]] = {}  # event id -> ids its page shows
        self._listed_keys: list[tuple[dt.datetime, dt.datetime, int]] | None = None
        self.api_rep: Representer | None = None  # set by the builder for snapshots
        self.api_bodies: dict[int, dict] = Recent()
        # JSON bytes, for the by-id and by-slug files; the recent ones (memo.Recent)
        self.snapshots: dict[int, bytes] = Recent()
        self.venues = self._published("venues")
        self.organizers = self._published("organizers")
        self.categories = sorted(catalog.all("categories"), key=_by_name)
        self.tags = sorted(catalog.all("tags"), key=_by_name)
        # Single events and series: one page, .ics and snapshot each.
        self.events = sorted((self._event(r) for r in self._published("events")),
                             key=lambda e: (e.start_utc, e.end_utc, e.id))
        # Series id -> its occurrences within the horizon, cancelled ones left out (as
        # Events Calendar Pro does): each has a page, and lists show them, not the series.
        self.occurrences: dict[int, list[EventView]] = {
            e.id: self._occurrences(e) for e in self.events if e.record.get("recurrence")}
        listed = [e for e in self.events if e.id not in self.occurrences]
        listed += [o for found in self.occurrences.values() for o in found]
        self.listed = sorted((e for e in listed if not e.record.get("hide_from_listings")),
                             key=lambda e: (e.start_utc, e.end_utc, e.id))
        # Upcoming: still running or yet to start (the plugin's end >= now).
        self.upcoming = [e for e in self.listed if e.end_utc >= self.now_utc]
        self.past = sorted((e for e in self.listed if e.end_utc < self.now_utc),
                           key=lambda e: (e.start_utc, e.id), reverse=True)
        self.by_day: dict[dt.date, list[EventView]] = defaultdict(list)
        for event in self.listed:
            for day in event.days():
                self.by_day[day].append(event)
        self.event_days = sorted(self.by_day)
        self._by_link: dict[tuple[str, str], list[EventView]] = defaultdict(list)
        for event in self.listed:
            for collection, records in (("venues", [event.venue] if event.venue else []),
                                        ("organizers", event.organizers),
                                        ("categories", event.categories),
                                        ("tags", event.tags)):
                for record in records:
                    self._by_link[(collection, record.slug)].append(event)

    # -- building ------------------------------------------------------------
    def _published(self, collection: str) -> list[Record]:
        return sorted((r for r in self.catalog.all(collection) if r.status == PUBLISHED),
                      key=_by_name if collection != "events" else lambda r: r.id)

    def _visible(self, collection: str, slugs: object) -> list[Record]:
        # The representation's rule (an anonymous reader's), so a page, its .ics and
        # its JSON-LD and snapshot show the same linked records.
        return self.rep.linked(collection, slugs)

    def _event(self, record: Record) -> EventView:
        tzname = str(record.get("timezone") or self.site_tz)
        zone = dates.zone(tzname)
        start, end = record.data["start_date"], record.data["end_date"]
        venues = self._visible("venues", record.get("venue"))
        return EventView(
            record=record, tzname=tzname, start=start, end=end,
            start_utc=dates.to_utc(start, zone), end_utc=dates.to_utc(end, zone),
            all_day=bool(record.get("all_day")), path=self.page_of(record),
            venue=venues[0] if venues else None,
            organizers=self._visible("organizers", record.get("organizer")),
            categories=sorted(self._visible("categories", record.get("categories")),
                              key=_by_name),
            tags=sorted(self._visible("tags", record.get("tags")), key=_by_name),
            body=lambda: self.body(record), cutoff=self.cutoff)

    def _occurrences(self, series: EventView) -> list[EventView]:
        found = []
        zone = series.zone
        for item in occurrences.numbered(series.record, self.settings, self.today):
            record = occurrences.as_record(item)
            start, end = record.data["start_date"], record.data["end_date"]
            # Organizers and terms belong to the series; a change may name a venue.
            venue = series.venue
            if "venue" in item.occurrence.overrides:
                venues = self._visible("venues", record.get("venue"))
                venue = venues[0] if venues else None
            found.append(EventView(
                record=record, tzname=series.tzname, start=start, end=end,
                start_utc=dates.to_utc(start, zone), end_utc=dates.to_utc(end, zone),
                all_day=series.all_day, path=self.page_of(record), venue=venue,
                organizers=series.organizers, categories=series.categories,
                tags=series.tags, body=lambda record=record: self.body(record),
                series=series, cutoff=self.cutoff))
        return sorted(found, key=lambda e: (e.start_utc, e.end_utc, e.id))

    def horizon_year(self, event: EventView) -> int:
        """The last year an endless series' dates are listed in (occurrences.numbered)."""
        return recurrence_horizon(self.settings, max(self.today, event.start.date())).year

    def upcoming_dates(self, event: EventView) -> list[EventView]:
        """The occurrences of the event's series still to come (none for a single event)."""
        series = event.series or event
        found = self._dates.get(series.id)
        if found is None or found[0] != self.now_utc:  # "now" moves under --watch
            found = self._dates[series.id] = (self.now_utc, [
                o for o in self.occurrences.get(series.id, ()) if o.end_utc >= self.now_utc])
        return found[1]

    def refresh_event(self, view: EventView, record: Record) -> None:
        """A new version of an event that stays where it was (only its text changed)."""
        view.record = record
        for name in ("title", "title_text", "excerpt", "summary_text", "shows_excerpt"):
            view.__dict__.pop(name, None)
        view.body = lambda: self.body(record)
        view.items.clear()
        view.kept_item = None
        for cache in (self.bodies, self.api_bodies, self.snapshots):
            cache.pop(record.id, None)

    def snapshot_body(self, record: Record) -> dict:
        """The representation as the live API builds it (its own permalink base)."""
        found = self.api_bodies.get(record.id)
        if found is None:
            rep = self.api_rep or self.rep
            found = self.api_bodies[record.id] = rep.represent(record, single=True)
        return found

    def body(self, record: Record) -> dict:
        """What pages read of the single-read representation, once per build: the
        snapshot's, with the members that hold the permalink base made with the page's
        (pages read `image` and `url`; the rest, HTML and dates, is base-free). Half
        the cost of a second representation per event."""
        found = self.bodies.get(record.id)
        if found is None:
            found = self.snapshot_body(record)
            if self.api_rep is not None and self.api_rep.site_url != self.rep.site_url:
                found = {**found, "url": self.rep.url(record),
                         "image": self.rep.image(record.get("image"))}
                del found["json_ld"]  # its URLs are the API's: pages make their own
            self.bodies[record.id] = found
        return found

    # -- lookups ---------------------------------------------------------------
    def page_of(self, record: Record) -> str:
        """The page of a record, from the same permalink the API reports as `url`."""
        return paths.page(self.rep.url(record)[len(self.rep.site_url):])

    def children(self, category: Record) -> list[Record]:
        # Asked by every page of a category and its parents': once per build each.
        found = self._children.get(category.id)
        if found is None:
            found = self._children[category.id] = sorted(
                (r for r in self.catalog.linked("categories", category.slug)
                 if r.collection == "categories"), key=_by_name)
        return found

    def descendants(self, category: Record) -> list[Record]:
        seen: dict[str, Record] = {}
        stack = list(self.children(category))
        while stack:
            child = stack.pop()
            if child.slug not in seen and child.slug != category.slug:
                seen[child.slug] = child
                stack.extend(self.children(child))
        return sorted(seen.values(), key=_by_name)

    def parents(self, category: Record) -> list[Record]:
        # Asked for every category of every event while planning: once per build each.
        found = self._parents.get(category.id)
        if found is None:
            found = self._parents[category.id] = self._parent_chain(category)
        return found

    def _parent_chain(self, category: Record) -> list[Record]:
        chain: list[Record] = []
        parent = self.catalog.by_slug("categories", category.get("parent") or "")
        while parent is not None and parent not in chain and parent is not category:
            chain.insert(0, parent)
            parent = self.catalog.by_slug("categories", parent.get("parent") or "")
        return chain

    def events_of(self, record: Record) -> list[EventView]:
        """Listed events linked to a venue, organizer, tag, or a category or its children."""
        found = list(self._by_link.get((record.collection, record.slug), []))
        if record.collection == "categories":
            for child in self.descendants(record):
                found.extend(self._by_link.get(("categories", child.slug), []))
            found = sorted(set(found), key=lambda e: (e.start_utc, e.end_utc, e.id))
        return found

    def upcoming_of(self, record: Record) -> list[EventView]:
        # Asked for a record's pages and its feed; "now" moves between --watch rebuilds.
        if self._upcoming_at != self.now_utc:
            self._upcoming = {}
            self._upcoming_at = self.now_utc
        # Series id -> (now, its upcoming dates): asked twice by each of its pages.
        self._dates: dict[int, tuple[dt.datetime, list[EventView]]] = {}
        found = self._upcoming.get(record.id)
        if found is None:
            found = self._upcoming[record.id] = [e for e in self.events_of(record)
                                                 if e.end_utc >= self.now_utc]
        return found

    def month_range(self) -> tuple[dt.date, dt.date]:
        """First days of the first and last month to render: all events and today."""
        days = [self.today] + ([self.event_days[0], self.event_days[-1]]
                               if self.event_days else [])
        low, high = min(days), max(days)
        return low.replace(day=1), high.replace(day=1)

    def neighbour_days(self, day: dt.date) -> tuple[dt.date | None, dt.date | None]:
        i = bisect_left(self.event_days, day)
        before = self.event_days[i - 1] if i > 0 else None
        j = i + 1 if i < len(self.event_days) and self.event_days[i] == day else i
        after = self.event_days[j] if j < len(self.event_days) else None
        return before, after

    def neighbours(self, event: EventView) -> tuple[EventView | None, EventView | None]:
        """The listed events just before and after this one, in the lists' order (start,
        end, id). A hidden event is in no list: it gets the listed events around it."""
        if self._listed_keys is None:
            self._listed_keys = [(e.start_utc, e.end_utc, e.id) for e in self.listed]
        keys, listed = self._listed_keys, self.listed
        key = (event.start_utc, event.end_utc, event.id)
        i = bisect_left(keys, key)
        after = i + 1 if i < len(keys) and keys[i] == key else i
        # A series' page skips its own occurrences (its first date would be "next");
        # an occurrence's page walks the lists, its series' other dates included.
        own = event.id if event.id in self.occurrences else None
        before = next((listed[j] for j in range(i - 1, -1, -1)
                       if listed[j].source_id != own), None)
        later = next((listed[j] for j in range(after, len(listed))
                      if listed[j].source_id != own), None)
        return before, later

    def breadcrumb_categories(self, event: EventView) -> list[Record]:
        """The event's deepest category (first by name among equals) and its parents,
        outermost first: Music, Classical."""
        if not event.categories:
            return []
        deepest = max(event.categories, key=lambda c: len(self.parents(c)))
        return [*self.parents(deepest), deepest]

    def cost_text(self, event: EventView) -> Markup:
        """The cost in the event's currency: its code's own symbol ("CA$") where that
        differs from the calendar's currency, else the event's or calendar's symbol."""
        record = event.record
        symbol = record.get("currency_symbol") or self.settings.get("currency_symbol", "$")
        position = record.get("currency_position") or self.settings.get(
            "currency_position", "prefix")
        foreign = cost.foreign_symbol(record.get("currency_code"),
                                      self.settings.get("currency_code"))
        code = str(record.get("currency_code") or self.settings.get("currency_code") or "")
        return Markup(self.regional.cost(record.get("cost"), code, str(symbol), str(position),
                                         foreign))

    def image_url(self, value: object) -> str | None:
        """Remote images as they are; local media as a site path (copied by the build)."""
        if not value:
            return None
        return str(value)


def _by_name(record: Record) -> tuple[str, int]:
    return record.name.lower(), record.id
