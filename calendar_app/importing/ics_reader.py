"""Reading one iCalendar file's VEVENTs into a Batch: the reader's state (zones, the
producer's habits, problems with their lines) and one VEVENT's fields. ics.py is the
entry point; ics_series.py reads rules and overrides into series."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import icalendar

from ..model import dates, records
from ..model.fieldbase import RecordError
from ..model.resources import RESOURCES
from . import ics_zones
from .batch import Batch, Incoming, Problem, Ref
from .ics_text import Block, IcsError, decode, scan, value_of, without_unread

OWN_PRODID = "-//calendar_app//static site//EN"  # site/ical.py PRODID
# The plugin's exports: "-//<site name> - ECPv6.2.8//NONSGML v1.0//EN".
_PLUGIN_PRODID = re.compile(r" - ECPv[\d.]+//", re.IGNORECASE)
_PLUGIN_UID = re.compile(r"(\d+)-\d+-\d+@")
_OWN_UID = re.compile(r"(\d+)@")
_PAGE_SLUG = re.compile(r"/event/([a-z0-9%_-]+)/?(?:\d{4}-\d{2}-\d{2}[^/]*/?)?$")
_HTTP = re.compile(r"https?://\S+\Z", re.IGNORECASE)
UNTITLED = "(untitled)"

# Properties read into the event (or judged elsewhere: recurrence, ics_series).
_READ = {"UID", "SUMMARY", "DESCRIPTION", "DTSTART", "DTEND", "DURATION", "LOCATION", "GEO",
         "URL", "ORGANIZER", "CATEGORIES", "ATTACH", "IMAGE", "STATUS", "RRULE", "RDATE",
         "EXDATE", "RECURRENCE-ID", "CONFERENCE", "ATTENDEE", "CLASS"}
# Bookkeeping of the producer, meaningless once imported: left out without a word.
_BOOKKEEPING = {"DTSTAMP", "CREATED", "LAST-MODIFIED", "SEQUENCE", "TRANSP", "PRIORITY",
                "COLOR", "REFRESH-INTERVAL", "REQUEST-STATUS"}


@dataclass
class Moment:
    """A DTSTART: its wall time in `zone` (None: the importing calendar's zone)."""

    local: dt.datetime
    zone: str | None
    all_day: bool


class Reader:
    def __init__(self, origin: str, calendar_zone: str) -> None:
        self.origin = origin
        self.calendar_zone = calendar_zone
        self.batch = Batch(origin)
        self.xwr: str | None = None
        self.vtimezones: dict[str, icalendar.Timezone] = {}
        self.own = self.plugin = False
        self.known: set[tuple[str, str]] = set()  # linked records already in the batch
        self.calendar_block = Block(1)
        self._made_up: dict[tuple[str, int], str | None] = {}

    # ------------------------------------------------------------------ problems
    def problem(self, message: str, line: int | None, source_id: str | None = None) -> None:
        self.batch.problems.append(Problem(message, line, source_id))

    # ----------------------------------------------------------------- calendars
    def read(self, data: bytes, read_events: Callable[[Reader, list], None]) -> Batch:
        """The batch of `data`; `read_events` (ics_series) reads each calendar's
        VEVENTs, paired with their blocks of lines."""
        text, note = decode(data, self.origin)
        if note:
            self.problem(f"the file is {note}", None)
        layout = scan(text, self.origin)
        blocks = layout.vevents
        self.calendar_block = layout.calendar
        for kind, line in layout.others:
            self.problem(f"{kind}: only events (VEVENT) are imported", line)
        try:
            calendars = icalendar.Calendar.from_ical(without_unread(text), multiple=True)
        except Exception as exc:  # noqa: BLE001 - any failure of the parser: not readable
            raise IcsError(self.origin, f"not a readable iCalendar file ({exc})") from None
        found = [calendar.walk("VEVENT") for calendar in calendars]
        if sum(map(len, found)) != len(blocks):  # never seen; lines would be wrong
            raise IcsError(self.origin, f"{len(blocks)} VEVENTs in the text, "
                                        f"{sum(map(len, found))} read: the file is damaged")
        for calendar, vevents in zip(calendars, found, strict=True):
            # each calendar of a file has its own producer and X-WR-TIMEZONE
            self._calendar_settings(calendar)
            read_events(self, list(zip(vevents, blocks, strict=False)))
            blocks = blocks[len(vevents):]
        return self.batch

    def _calendar_settings(self, calendar: icalendar.Calendar) -> None:
        prodid = str(calendar.get("PRODID") or "")
        self.own = prodid == OWN_PRODID
        self.plugin = bool(_PLUGIN_PRODID.search(prodid))
        xwr = str(calendar.get("X-WR-TIMEZONE") or "").strip()
        self.xwr = None
        if xwr:
            self.xwr = ics_zones.iana_name(xwr)
            if self.xwr is None:
                self.problem(f"X-WR-TIMEZONE {xwr[:64]!r} is no time zone known here: "
                             "its times are read in the calendar's zone",
                             self.calendar_block.line("X-WR-TIMEZONE"))
        for component in calendar.walk("VTIMEZONE"):
            self.vtimezones[str(component.get("TZID") or "")] = component

    # --------------------------------------------------------------------- times
    def zone_of(self, prop: object, block: Block, name: str) -> tuple[str | None, bool]:
        """The zone a TZID parameter names (None: the calendar's), and whether it
        was understood (False: the value is converted to the calendar's zone)."""
        params = getattr(prop, "params", {})
        tzid = str(params.get("TZID") or "")
        if not tzid:
            return None, True
        zone = ics_zones.iana_name(tzid)
        if zone is None and tzid in self.vtimezones:
            value = value_of(prop)
            year = value.year if isinstance(value, dt.date) else 2000
            key = (tzid, year)
            if key not in self._made_up:
                self._made_up[key] = ics_zones.from_vtimezone(tzid, self.vtimezones[tzid],
                                                              year)
            zone = self._made_up[key]
        if zone is None:
            self.problem(f"{name}: time zone {tzid[:64]!r} is not known here; the time is "
                         f"read in the calendar's zone", block.line(name))
            return None, False
        return zone, True

    def start(self, prop: object, block: Block, recurring: bool) -> Moment | None:
        """DTSTART as a wall time and the event's zone."""
        value = value_of(prop)
        if isinstance(value, dt.datetime):
            value = value.replace(microsecond=0)
            if getattr(prop, "params", {}).get("TZID"):
                zone, understood = self.zone_of(prop, block, "DTSTART")
                if understood:  # the wall time as written, in the zone it names
                    return Moment(value.replace(tzinfo=None), zone, False)
                return Moment(self.local(value, None), None, False)
            if value.tzinfo is None:  # floating
                return Moment(value, self.xwr, False)
            zone = self.xwr or ("UTC" if recurring else None)  # UTC
            return Moment(self.local(value, zone), zone, False)
        if isinstance(value, dt.date):
            return Moment(dt.datetime(value.year, value.month, value.day), None, True)
        return None

    def local(self, value: dt.date, zone: str | None) -> dt.datetime:
        """A DATE or DATE-TIME value as a wall time in `zone` (None: the calendar's)."""
        if not isinstance(value, dt.datetime):
            return dt.datetime(value.year, value.month, value.day)
        if value.tzinfo is None:
            return value.replace(microsecond=0)
        try:
            utc = value.astimezone(dt.UTC).replace(tzinfo=None, microsecond=0)
            return dates.from_utc(utc, dates.zone(zone or self.calendar_zone))
        except (dates.DateError, OverflowError, ValueError):
            # at the ends of Python's dates (years 1 and 9999): outside the calendar's
            # range anyway, which is checked and reported where the value is used
            return value.replace(tzinfo=None, microsecond=0)

    # ------------------------------------------------------------------ records
    def link(self, collection: str, source_id: str, fields: dict, line: int) -> Ref:
        """A Ref to a venue, organizer or category, adding the record once."""
        key = (collection, source_id)
        if key not in self.known:
            self.known.add(key)
            self.batch.records.append(Incoming(collection, source_id,
                                               self.checked(collection, fields, line,
                                                            source_id), line))
        return Ref(collection, source_id)

    def checked(self, collection: str, fields: dict, line: int | None,
                source_id: str) -> dict:
        """The fields our files would accept, each checked by its field type; the
        others are left out with a problem."""
        resource = RESOURCES[collection]
        out = {}
        for name, value in fields.items():
            field = resource.field(name)
            if isinstance(value, str):
                value = records.UNSTORABLE_TEXT.sub("", value)
            plain = not isinstance(value, (Ref, list, dict, dt.datetime))
            try:
                if plain and field is not None and value is not None:
                    field.type.from_file(value, field.yaml_key)
            except RecordError as exc:
                self.problem(f"{resource.singular} {name} not imported: {exc.message}", line,
                             source_id)
                continue
            out[name] = value
        return out


# ----------------------------------------------------------------- one VEVENT's fields
def text_of(component: icalendar.Component, name: str) -> str:
    value = component.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value).strip() if value is not None else ""


