"""The JSON representation of records, exactly as the plugin shapes it.

Both the HTTP interface and the static builder call these functions, so a JSON
snapshot is byte for byte the live response. The same code writes the schema.org
JSON-LD of the site's event pages.

A representation is made for one reader: an event embeds the venues and organizers it
links to only when that reader may read them on their own (`Representer.linked`, the
one place that decides). The default reader is anonymous, which is what every static
output is made for; the HTTP interface passes the requesting user's `may_read`.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import struct
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from ..model import cost, dates, markup, recurrence
from ..model.records import Record, stateprovince
from ..store import firstseen
from . import occurrences
from .catalog import Catalog
from .policy import readable_by_anyone

_HIDDEN = ("draft", "pending", "future", "trash", "private")


def dumps(body: object) -> str:
    """WordPress's JSON: ASCII with \\uXXXX escapes and escaped slashes."""
    return json.dumps(body, ensure_ascii=True).replace("/", "\\/")


def dumps_joined(body: dict, name: str, texts: list[str]) -> str:
    """`dumps(body)` where `body[name]` is a list whose items' `dumps` are `texts`:
    the items' texts are joined, not serialized again. The same bytes, as `json.dumps`
    writes a dict as `{"key": value, ...}` and a list as `[item, ...]` (its default
    separators), and the slashes' escape is made character by character."""
    parts = [f"{dumps(key)}: " + ("[" + ", ".join(texts) + "]" if key == name else dumps(value))
             for key, value in body.items()]
    return "{" + ", ".join(parts) + "}"


