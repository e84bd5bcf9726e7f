"""The `tec/v1` representation of events, venues and organizers: WordPress core's post
shape (`title.rendered`, `content.rendered`, `excerpt`, ...) merged with the plugin's
model properties, in the member order of the plugin's test snapshots (spec tec-v1 §9).

It is a second representation of the same records as `represent.py`, and it leans on
it for what both share: permalinks, publication dates, the linked records a reader may
see (`Representer.linked`), cost formatting.
"""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote_plus

from ..model import cost, dates, markup
from ..model.records import Record, stateprovince
from .represent import Representer

EXCERPT_WORDS = 55  # WordPress's excerpt_length
_ISO = "%Y-%m-%dT%H:%M:%S"


def iso(value: dt.datetime) -> str:
    """WordPress's post dates in the REST API: no zone, a `T` between."""
    return value.strftime(_ISO)


def _php_date(value: dt.datetime) -> dict:
    """A PHP DateTime as json_encode writes it, its zone given by name."""
    return {"date": value.strftime("%Y-%m-%d %H:%M:%S.000000"), "timezone_type": 3,
            "timezone": str(getattr(value.tzinfo, "key", None) or value.tzname() or "UTC")}


def _day(value: dt.datetime, now: dt.datetime) -> str:
    """`F j, Y`, without the year in the current year (TEC's schedule details)."""
    text = f"{value:%B} {value.day}"
    return text if value.year == now.year else f"{text}, {value.year}"


def _time(value: dt.datetime) -> str:
    """`g:i a`."""
    hour = value.hour % 12 or 12
    return f"{hour}:{value:%M} {'am' if value.hour < 12 else 'pm'}"


def _span(css: str, text: str) -> str:
    return f'<span class="{css}">{text}</span>'


def schedule_details(start: dt.datetime, end: dt.datetime, all_day: bool,
                     now: dt.datetime, short: bool = False) -> str:
    """`tribe_events_event_schedule_details`: the dates as the plugin prints them."""
    same_day = start.date() == end.date()
    if all_day:
        first = _span("tribe-event-date-start", _day(start, now))
        if same_day:
            return first
        return f"{first} - {_span('tribe-event-date-end', _day(end, now))}"
    if same_day:
        begin = _time(start) if short else f"{_day(start, now)} @ {_time(start)}"
        if start == end:
            return _span("tribe-event-date-start", begin)
        return (f"{_span('tribe-event-date-start', begin)} - "
                f"{_span('tribe-event-time', _time(end))}")
    return (f"{_span('tribe-event-date-start', f'{_day(start, now)} @ {_time(start)}')} - "
            f"{_span('tribe-event-date-end', f'{_day(end, now)} @ {_time(end)}')}")


def generated_excerpt(content_html: str) -> str:
    """WordPress's excerpt of a post without one: the first 55 words of its text."""
    words = markup.plain_text(content_html).split()
    if not words:
        return ""
    text = " ".join(words[:EXCERPT_WORDS])
    if len(words) > EXCERPT_WORDS:
        text += " [&hellip;]"
    return f"<p>{text}</p>\n"


def _rendered(html_text: str) -> str:
    """`wpautop` output ends with a newline after the last block."""
    return html_text + "\n" if html_text and not html_text.endswith("\n") else html_text