def event_fields(reader: Reader, component: icalendar.Component, block: Block,
                 source_id: str) -> dict:
    """Title, description, links and the rest of a VEVENT (dates aside)."""
    fields: dict = {}
    title = text_of(component, "SUMMARY")
    if not title:
        reader.problem(f"no SUMMARY: imported as {UNTITLED!r}", block.begin, source_id)
    fields["title"] = title or UNTITLED
    description = text_of(component, "DESCRIPTION")
    organizers = _organizers(reader, component, block)
    if reader.own:  # site/ical.py adds organizers without an address to the text
        description, named = _organized_by(description)
        organizers += [reader.link("organizers", "name:" + n.casefold(), {"organizer": n},
                                   block.line("DESCRIPTION")) for n in named]
    if description:
        fields["description"] = description
    _place(reader, component, block, fields, source_id)
    _address(reader, component, block, fields, source_id)
    if organizers:
        fields["organizer"] = list(dict.fromkeys(organizers))
    categories = categories_of(component)
    if categories:
        fields["categories"] = [reader.link("categories", c.casefold(), {"name": c},
                                            block.line("CATEGORIES")) for c in categories]
    _image(reader, component, block, fields, source_id)
    _status(reader, component, block, fields, source_id)
    _unread(reader, component, block, source_id)
    return fields