class Representer:
    def __init__(self, catalog: Catalog, site_url: str, rest_root: str,
                 visible: Callable[[Record], bool] = readable_by_anyone) -> None:
        self.catalog = catalog
        # May the reader read this record on its own? Decides what events embed.
        self.visible = visible
        self.site_url = site_url.rstrip("/") + "/"
        self.rest_root = rest_root.rstrip("/")
        parts = urlsplit(self.site_url)
        self.global_origin = (parts.hostname or "") + parts.path.rstrip("/")

    @property
    def settings(self) -> dict:
        return self.catalog.settings

    def linked(self, collection: str, slugs: object) -> list[Record]:
        """The records of `collection` named by `slugs` that the reader may see. A
        hidden venue is shown as an event without a venue (`"venue": []`, no JSON-LD
        `location`); hidden organizers are left out of the list."""
        return [r for r in self.catalog.resolve(collection, slugs) if self.visible(r)]

    # -- shared members --------------------------------------------------------
    def url(self, record: Record) -> str:
        if record.resource.is_term:
            return self._term_url(record)
        if record.status in _HIDDEN:
            return f"{self.site_url}?post_type={record.resource.post_type}&p={record.id}"
        if record.data.get("original_start") is not None:  # an occurrence: Pro's form
            day = self._occurrence_day(record)
            return f"{self.site_url}{record.resource.permalink}/{record.slug}/{day}/"
        return f"{self.site_url}{record.resource.permalink}/{record.slug}/"

    def _occurrence_day(self, record: Record) -> str:
        """The last part of an occurrence's URL: its day (`2027-03-04`); a later
        occurrence of the series on the same day adds its time (`2027-03-04-1930`, then
        `-2`, `-3` within one minute). Cancelled dates keep their place, as in ids, so
        cancelling a matinee moves no other date's URL (docs/recurring-events.md)."""
        start = record.data["start_date"]
        series = self.catalog.get(occurrences.series_id(record), "events")
        same_day = (_same_day(series, start.date(), self.settings)
                    if series is not None and series.data.get("recurrence") else [])
        place = next((i for i, o in enumerate(same_day)
                      if o.original == record.data["original_start"]), 0)
        if place == 0:
            return start.date().isoformat()
        clock = f"{start:%H%M}"
        twins = sum(1 for o in same_day[1:place] if f"{o.start:%H%M}" == clock)
        return f"{start:%Y-%m-%d}-{clock}" + (f"-{twins + 1}" if twins else "")

    def rest_url(self, record: Record) -> str:
        return f"{self.rest_root}/{record.collection}/{record.id}"

    def _global(self, record: Record) -> dict:
        gid = f"{self.global_origin}?id={record.id}"
        return {"global_id": gid, "global_id_lineage": [gid]}

    def published(self, record: Record, site_zone: dt.tzinfo) -> dt.datetime:
        """`date`, by default the file's first commit (content-format.md)."""
        return (record.get("date")
                or firstseen.of(self.catalog.tree.root).local(record.path, site_zone)
                or record.get("modified") or dt.datetime(1970, 1, 1))

    def _site_zone(self, settings: dict) -> dt.tzinfo:
        return dates.zone(str(settings.get("timezone") or "UTC"))

    def _post_head(self, record: Record, site_zone: dt.tzinfo, date: dt.datetime,
                   url: str) -> dict:
        """The members after `id` that posts share; `date` is `published(record)`, `url`
        the record's."""
        modified = record.get("modified") or date
        draft = record.status in ("draft", "pending") and not record.get("date")
        return {
            "author": str(record.get("author", 0)),
            "status": record.status,
            "date": dates.fmt(date),
            "date_utc": "0000-00-00 00:00:00" if draft else dates.fmt(
                dates.to_utc(date, site_zone)),
            "modified": dates.fmt(modified),
            "modified_utc": dates.fmt(dates.to_utc(modified, site_zone)),
            "url": url,
        }

    def image(self, value: str | None) -> dict | bool:
        if not value:
            return False
        if value.startswith(("http://", "https://")):
            extension = Path(urlsplit(value).path).suffix.lstrip(".").lower()
            return {"url": value, "id": 0, "extension": extension}
        body: dict = {"url": self.site_url + value, "id": 0,
                      "extension": Path(value).suffix.lstrip(".").lower()}
        path = self.catalog.tree.media_file(value)
        if path is None:  # missing, or not a file we may read (a symlink)
            return body
        try:
            stat = path.stat()
        except OSError:
            return body
        width, height = _image_size(str(path), stat.st_mtime_ns)
        if width:
            body.update(width=width, height=height)
        body["filesize"] = stat.st_size
        return body

    # -- events -------------------------------------------------------------
    def event(self, record: Record, single: bool = False) -> dict:
        settings = self.settings  # a catalog version's: read once, not per member
        data = record.data
        tzname = str(data.get("timezone") or settings.get("timezone") or "UTC")
        zone = dates.zone(tzname)
        start, end = data["start_date"], data["end_date"]
        utc_start, utc_end = dates.to_utc(start, zone), dates.to_utc(end, zone)
        # Each date formatted once: its details are slices of its text.
        start_text, start_details = dates.fmt_details(start)
        end_text, end_details = dates.fmt_details(end)
        utc_start_text, utc_start_details = dates.fmt_details(utc_start)
        utc_end_text, utc_end_details = dates.fmt_details(utc_end)
        stored = record.get("cost")
        symbol = record.get("currency_symbol") or settings.get("currency_symbol", "$")
        position = record.get("currency_position") or settings.get(
            "currency_position", "prefix")
        website = data.get("website")
        url = self.url(record)
        site_zone = self._site_zone(settings)
        published = self.published(record, site_zone)
        venues = self.linked("venues", record.get("venue"))
        organizers = self.linked("organizers", record.get("organizer"))
        body = {
            "id": record.id, **self._global(record),
            **self._post_head(record, site_zone, published, url),
            "rest_url": self.rest_url(record),
            "title": markup.render_title(record.name),
            "description": markup.render_html(record.get("description")),
            "excerpt": markup.render_excerpt(record.get("excerpt")),
            "slug": record.slug,
            "image": self.image(record.get("image")),
            "all_day": bool(record.get("all_day", False)),
            "start_date": start_text,
            "start_date_details": start_details,
            "end_date": end_text,
            "end_date_details": end_details,
            "utc_start_date": utc_start_text,
            "utc_start_date_details": utc_start_details,
            "utc_end_date": utc_end_text,
            "utc_end_date_details": utc_end_details,
            "timezone": tzname,
            "timezone_abbr": dates.abbreviation(start, zone, tzname),
            "cost": cost.format_cost(stored, symbol, position),
            "cost_details": cost.cost_details(stored, str(record.get("currency_code") or "")),
            "website": url if website is None else html.escape(website),
            "show_map": bool(record.get("show_map", False)),
            "show_map_link": bool(record.get("show_map_link", False)),
            "hide_from_listings": bool(record.get("hide_from_listings", False)),
            "sticky": bool(record.get("sticky", False)),
            "featured": bool(record.get("featured", False)),
            "categories": self._embedded_terms("categories", record.get("categories")),
            "tags": self._embedded_terms("tags", record.get("tags")),
            "venue": (self.venue(venues[0], single) if len(venues) == 1 else
                      [self.venue(v, single) for v in venues]),
            "organizer": [self.organizer(o, single) for o in organizers],
            "custom_fields": [],
        }
        # Fields of ours the plugin lacks: only when set, so other events keep its shape.
        for name in ("online_url", "performer", "event_status", "event_status_reason"):
            if record.get(name):
                body[name] = data[name]
        if record.get("previous_start_date") is not None:
            body["previous_start_date"] = dates.fmt(data["previous_start_date"])
        if data.get("recurrence"):
            body.update(self._recurring(record))
        if single:
            when = _When(zone, site_zone, published, (start_text, start - utc_start),
                         (end_text, end - utc_end))
            body["json_ld"] = self._event_ld(record, body, url, when, venues, organizers)
        return body

    def _recurring(self, record: Record) -> dict:
        """Members of a recurring event and its occurrences (docs/recurring-events.md);
        single events have none of them, so their bodies stay as the plugin's."""
        data = record.data
        out: dict = {"is_recurring": True,
                     "recurrence": recurrence.as_json(data["recurrence"]),
                     "series_id": int(data.get("series_id") or record.id)}
        original = data.get("original_start")
        if original is not None:
            out["original_start_date"] = dates.fmt(original)
        return out

    # -- venues and organizers ---------------------------------------------------
    def _linked_post(self, record: Record, fields: tuple[str, ...]) -> dict:
        site_zone = self._site_zone(self.settings)
        head = self._post_head(record, site_zone, self.published(record, site_zone),
                               self.url(record))
        body = {"id": record.id, **head,
                record.resource.title_field: markup.render_title(record.name),
                "description": markup.render_html(record.get("description")),
                "excerpt": markup.render_excerpt(record.get("excerpt")),
                "slug": record.slug,
                "image": self.image(record.get("image"))}
        for name in fields:
            body[name] = stateprovince(record.data) if name == "stateprovince" else (
                record.get(name, ""))
        # The plugin drops every empty member of venues and organizers.
        return {k: v for k, v in body.items() if v not in ("", "0", False, 0, [], None)
                or k == "id"}

    def venue(self, record: Record, single: bool = False) -> dict:
        body = self._linked_post(record, ("address", "city", "country", "province", "state",
                                          "zip", "phone", "website", "stateprovince"))
        if record.get("geo_lat") and record.get("geo_lng"):
            body["geo_lat"] = record.data["geo_lat"]
            body["geo_lng"] = record.data["geo_lng"]
        if single and record.status == "publish":
            body["json_ld"] = self.venue_json_ld(record)
        body["show_map"] = bool(record.get("show_map", True))
        body["show_map_link"] = bool(record.get("show_map_link", True))
        body.update(self._global(record))
        return body

    def organizer(self, record: Record, single: bool = False) -> dict:
        body = self._linked_post(record, ("phone", "website", "email"))
        if single and record.status == "publish":
            body["json_ld"] = self.organizer_json_ld(record)
        body.update(self._global(record))
        return body

    # -- terms ---------------------------------------------------------------
    def _term_url(self, record: Record) -> str:
        chain = [record.slug]
        if record.resource.hierarchical:
            parent = self.catalog.by_slug(record.collection, record.get("parent") or "")
            while parent is not None and parent.slug not in chain:
                chain.insert(0, parent.slug)
                parent = self.catalog.by_slug(record.collection, parent.get("parent") or "")
        return f"{self.site_url}{record.resource.permalink}/{'/'.join(chain)}/"

    def _term_links(self, record: Record) -> tuple[int, dict]:
        parent = self.catalog.by_slug("categories", record.get("parent") or "") if (
            record.collection == "categories") else None
        urls = {"self": self.rest_url(record),
                "collection": f"{self.rest_root}/{record.collection}"}
        if parent is not None:
            urls["up"] = self.rest_url(parent)
        return (parent.id if parent else 0), urls

    def _embedded_terms(self, collection: str, slugs: object) -> list[dict]:
        terms = sorted(self.linked(collection, slugs), key=lambda t: t.name.lower())
        out = []
        for term in terms:
            parent_id, urls = self._term_links(term)
            out.append({"name": term.name, "slug": term.slug, "term_group": 0,
                        "term_taxonomy_id": term.id, "taxonomy": term.resource.taxonomy,
                        "description": term.get("description", ""), "parent": parent_id,
                        "count": self.catalog.term_count(term), "filter": "raw",
                        "id": term.id, "urls": urls})
        return out

    def term(self, record: Record, single: bool = False, allow: tuple[str, ...] = ("GET",)
             ) -> dict:
        parent_id, urls = self._term_links(record)
        body: dict = {"id": record.id, "count": self.catalog.term_count(record),
                      "description": record.get("description", ""), "name": record.name,
                      "slug": record.slug, "taxonomy": record.resource.taxonomy}
        if record.collection == "categories":
            body["parent"] = parent_id
        body.update(meta=[], url=self.url(record), urls=urls)
        if single:
            body["_links"] = self._wp_links(record, parent_id, allow)
        return body

    def _wp_links(self, record: Record, parent_id: int, allow: tuple[str, ...]) -> dict:
        wp = self.site_url + "wp-json/wp/v2/"
        base = "tags" if record.collection == "tags" else "tribe_events_cat"
        query = "tags" if record.collection == "tags" else "tribe_events_cat"
        links: dict = {
            "self": [{"href": f"{wp}{base}/{record.id}", "targetHints": {"allow": list(allow)}}],
            "collection": [{"href": f"{wp}{base}"}],
            "about": [{"href": f"{wp}taxonomies/{record.resource.taxonomy}"}],
        }
        if parent_id:
            links["up"] = [{"embeddable": True, "href": f"{wp}{base}/{parent_id}"}]
        links["wp:post_type"] = [{"href": f"{wp}tribe_events?{query}={record.id}"}]
        links["curies"] = [{"name": "wp", "href": "https://api.w.org/{rel}", "templated": True}]
        return links

    def represent(self, record: Record, single: bool = False) -> dict:
        if record.collection == "events":
            return self.event(record, single)
        if record.collection == "venues":
            return self.venue(record, single)
        if record.collection == "organizers":
            return self.organizer(record, single)
        return self.term(record, single)

    # -- schema.org JSON-LD --------------------------------------------------
    def venue_json_ld(self, record: Record) -> dict:
        body = {"@type": "Place", "name": record.name,
                "description": markup.plain_text(markup.render_html(record.get("description"))),
                "url": "",
                "address": {"@type": "PostalAddress",
                            "streetAddress": record.get("address", ""),
                            "addressLocality": record.get("city", ""),
                            "addressRegion": stateprovince(record.data),
                            "postalCode": record.get("zip", ""),
                            "addressCountry": record.get("country", "")},
                "telephone": record.get("phone", ""),
                "sameAs": record.get("website", "")}
        if record.get("geo_lat") is not None and record.get("geo_lng") is not None:
            body["geo"] = {"@type": "GeoCoordinates", "latitude": record.data["geo_lat"],
                           "longitude": record.data["geo_lng"]}
        return body

    def organizer_json_ld(self, record: Record) -> dict:
        email = str(record.get("email", ""))
        return {"@type": "Person", "name": record.name,
                "description": markup.plain_text(markup.render_html(record.get("description"))),
                "url": record.get("website", ""), "telephone": record.get("phone", ""),
                # Entity-encoded against address harvesters, deterministically.
                "email": "".join(f"&#{ord(c)};" for c in email),
                "sameAs": record.get("website", "")}

    def event_json_ld(self, record: Record, body: dict | None = None) -> dict:
        """The event as schema.org data for search engines: the members Google's Event
        rich results require and recommend, none of the plugin's placeholders (empty
        strings, `"performer": "Organization"`, `"availability": "inStock"`). Pages
        print it; single reads carry it as `json_ld` (docs/content-format.md)."""
        body = body or self.event(record)
        zone = dates.zone(body["timezone"])
        site_zone = self._site_zone(self.settings)
        start, end = record.data["start_date"], record.data["end_date"]
        when = _When(zone, site_zone, self.published(record, site_zone),
                     (dates.fmt(start), start - dates.to_utc(start, zone)),
                     (dates.fmt(end), end - dates.to_utc(end, zone)))
        return self._event_ld(record, body, self.url(record), when,
                              self.linked("venues", record.get("venue")),
                              self.linked("organizers", record.get("organizer")))

    def _event_ld(self, record: Record, body: dict, url: str, when: _When,
                  venues: list[Record], organizers: list[Record]) -> dict:
        """`event_json_ld` from what the event's representation has worked out."""
        all_day = body["all_day"]
        ld: dict = {"@context": "http://schema.org", "@type": "Event",
                    "name": markup.plain_text(body["title"])}
        summary = markup.plain_text(body["excerpt"] or body["description"])
        if summary:
            ld["description"] = summary
        if body["image"]:
            ld["image"] = body["image"]["url"]
        online = record.get("online_url")
        mode = "Mixed" if venues and online else "Online" if online else "Offline"
        ld.update({
            "url": url,
            "eventAttendanceMode": f"https://schema.org/{mode}EventAttendanceMode",
            "eventStatus": _schema_status(record),
            "startDate": (record.data["start_date"].date().isoformat() if all_day
                          else dates.iso_with_offset(*when.start)),
            "endDate": (record.data["end_date"].date().isoformat() if all_day
                        else dates.iso_with_offset(*when.end)),
        })
        moved = record.get("previous_start_date")
        if moved is not None:
            ld["previousStartDate"] = (moved.date().isoformat() if all_day
                                       else dates.offset_iso(moved, when.zone))
        location = self._location_ld(record, venues)
        if location:
            ld["location"] = location
        if organizers:
            ld["organizer"] = self._organizers_ld(organizers)
        offer = self._offer_ld(record, url, when)
        if offer:
            ld["offers"] = offer
        if record.get("performer"):
            kind = ("PerformingGroup" if self.settings.get("performer_type") == "PerformingGroup"
                    else "Person")
            ld["performer"] = _one_or_list([{"@type": kind, "name": name}
                                            for name in record.data["performer"]])
        return ld

    def rebased_event_json_ld(self, record: Record, body: dict, ld: dict) -> dict:
        """`event_json_ld(record, body)` from the event's JSON-LD `ld` that a representer
        for the same reader made with another permalink base (the live API's): the
        members holding this site's URLs made again, the rest (texts, dates, the offer's
        terms: base-free) kept. A static build's pages and snapshots differ so."""
        url = self.url(record)
        out = dict(ld)  # the members replaced, never changed in place: `ld` is shared
        out["url"] = url
        if "image" in out:
            out["image"] = body["image"]["url"]
        if "location" in out:
            out["location"] = self._location_ld(record, self.linked("venues",
                                                                    record.get("venue")))
        if "organizer" in out:
            out["organizer"] = self._organizers_ld(self.linked("organizers",
                                                               record.get("organizer")))
        if "offers" in out:
            out["offers"] = {**out["offers"], "url": url}
        return out

    def _location_ld(self, record: Record, venues: list[Record]) -> dict | list[dict] | None:
        places = [self._place_ld(venues[0])] if venues else []
        online = record.get("online_url")
        if online:
            places.append({"@type": "VirtualLocation", "url": online})
        return _one_or_list(places) if places else None

    def _organizers_ld(self, organizers: list[Record]) -> dict | list[dict]:
        return _one_or_list([self._organizer_ld(o) for o in organizers])

    def _place_ld(self, venue: Record) -> dict:
        place = _without_empty(self.venue_json_ld(venue))
        if venue.status == "publish":  # a reader allowed a draft venue gets no page link
            place["url"] = self.url(venue)
        return place

    def _organizer_ld(self, organizer: Record) -> dict:
        # An organization unless said otherwise (the plugin's "Person" is a guess too), its
        # e-mail as written (entities mean nothing inside a script element), and a URL
        # always: its website, else its page here.
        ld = _without_empty({**self.organizer_json_ld(organizer), "@type": "Organization",
                             "email": organizer.get("email", "")})
        if "url" not in ld and organizer.status == "publish":
            ld["url"] = self.url(organizer)
        return ld

    def _offer_ld(self, record: Record, url: str, when: _When) -> dict | None:
        prices = cost.price_range(record.get("cost"))
        if prices is None:
            return None
        low, high = prices
        offer: dict = ({"@type": "Offer", "price": low} if low == high else
                       {"@type": "AggregateOffer", "lowPrice": low, "highPrice": high})
        offer.update({
            "priceCurrency": record.get("currency_code") or self.settings.get(
                "currency_code", "USD"),
            "url": url,
            "availability": "https://schema.org/InStock",
            "validFrom": dates.offset_iso(when.published.replace(
                hour=0, minute=0, second=0), when.site_zone)})
        return offer


