"""One declarative description per resource.

The field tables of the interface become data here. Validation, YAML writing, the
index schema, the JSON representation and `/doc` all read these descriptions; the
few behaviours that differ per resource (event dates, links, term parents) are hooks
in the service, not copies of handlers.

Beside its fields, each resource states the facts the plugin attaches to it (post
type, permalink base, schema name, response wording, the order in which its captures
list arguments and members): the modules that print them read them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import fieldbase
from .fieldtypes import (
    TYPES,
    Boolean,
    Choice,
    Cost,
    DateTime,
    Email,
    FieldType,
    Image,
    Integer,
    Names,
    Number,
    Recurrence,
    Slug,
    String,
    Text,
    Timezone,
    Url,
)
from .ids import MAX_ID
from .linktypes import Link, Links

STATUSES = ("publish", "future", "draft", "pending", "private", "trash")
# The plugin's Event Status (free since The Events Calendar 5.11), values and labels.
EVENT_STATUSES = ("scheduled", "canceled", "postponed")
EVENT_STATUS_LABELS = ("Scheduled", "Canceled", "Postponed")


@dataclass(frozen=True)
class Field:
    """A field of a record.

    `name` is the interface's name, `key` the YAML key when it differs. `type` is a
    field type of fieldtypes.py with its options (`Url(keep_empty=True)`); the name
    of a type registered in `fieldtypes.TYPES` stands for it without options.
    """

    name: str
    type: FieldType
    description: str
    key: str = ""
    required: bool = False
    default: object = None
    writable: bool = True  # False: kept in the file, never set from a request body

    def __post_init__(self) -> None:
        if isinstance(self.type, str):
            object.__setattr__(self, "type", TYPES[self.type]())

    @property
    def yaml_key(self) -> str:
        return self.key or self.name

    @property
    def link(self) -> str:
        """The collection a link field points at, else ""."""
        return self.type.target


@dataclass(frozen=True)
class Member:
    """A member of the JSON representation that is no field (computed when shown), as
    `/doc` documents it. `items`: what an array holds, a schema name ("DateDetails")
    or a JSON type ("string")."""

    name: str
    type: str
    description: str
    items: str = ""


@dataclass(frozen=True)
class Wording:
    """How the plugin's response texts in `/doc` name a resource."""

    noun: str  # "event"
    article: str  # "An"
    plural: str  # "events"
    id_kind: str  # "post ID" / "term ID"
    not_found_by: str  # what "... with the specified X does not exist." says
    list_found: str  # 200 of the list
    list_missing: str = "The requested page was not found."
    readable_403: bool = True  # reads can be refused (posts), terms are always public
    documents_update: bool = True  # the plugin forgot the 200 of organizer updates
    partial_note: bool = True  # our partial updates differ from the plugin's (design.md)


@dataclass(frozen=True)
class TecView:
    """How the `tec/v1` namespace shows a resource (catalog/tec_shapes.py, tec_bodies.py,
    tec_openapi.py): its OpenAPI names, and the body members it takes, each mapped to
    the field it sets (the rest of a body is dropped, as the plugin drops it)."""

    schema: str  # "Event": also operation ids (getEvent, getEvents, createEvent, ...)
    plural: str  # "Events": the list operation id and OpenAPI tag
    body: Mapping[str, str]  # body member -> field name


# Members of every `tec/v1` body (TEC_Post_Entity_Request_Body) that are our fields.
_TEC_POST_BODY = {"content": "description", "excerpt": "excerpt", "slug": "slug",
                  "status": "status", "date": "date", "date_gmt": "date_utc",
                  "author": "author"}