def _organized_by(description: str) -> tuple[str, list[str]]:
    head, sep, names = description.rpartition("\n\nOrganized by: ")
    if not sep:
        if description.startswith("Organized by: "):
            return "", [n.strip() for n in description[14:].split(",") if n.strip()]
        return description, []
    return head, [n.strip() for n in names.split(",") if n.strip()]


def _organizers(reader: Reader, component: icalendar.Component, block: Block) -> list[Ref]:
    found = []
    props = [("ORGANIZER", p) for p in all_of(component, "ORGANIZER")]
    if reader.own:  # our feeds write further organizers as non-participants
        props += [("ATTENDEE", p) for p in all_of(component, "ATTENDEE")
                  if str(p.params.get("ROLE", "")).upper() == "NON-PARTICIPANT"]
    for name, prop in props:
        address = str(prop).strip()
        email = address[7:] if address.lower().startswith("mailto:") else ""
        cn = str(prop.params.get("CN") or "").strip().strip('"')
        # Mobilizon writes a name where the address should be
        plain = address if ":" not in address and "@" not in address else ""
        label = cn or plain or email.split("@")[0]
        if not label:
            continue
        fields = {"organizer": label} | ({"email": email} if "@" in email else {})
        source = "mail:" + email.lower() if "@" in email else "name:" + label.casefold()
        found.append(reader.link("organizers", source, fields, block.line(name)))
    return found