class _When(NamedTuple):
    """An event's times as its representation worked them out, for its JSON-LD."""
    zone: dt.tzinfo  # the event's
    site_zone: dt.tzinfo
    published: dt.datetime  # Representer.published
    start: tuple[str, dt.timedelta]  # dates.fmt text and UTC offset
    end: tuple[str, dt.timedelta]


def _schema_status(record: Record) -> str:
    """schema.org's eventStatus: the plugin's Event Status; a scheduled event that names
    its previous start date was moved (EventRescheduled, as Google reads it)."""
    status = record.get("event_status") or "scheduled"
    if status == "canceled":
        return "https://schema.org/EventCancelled"
    if status == "postponed":
        return "https://schema.org/EventPostponed"
    if record.get("previous_start_date") is not None:
        return "https://schema.org/EventRescheduled"
    return "https://schema.org/EventScheduled"


def _one_or_list(items: list[dict]) -> dict | list[dict]:
    """One value as an object (the plugin's shape), several as a list."""
    return items[0] if len(items) == 1 else items


def _without_empty(value: dict) -> dict:
    """A copy of a venue's or organizer's JSON-LD without its empty members."""
    out = {}
    for key, member in value.items():
        if isinstance(member, dict):
            member = _without_empty(member)
        if member not in ("", {}, None):
            out[key] = member
    return out