@dataclass(frozen=True, kw_only=True)
class Resource:
    name: str  # collection name in URLs and folders: "events"
    singular: str  # "event"
    title_field: str  # the field naming a record: "title", "venue", "organizer", "name"
    fields: tuple[Field, ...]
    by_slug: bool = True  # has /by-slug/<slug> routes
    trashable: bool = True  # DELETE trashes (events, venues, organizers) or removes (terms)
    taxonomy: str = ""  # WordPress taxonomy name for terms
    hierarchical: bool = False
    post_type: str = ""  # WordPress post type of posts: "tribe_events"
    permalink: str = ""  # public page base: "event" -> <site>/event/<slug>/
    label: str  # the kind of record in page headings: "Venue"
    schema_name: str  # its schema in `/doc`: "Event"; both term resources share "Term"
    wording: Wording
    # Write arguments in the plugin's order; fields of ours it lacks follow in field order.
    write_order: tuple[str, ...]
    # Defaults the plugin *declares* on write arguments. Shown only, never applied: our
    # updates are partial (an omitted field keeps its value). A dict: left out of ==.
    shown_write_defaults: Mapping[str, object] = field(default_factory=dict, compare=False)
    write_default_first: bool = False  # write arguments print `default` before `type`
    body_with_path: bool = False  # `/doc` request bodies start with the path arguments
    derived: tuple[Member, ...] = ()  # representation members that are no field
    # Member order of the `/doc` schema as the plugin documents it; the rest follow.
    schema_order: tuple[str, ...] = ()
    # Stored fields the `/doc` schema leaves out (folded into another member, or shown
    # on some records only).
    not_represented: tuple[str, ...] = ()
    search_fields: tuple[str, ...] = ()  # what the list's `search` parameter looks in
    tec: TecView | None = None  # served in `tec/v1` (events, venues, organizers)
    _index: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({f.name: f for f in self.fields})

    def field(self, name: str) -> Field | None:
        return self._index.get(name)

    @property
    def is_term(self) -> bool:
        return bool(self.taxonomy)

    @property
    def writable_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.writable)

    @property
    def required_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)


# Record ids: 1 and up, bounded so the ids of occurrences stay JSON-safe (ids.py).
_ID = Integer(min=1, max=MAX_ID, why="larger ids belong to occurrences of recurring events")


def _post_fields(noun: str, title: Field) -> tuple[Field, ...]:
    """Fields every post-like record (event, venue, organizer) starts with."""
    return (
        Field("id", _ID, f"the {noun} post ID", writable=False),
        title,
        Field("slug", Slug(), f"the {noun} slug"),
        Field("status", Choice(STATUSES, write_default=True), f"the {noun} post status",
              default="publish"),
        Field("author", Integer(user_id=True), f"the {noun} author ID", default=0),
        Field("date", DateTime(site_zone=True), f"the {noun} publication date"),
        Field("date_utc", DateTime(), f"the {noun} publication date (UTC time zone)", key="-"),
        Field("modified", DateTime(), f"the {noun} last modification date", writable=False),
    )


def _origin(noun: str) -> tuple[Field, ...]:
    """Where an imported record comes from: re-imports find it by these two keys, so they
    update it instead of making a duplicate (calendar_app/importing/apply.py)."""
    return (Field("source", String(searchable=False), f"the source the {noun} was imported "
                  "from: a source's name (sources/NAME.yaml) or the URL or file imported",
                  writable=False),
            Field("source_id", String(searchable=False), f"the {noun}'s id at its source: "
                  "an iCalendar UID, a plugin site's post id, a CSV row's key",
                  writable=False))


def _text(noun: str) -> tuple[Field, ...]:
    return (Field("excerpt", Text(), f"the {noun} excerpt"),
            Field("description", Text(), f"the {noun} description"))


def _post_members(noun: str, lineage_noun: str) -> tuple[Member, ...]:
    """Representation members of every post-like record that are no field."""
    return (
        Member("global_id", "string", f"the {noun} ID used to globally identify in Event "
               "Aggregator"),
        Member("global_id_lineage", "array", f"an Array containing the lineage of where this "
               f"{lineage_noun} comes from, this should not change after the {lineage_noun} "
               "is created.", items="string"),
        Member("modified_utc", "string", f"the {noun} last modification date in UTC time"),
        Member("url", "string", f"the URL to the {noun} page"),
    )


def _date_details(name: str, what: str) -> Member:
    return Member(name, "array", f"an array of each component of the event {what}",
                  items="DateDetails")