def all_of(component: icalendar.Component, name: str) -> list:
    value = component.get(name)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def categories_of(component: icalendar.Component) -> list[str]:
    names = []
    for prop in all_of(component, "CATEGORIES"):
        for item in getattr(prop, "cats", [prop]):
            name = str(item).strip()
            if name:
                names.append(name)
    return list(dict.fromkeys(names))


def _place(reader: Reader, component: icalendar.Component, block: Block, fields: dict,
           source_id: str) -> None:
    """URL: the event's website; in our feeds and the plugin's, its page (the slug)."""
    url = text_of(component, "URL")
    if url and (reader.own or reader.plugin):
        match = _PAGE_SLUG.search(url.split("?")[0])
        if match:
            fields["slug"] = match.group(1)
        url = ""
    if url:
        if _HTTP.fullmatch(url):
            fields["website"] = url
        else:
            reader.problem(f"URL {url[:80]!r} is not a web address: not imported",
                           block.line("URL"), source_id)
    for name in ("CONFERENCE", "X-GOOGLE-CONFERENCE"):
        address = text_of(component, name)
        if _HTTP.fullmatch(address) and "online_url" not in fields:
            fields["online_url"] = address


_SPACES = re.compile(r"[ \t\f\v]+")
_PARENTHESIZED = re.compile(r"(.+?)\s*\((.+)\)")  # Meetup: "Venue (street, city)"


def _address(reader: Reader, component: icalendar.Component, block: Block, fields: dict,
             source_id: str) -> None:
    """LOCATION (and GEO) as a venue: its first line or part is the name, the rest the
    address (Apple: name and address on two lines; Meetup: "name (address)").
    A LOCATION that is a web address is where the event is attended online."""
    location = text_of(component, "LOCATION")
    geo = component.get("GEO")
    if _HTTP.fullmatch(location):
        fields.setdefault("online_url", location)
        location = ""
    # Runs of spaces and tabs are one space; a no-break space in a name stays.
    lines = [_SPACES.sub(" ", line).strip() for line in location.splitlines() if line.strip()]
    if not lines:
        if geo is not None:
            reader.problem("GEO without LOCATION: a venue needs a name; not imported",
                           block.line("GEO"), source_id)
        return
    # Our feeds write "name, address" (site/ical.py): no Meetup parentheses there.
    match = _PARENTHESIZED.fullmatch(lines[0]) if len(lines) == 1 and not reader.own else None
    if len(lines) > 1:
        name, address = lines[0], ", ".join(lines[1:])
    elif match:
        name, address = match.group(1), match.group(2)
    else:
        name, _, address = (part.strip() for part in lines[0].partition(","))
    venue: dict = {"venue": name} | ({"address": address} if address else {})
    coordinates = _coordinates(geo) if geo is not None else _apple_geo(component)
    if coordinates:
        venue["geo_lat"], venue["geo_lng"] = coordinates
    elif geo is not None:
        reader.problem("GEO is not a latitude;longitude pair: not imported",
                       block.line("GEO"), source_id)
    key = ", ".join(lines).casefold()
    fields["venue"] = reader.link("venues", key, venue, block.line("LOCATION"))


def _coordinates(geo: object) -> tuple[float, float] | None:
    try:
        lat, lng = float(geo.latitude), float(geo.longitude)  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError):
        return None
    return (lat, lng) if -90 <= lat <= 90 and -180 <= lng <= 180 else None


_GEO_URI = re.compile(r"geo:(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)")


def _apple_geo(component: icalendar.Component) -> tuple[float, float] | None:
    """Apple writes the place as X-APPLE-STRUCTURED-LOCATION with a geo: URI."""
    match = _GEO_URI.match(text_of(component, "X-APPLE-STRUCTURED-LOCATION"))
    if not match:
        return None
    lat, lng = float(match.group(1)), float(match.group(2))
    return (lat, lng) if -90 <= lat <= 90 and -180 <= lng <= 180 else None