def _same_day(series: Record, day: dt.date, settings: dict) -> list[recurrence.Occurrence]:
    """The occurrences of a series starting on `day`, cancelled ones included, in order."""
    last = dt.datetime.combine(day, dt.time(23, 59, 59))
    cached = series.expansion  # set when the occurrence was listed (occurrences.expanded)
    if cached is not None and cached[0] >= last:
        found = cached[2]
    else:  # not expanded that far: only up to that day, and not kept
        zone = dates.zone(str(series.get("timezone") or settings.get("timezone") or "UTC"))
        found = recurrence.expand(series.data["recurrence"], series.data["start_date"],
                                  series.data["end_date"], last, zone)
    at = bisect_left(found, dt.datetime.combine(day, dt.time()), key=lambda o: o.start)
    same = []
    while at < len(found) and found[at].start.date() == day:  # no copy of the rest
        same.append(found[at])
        at += 1
    return same


@lru_cache(maxsize=1024)
def _image_size(path: str, _mtime: int) -> tuple[int, int]:
    """Width and height from a PNG, GIF or JPEG header; (0, 0) when unknown."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        return 0, 0
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return struct.unpack("<HH", head[6:10])
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker = head[i + 1]
            size = struct.unpack(">H", head[i + 2:i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", head[i + 5:i + 9])
                return width, height
            i += 2 + size
    return 0, 0