# The first members of every post's schema in `/doc`, in the plugin's order.
_POST_SCHEMA_HEAD = ("id", "global_id", "global_id_lineage", "author", "date", "date_utc",
                     "modified", "modified_utc", "status", "url")

# Recurring events (docs/recurring-events.md): one block holding the rules, extra and
# excluded dates and per-occurrence changes; calendar_app/recurrence.py reads it.
_RECURRENCE_FIELDS = (
    Field("recurrence", Recurrence(), "the event recurrence: RFC 5545 rules or a readable "
          "rule, extra and excluded dates, changes per occurrence"),
)

EVENTS = Resource(
    name="events",
    singular="event",
    title_field="title",
    fields=_post_fields("event", Field("title", String(trim=True), "the event title", required=True))
    + (
        Field("start_date", DateTime(), "the event start date and time", required=True),
        Field("end_date", DateTime(), "the event end date and time", required=True),
        Field("all_day", Boolean(), "whether the event lasts the whole day or not", default=False),
        Field("timezone", Timezone(), "the event time zone"),
        Field("venue", Link("venues"), "the event venue ID or data"),
        Field("organizer", Links("organizers"), "the event organizer IDs or data",
              key="organizers"),
        Field("categories", Links("categories"), "the event category IDs or names"),
        Field("tags", Links("tags"), "the event tag IDs or names"),
        Field("cost", Cost(), "the event cost"),
        Field("currency_symbol", String(searchable=False), "the cost currency symbol", writable=False),
        Field("currency_position", String(searchable=False), "prefix or postfix", writable=False),
        Field("currency_code", String(searchable=False), "the ISO 4217 currency code", writable=False),
        Field("website", Url(keep_empty=True), "the event website URL"),
        Field("online_url", Url(), "the address where the event is attended online; with a "
              "venue too, attendance is mixed"),
        Field("performer", Names(), "the name or names of who performs at the event"),
        Field("image", Image(), "the event featured image URL or media path"),
        Field("featured", Boolean(), "whether the event is featured", default=False),
        Field("sticky", Boolean(), "whether the event is sticky in calendar views",
              default=False),
        Field("hide_from_listings", Boolean(), "whether the event is hidden from listings",
              default=False),
        Field("show_map", Boolean(), "whether the event shows a map", default=False),
        Field("show_map_link", Boolean(), "whether the event shows a map link", default=False),
        Field("event_status", Choice(EVENT_STATUSES, labels=EVENT_STATUS_LABELS),
              "whether the event takes place as planned: scheduled, canceled or postponed"),
        Field("event_status_reason", String(trim=True), "why the event is canceled or "
              "postponed, shown beside its status"),
        Field("previous_start_date", DateTime(site_zone=True), "the start date the event "
              "had before it was moved (schema.org previousStartDate)"),
    )
    + _text("event")
    + _RECURRENCE_FIELDS
    + _origin("event"),
    post_type="tribe_events",
    permalink="event",
    label="Event",
    schema_name="Event",
    wording=Wording("event", "An", "events", "post ID", "ID",
                    "Returns all the upcoming events matching the search criteria"),
    write_order=("author", "date", "date_utc", "title", "description", "slug", "excerpt",
                 "status", "timezone", "all_day", "start_date", "end_date", "image", "cost",
                 "website", "show_map", "show_map_link", "hide_from_listings", "sticky",
                 "featured", "categories", "tags", "venue", "organizer"),
    shown_write_defaults={"all_day": False, "website": None, "categories": None,
                          "tags": None, "venue": None, "organizer": None},
    write_default_first=True,
    derived=_post_members("event", "event") + (
        Member("rest_url", "string", "the TEC REST API link to fetch this event"),
        _date_details("start_date_details", "start date"),
        _date_details("end_date_details", "end date"),
        Member("utc_start_date", "string", "the event start date in UTC time"),
        _date_details("utc_start_date_details", "start date in UTC time"),
        Member("utc_end_date", "string", "the event end date in UTC time"),
        _date_details("utc_end_date_details", "end date in UTC time"),
        Member("timezone_abbr", "string", "the abbreviated event time zone string"),
        Member("cost_details", "array", "the event cost details", items="CostDetails"),
    ),
    schema_order=_POST_SCHEMA_HEAD + (
        "rest_url", "title", "description", "excerpt", "slug", "image", "all_day",
        "start_date", "start_date_details", "end_date", "end_date_details", "utc_start_date",
        "utc_start_date_details", "utc_end_date", "utc_end_date_details", "timezone",
        "timezone_abbr", "cost", "cost_details", "website", "show_map", "show_map_link",
        "hide_from_listings", "sticky", "featured", "categories", "tags", "venue",
        "organizer"),
    # The currency fields fold into cost_details. `recurrence` is shown on recurring
    # events only, as with the plugin's Pro add-on: its Event schema stays as it is.
    not_represented=("currency_symbol", "currency_position", "currency_code", "recurrence",
                     "source", "source_id"),
    # What `/events?search=` looks in (WordPress: title, excerpt, content).
    search_fields=("title", "excerpt", "description"),
    tec=TecView("Event", "Events", {
        "title": "title", **_TEC_POST_BODY, "sticky": "sticky", "start_date": "start_date",
        "end_date": "end_date", "timezone": "timezone", "all_day": "all_day",
        "featured": "featured", "cost": "cost", "tribe_events_cat": "categories",
        "tags": "tags", "venues": "venue", "organizers": "organizer"}),
)