_IMAGE_PATH = re.compile(r"\.(?:jpe?g|png|gif|webp|avif|svg)(?:\?.*)?$", re.IGNORECASE)


def _image(reader: Reader, component: icalendar.Component, block: Block, fields: dict,
           source_id: str) -> None:
    """IMAGE (RFC 7986) or an ATTACH of an image address: the event's image."""
    for name in ("IMAGE", "ATTACH"):
        for prop in all_of(component, name):
            kind = str(prop.params.get("FMTTYPE") or "").lower()
            if str(prop.params.get("ENCODING") or "").upper() == "BASE64" or \
                    str(prop.params.get("VALUE") or "").upper() == "BINARY":
                reader.problem(f"{name}: a file embedded in the calendar is not imported",
                               block.line(name), source_id)
                continue
            address = str(prop).strip()
            image = kind.startswith("image/") or name == "IMAGE" or bool(
                _IMAGE_PATH.search(address))
            if image and _HTTP.fullmatch(address) and "image" not in fields:
                fields["image"] = address
            elif not image or not _HTTP.fullmatch(address):
                reader.problem(f"{name} {address[:80]!r}: only images at web addresses are "
                               "imported", block.line(name), source_id)


def _status(reader: Reader, component: icalendar.Component, block: Block, fields: dict,
            source_id: str) -> None:
    status = text_of(component, "STATUS").upper()
    if status == "CANCELLED":
        field = RESOURCES["events"].field("event_status")
        if field is not None:
            fields["event_status"] = "canceled"
        else:
            reader.problem("STATUS:CANCELLED: the calendar has no cancelled state for an "
                           "event; imported as scheduled", block.line("STATUS"), source_id)
    elif status == "TENTATIVE":
        reader.problem("STATUS:TENTATIVE: imported as confirmed", block.line("STATUS"),
                       source_id)
    klass = text_of(component, "CLASS").upper()
    if klass in ("PRIVATE", "CONFIDENTIAL"):
        reader.problem(f"CLASS:{klass}: the event is marked {klass.lower()} at its source",
                       block.line("CLASS"), source_id)


def _unread(reader: Reader, component: icalendar.Component, block: Block,
            source_id: str) -> None:
    """Properties with no place in an event here (producers' X- properties aside)."""
    attendees = [p for p in all_of(component, "ATTENDEE")
                 if not (reader.own and str(p.params.get("ROLE", "")).upper()
                         == "NON-PARTICIPANT")]
    if attendees:
        reader.problem(f"{len(attendees)} ATTENDEE{'s' if len(attendees) > 1 else ''} not "
                       "imported (events here have no attendees)", block.line("ATTENDEE"),
                       source_id)
    for name in dict.fromkeys(component.keys()):
        name = str(name).upper()
        if name in _READ or name in _BOOKKEEPING or name.startswith("X-"):
            continue
        reader.problem(f"{name} not imported (no such field here)", block.line(name),
                       source_id)
    for name, message in getattr(component, "errors", ()):
        reader.problem(f"{name} unreadable: {message}", block.line(str(name)), source_id)


def source_id_of(component: icalendar.Component, block: Block) -> str:
    """The UID; without one, a digest of the start and title (stable across runs)."""
    uid = text_of(component, "UID")
    if uid:
        return uid
    seed = f"{text_of(component, 'DTSTART')}|{text_of(component, 'SUMMARY')}"
    dtstart = component.get("DTSTART")
    if dtstart is not None and hasattr(dtstart, "to_ical"):
        seed = f"{dtstart.to_ical().decode(errors='replace')}|{text_of(component, 'SUMMARY')}"
    return "no-uid-" + hashlib.sha256(seed.encode()).hexdigest()[:16]


def id_wish(reader: Reader, uid: str) -> int | None:
    """The record id in our feeds' and the plugin's UIDs."""
    pattern = _OWN_UID if reader.own else _PLUGIN_UID if reader.plugin else None
    match = pattern.match(uid) if pattern else None
    return int(match.group(1)) if match else None