class TecRepresenter:
    """Shapes of `tec/v1` for one reader (what `rep.visible` lets it see)."""

    def __init__(self, rep: Representer, now: dt.datetime) -> None:
        self.rep = rep
        self.now = now  # aware: is_past, is_now and the year of schedule details

    @property
    def _site_zone(self) -> dt.tzinfo:
        return dates.zone(str(self.rep.settings.get("timezone") or "UTC"))

    def represent(self, record: Record) -> dict:
        if record.collection == "events":
            return self.event(record)
        if record.collection == "venues":
            return self.venue(record)
        return self.organizer(record)

    def post(self, record: Record) -> dict:
        """The members every post type shares, in WordPress's order."""
        zone = self._site_zone
        published = self.rep.published(record, zone)
        modified = record.get("modified") or published
        post_type = record.resource.post_type
        content = _rendered(markup.render_html(record.get("description")))
        excerpt = _rendered(markup.render_excerpt(record.get("excerpt")))
        return {
            "id": record.id,
            "date": iso(published),
            "date_gmt": iso(dates.to_utc(published, zone)),
            "guid": {"rendered": f"{self.rep.site_url}?post_type={post_type}&#038;"
                                 f"p={record.id}"},
            "modified": iso(modified),
            "modified_gmt": iso(dates.to_utc(modified, zone)),
            "slug": record.slug,
            "status": record.status,
            "type": post_type,
            "link": self.rep.url(record),
            "title": {"rendered": markup.render_title(record.name)},
            "content": {"rendered": content, "protected": False},
            "excerpt": {"rendered": excerpt or generated_excerpt(content), "protected": False},
            "author": int(record.get("author", 0) or 0),
            "featured_media": 0,
            "template": "",
        }

    # -- events ------------------------------------------------------------------
    def event(self, record: Record) -> dict:
        body = self.post(record)
        categories = self.rep.linked("categories", record.get("categories"))
        tags = self.rep.linked("tags", record.get("tags"))
        body["tags"] = [t.id for t in tags]
        body["tribe_events_cat"] = [c.id for c in categories]
        body["class_list"] = self._class_list(record, categories, tags)
        body.update(self._event_dates(record))
        symbol = record.get("currency_symbol") or self.rep.settings.get("currency_symbol", "$")
        position = record.get("currency_position") or self.rep.settings.get(
            "currency_position", "prefix")
        organizers = self.rep.linked("organizers", record.get("organizer"))
        body.update({
            "featured": bool(record.get("featured", False)),
            "sticky": bool(record.get("sticky", False)),
            "cost": cost.format_cost(record.get("cost"), symbol, position),
            "organizer_names": [o.name for o in organizers],
            "organizers": [self.organizer(o) for o in organizers],
            "venues": [self.venue(v) for v in self.rep.linked("venues", record.get("venue"))],
        })
        body.update(self._schedule(record))
        return body

    def _class_list(self, record: Record, categories: list[Record],
                    tags: list[Record]) -> list[str]:
        post_type = record.resource.post_type
        out = [f"post-{record.id}", post_type, f"type-{post_type}", f"status-{record.status}",
               "hentry"]
        out += [f"tag-{t.slug}" for t in tags]
        out += [f"tribe_events_cat-{c.slug}" for c in categories]
        return out

    def _zones(self, record: Record) -> tuple[str, dt.tzinfo]:
        name = str(record.get("timezone") or self.rep.settings.get("timezone") or "UTC")
        return name, dates.zone(name)

    def _event_dates(self, record: Record) -> dict:
        name, zone = self._zones(record)
        start, end = record.data["start_date"], record.data["end_date"]
        utc_start, utc_end = dates.to_utc(start, zone), dates.to_utc(end, zone)
        site = self._site_zone
        aware = {}
        for key, utc in (("start", utc_start), ("end", utc_end)):
            at_utc = utc.replace(tzinfo=dt.UTC)
            aware.update({key: at_utc.astimezone(zone), f"{key}_utc": at_utc,
                          f"{key}_site": at_utc.astimezone(site),
                          # The plugin's default: each event in its own zone.
                          f"{key}_display": at_utc.astimezone(zone)})
        order = ("start", "start_utc", "start_site", "start_display", "end", "end_utc",
                 "end_site", "end_display")
        span = (end.date() - start.date()).days + 1
        now_utc = self.now.astimezone(dt.UTC).replace(tzinfo=None)
        return {
            "start_date": dates.fmt(start), "start_date_utc": dates.fmt(utc_start),
            "end_date": dates.fmt(end), "end_date_utc": dates.fmt(utc_end),
            "dates": {k: _php_date(aware[k]) for k in order},
            "timezone": name,
            # A string in practice, as the plugin's model answers it.
            "duration": str(int((utc_end - utc_start).total_seconds())),
            "multiday": span if span > 1 else False,
            "is_past": utc_end < now_utc,
            "is_now": utc_start <= now_utc <= utc_end,
            "all_day": bool(record.get("all_day", False)),
            # Week-view members: null and empty outside a week view, as in any REST read.
            "starts_this_week": None, "ends_this_week": None, "this_week_duration": None,
            "happens_this_week": None, "displays_on": [],
        }

    def _schedule(self, record: Record) -> dict:
        _name, zone = self._zones(record)
        start, end = record.data["start_date"], record.data["end_date"]
        all_day = bool(record.get("all_day", False))
        now = self.now.astimezone(zone)
        return {"schedule_details": schedule_details(start, end, all_day, now),
                "short_schedule_details": schedule_details(start, end, all_day, now, True)}

    # -- venues and organizers -----------------------------------------------------
    def venue(self, record: Record) -> dict:
        body = self.post(record)
        data = record.data
        values = {name: str(data.get(name) or "") for name in (
            "address", "country", "city")}
        values["state_province"] = stateprovince(data)
        values.update({name: str(data.get(name) or "") for name in (
            "state", "province", "zip", "phone")})
        body.update(values)
        body["directions_link"] = directions_link(values)
        body["website"] = str(data.get("website") or "")
        return body

    def organizer(self, record: Record) -> dict:
        body = self.post(record)
        body.update({name: str(record.get(name) or "") for name in ("phone", "website",
                                                                    "email")})
        return body


def directions_link(address: dict) -> str:
    """The plugin's Google Maps link to a venue, its ampersands escaped as WordPress
    escapes URLs for display; "" without an address."""
    parts = [address.get(k, "") for k in ("address", "city", "state_province", "zip",
                                          "country")]
    where = ", ".join(p for p in parts if p)
    if not where:
        return ""
    query = quote_plus(re.sub(r"\s+", " ", where))
    return f"https://maps.google.com/maps?f=q&#038;source=s_q&#038;hl=en&#038;geocode=&#038;q={query}"