VENUES = Resource(
    name="venues",
    singular="venue",
    title_field="venue",
    fields=_post_fields("venue", Field("venue", String(trim=True), "the venue name", key="name",
                                      required=True))
    + (
        Field("address", String(), "the venue address"),
        Field("city", String(), "the venue city"),
        Field("state", String(), "the venue state (US)"),
        Field("province", String(), "the venue province"),
        Field("stateprovince", String(searchable=False), "the venue state or province"),
        Field("zip", String(), "the venue ZIP or postal code"),
        Field("country", String(), "the venue country"),
        Field("phone", String(), "the venue phone number"),
        Field("website", Url(keep_empty=True), "the venue website URL"),
        Field("image", Image(), "the venue featured image URL or media path"),
        Field("show_map", Boolean(loose=True), "whether events at the venue show a map",
              default=True),
        Field("show_map_link", Boolean(loose=True), "whether events at the venue show a map link",
              default=True),
        Field("geo_lat", Number(min=-90, max=90), "the venue latitude"),
        Field("geo_lng", Number(min=-180, max=180), "the venue longitude"),
    )
    + _text("venue")
    + _origin("venue"),
    post_type="tribe_venue",
    permalink="venue",
    label="Venue",
    schema_name="Venue",
    wording=Wording("venue", "A", "venues", "post ID", "post ID",
                    "Returns all the venues matching the search criteria"),
    write_order=("author", "date", "date_utc", "venue", "description", "status", "show_map",
                 "show_map_link", "address", "city", "country", "province", "state", "zip",
                 "phone", "stateprovince", "website", "image"),
    shown_write_defaults=dict.fromkeys(
        ("description", "show_map", "show_map_link", "address", "city", "country", "province",
         "state", "zip", "phone", "stateprovince", "website", "image")),
    # Quirk kept: the plugin's venue lineage text speaks of an organizer.
    derived=_post_members("venue", "organizer"),
    schema_order=_POST_SCHEMA_HEAD + (
        "venue", "description", "excerpt", "slug", "image", "show_map", "show_map_link",
        "address", "city", "country", "province", "state", "zip", "phone", "website",
        "stateprovince", "geo_lat", "geo_lng"),
    not_represented=("source", "source_id"),
    search_fields=("venue", "description", "excerpt", "address", "city", "province", "state",
                   "stateprovince", "zip", "phone"),
    tec=TecView("Venue", "Venues", {
        "title": "venue", **_TEC_POST_BODY, "address": "address", "country": "country",
        "city": "city", "state_province": "stateprovince", "state": "state",
        "province": "province", "zip": "zip", "phone": "phone", "website": "website"}),
)

_ORGANIZER_WRITE_ORDER = ("author", "date", "date_utc", "organizer", "description", "status",
                          "phone", "website", "email", "image")

