"""Machine-readable site files: Atom feed, sitemap, robots.txt, assets and media."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

from ..model import dates, markup
from . import embeds, ical, paths
from .model import EventView, SiteModel
from .pages import Pages, event_deps, media_stamp
from .plan import Output, ids
from .render import STATIC_PREFIX, static_bytes, static_files

ATOM_ENTRIES = 50
# A month's or a day's events, a one-off export: not `calendar.ics`, which every
# folder uses for a feed to subscribe to.
PERIOD_ICS = "events.ics"
EMBEDDED = (paths.EMBED_LIST, paths.EMBED + "month/")  # pages for iframes, noindex


def _stamp(moment: dt.datetime, zone_name: str) -> str:
    return dates.to_utc(moment, dates.zone(zone_name)).strftime("%Y-%m-%dT%H:%M:%SZ")


def atom(pages: Pages) -> Output:
    model = pages.model
    events = _next_dates(model.upcoming)[:ATOM_ENTRIES]

    def render() -> bytes:
        entries = []
        for e in events:
            modified = e.record.get("modified") or e.record.get("date") or e.start
            published = e.record.get("date") or modified
            entries.append({
                "title": str(e.title), "url": pages.base_url + paths.folder(e.path),
                "updated": _stamp(modified, model.site_tz),
                "published": _stamp(published, model.site_tz),
                "summary": f"{markup.plain_text(str(e.title))}: "
                           f"{pages.env.globals['when'](e)}",
                "content": str(e.excerpt or e.description)})
        updated = max((x["updated"] for x in entries), default="1970-01-01T00:00:00Z")
        return pages.render("feed.xml", paths.ATOM, entries=entries, updated=updated,
                            feed_url=pages.base_url + paths.ATOM, home_url=pages.base_url)
    deps = tuple(i for e in events for i in (e.source_id, *ids((e.venue,))))
    return Output(paths.ATOM, deps, f"atom {[e.id for e in events]}", render, kind="feed")


def _next_dates(events: list[EventView]) -> list[EventView]:
    """The events with only the next date of each series: an entry announces an event
    (its page lists the other dates); a daily class would fill the feed otherwise."""
    seen: set[int] = set()
    found = []
    for e in events:
        if e.series is None or e.source_id not in seen:
            seen.add(e.source_id)
            found.append(e)
    return found


def sitemap(pages: Pages, outputs: list[Output]) -> Output:
    """Every HTML page a search engine should index, at its canonical address, with the
    event's last change where there is one. Left out: the 404, events hidden from
    listings (their pages say `noindex`) and the home page, whose canonical address is
    the first upcoming page's (Pages._list), listed itself; likewise the others below."""
    model = pages.model
    events = [*model.events, *(o for found in model.occurrences.values() for o in found)]
    lastmod = {e.path: e.record.get("modified") or e.record.get("date") for e in events}
    hidden = {e.path for e in events if e.record.get("hide_from_listings")}
    # Also left out: the views for iframes (`noindex`) and the current week's
    # address (its canonical is the week's own page, listed).
    hidden.add(paths.page(paths.WEEK))
    entries = [(pages.base_url + paths.folder(o.path),
                lastmod[o.path].date().isoformat() if lastmod.get(o.path) else "")
               for o in outputs if o.path.endswith(".html")
               and o.path not in (paths.NOT_FOUND, paths.HOME) and o.path not in hidden
               and not o.path.startswith(EMBEDDED)]

    def render() -> bytes:
        return pages.render("sitemap.xml", paths.SITEMAP, entries=entries)
    return Output(paths.SITEMAP, (), f"sitemap {entries}", render, kind="feed")


def robots(pages: Pages) -> Output:
    url = pages.base_url + paths.SITEMAP
    return Output(paths.ROBOTS, (), f"robots {url}",
                  lambda: pages.render("robots.txt", paths.ROBOTS, sitemap_url=url),
                  kind="feed")


def assets(pages: Pages) -> Iterator[Output]:
    for name in static_files(pages.env):
        target = paths.ASSETS + name[len(STATIC_PREFIX):]
        if name == embeds.SCRIPT:  # the component gets its words in every language
            words = embeds.script_words(pages.regional)
            yield Output(target, (), f"asset {words}",
                         lambda name=name, words=words: embeds.script(
                             static_bytes(pages.env, name), words), kind="asset")
            continue
        yield Output(target, (), "asset", lambda name=name: static_bytes(pages.env, name),
                     kind="asset")


def media(model: SiteModel) -> Iterator[Output]:
    """Local images of published records only: a draft's picture stays unpublished."""
    seen: set[str] = set()
    records = [e.record for e in model.events] + model.venues + model.organizers
    for record in records:
        image = record.get("image")
        if not image or "://" in str(image) or image in seen:
            continue
        seen.add(str(image))
        source = model.catalog.tree.media_file(str(image))
        if source is None:
            continue  # only regular files in media/: never what a symlink points at
        yield Output(str(image), (), f"media {media_stamp(model, image)}",
                     lambda source=source: source.read_bytes(), kind="media")


def date_ics(pages: Pages, host: str, title: str) -> Iterator[Output]:
    """Each date of a series as an .ics of its own, in its page's folder: its page
    offers this date alone beside the whole series (the series' .ics)."""
    model = pages.model

    def one(event: EventView) -> Output:
        url = pages.base_url + paths.folder(event.path)
        return Output(event.date_ics_path, event_deps(model, event), f"ics-date {host} {title}",
                      lambda: ical.feed([event], f"{title}: {event.title_text}",
                                        lambda e: ical.vevent(e, model, host, url, alone=True),
                                        model.site_tz), kind="ics")

    for found in model.occurrences.values():
        yield from map(one, found)


def period_ics(pages: Pages, host: str, title: str,
               vevent: Callable[[EventView], bytes]) -> Iterator[Output]:
    """A month's and a day's events as an .ics beside their page (the plugin's "Export
    .ics file" of those views, and what their `?ical=1` answers when served): every
    event of the period whatever the feeds' window, a repeating event's dates each
    alone (a series' rule would add dates outside the period)."""
    model = pages.model

    def one(event: EventView) -> bytes:
        if event.series is None:
            return vevent(event)
        url = pages.base_url + paths.folder(event.path)
        return ical.vevent(event, model, host, url, alone=True)

    def output(page: str, events: list[EventView], name: str) -> Output:
        return Output(paths.folder(page) + PERIOD_ICS,
                      tuple(d for e in events for d in event_deps(model, e)),
                      f"ics-period {host} {name} {[e.id for e in events]}",
                      lambda: ical.feed(events, name, one, model.site_tz), kind="ics-feed")

    months: dict[dt.date, dict[int, EventView]] = {}
    for day in model.event_days:
        events = model.by_day[day]
        yield output(paths.day(day), events, f"{title}: {day.isoformat()}")
        first = day.replace(day=1)
        months.setdefault(first, {}).update((e.id, e) for e in events)
    for first, found in sorted(months.items()):
        events = sorted(found.values(), key=lambda e: (e.start_utc, e.end_utc, e.id))
        yield output(paths.month(first), events, f"{title}: {first:%Y-%m}")


def series_once(events: list[EventView]) -> list[EventView]:
    """The events with each occurrence replaced by its series, each series once:
    feeds carry a series as one VEVENT with its rule."""
    seen: set[int] = set()
    found = []
    for e in events:
        if e.series is None:
            found.append(e)
        elif e.series.id not in seen:
            seen.add(e.series.id)
            found.append(e.series)
    # In DTSTART order: a series whose first date has left the window comes first.
    return sorted(found, key=lambda e: (e.start_utc, e.end_utc, e.id))