ORGANIZERS = Resource(
    name="organizers",
    singular="organizer",
    title_field="organizer",
    fields=_post_fields(
        "organizer", Field("organizer", String(trim=True), "the organizer name", key="name",
              required=True)
    )
    + (
        Field("phone", String(), "the organizer phone number"),
        Field("website", Url(keep_empty=True), "the organizer website URL"),
        Field("email", Email(), "the organizer e-mail address"),
        Field("image", Image(), "the organizer featured image URL or media path"),
    )
    + _text("organizer")
    + _origin("organizer"),
    post_type="tribe_organizer",
    permalink="organizer",
    label="Organizer",
    schema_name="Organizer",
    wording=Wording("organizer", "An", "organizers", "post ID", "event",
                    "Returns all the organizers matching the search criteria",
                    documents_update=False),
    write_order=_ORGANIZER_WRITE_ORDER,
    shown_write_defaults=dict.fromkeys(_ORGANIZER_WRITE_ORDER),
    body_with_path=True,
    derived=_post_members("organizer", "organizer"),
    schema_order=_POST_SCHEMA_HEAD + (
        "organizer", "description", "excerpt", "slug", "image", "phone", "website", "email"),
    not_represented=("source", "source_id"),
    search_fields=("organizer", "description", "excerpt", "phone", "email", "website"),
    tec=TecView("Organizer", "Organizers", {
        "title": "organizer", **_TEC_POST_BODY, "phone": "phone", "website": "website",
        "email": "email"}),
)

_TERM_FIELDS = (
    Field("id", _ID, "the term ID", writable=False),
    Field("name", String(trim=True), "the term name", required=True),
    Field("slug", Slug(), "the term slug"),
    Field("description", String(keep_empty=True), "the term description"),
)

CATEGORIES = Resource(
    name="categories",
    singular="category",
    title_field="name",
    fields=_TERM_FIELDS[:3]
    + (Field("parent", Link("categories"), "the parent category ID"),)
    + _TERM_FIELDS[3:],
    by_slug=False,
    trashable=False,
    taxonomy="tribe_events_cat",
    hierarchical=True,
    permalink="events/category",  # then the slugs of its parents and its own
    label="Category",
    schema_name="Term",
    wording=Wording("event category", "An", "event categories", "term ID", "term ID",
                    "Returns all the event categories matching the search criteria",
                    readable_403=False, partial_note=False),
    write_order=("name", "description", "slug", "parent"),
    body_with_path=True,
)

TAGS = Resource(
    name="tags",
    singular="tag",
    title_field="name",
    fields=_TERM_FIELDS,
    by_slug=False,
    trashable=False,
    taxonomy="post_tag",
    permalink="tag",
    label="Tag",
    schema_name="Term",
    wording=Wording("event tag", "An", "event tags", "term ID", "term ID",
                    "Returns all the event tags matching the search criteria",
                    "No event tags match the query or the requested page was not found.",
                    readable_403=False, partial_note=False),
    write_order=("name", "description", "slug"),
)

RESOURCES: dict[str, Resource] = fieldbase.RESOURCES
RESOURCES.update((r.name, r) for r in (EVENTS, VENUES, ORGANIZERS, CATEGORIES, TAGS))


# id(fields) -> (fields, stored ones): asked for each record read or written (an import
# asks 40,000 times). The fields tuple is kept in the entry, so its id is never reused.
_YAML_FIELDS: dict[int, tuple[tuple[Field, ...], tuple[Field, ...]]] = {}


def yaml_fields(resource: Resource) -> tuple[Field, ...]:
    """Fields stored in files, in file order (derived values such as date_utc are not)."""
    known = _YAML_FIELDS.get(id(resource.fields))
    if known is not None and known[0] is resource.fields:
        return known[1]
    stored = tuple(f for f in resource.fields if f.key != "-")
    if len(_YAML_FIELDS) < 1000:  # resources made on the fly (tests) do not pile up
        _YAML_FIELDS[id(resource.fields)] = (resource.fields, stored)
    return stored
