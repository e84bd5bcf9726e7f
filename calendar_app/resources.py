"""One declarative description per resource.

The field tables of the interface become data here. Validation, YAML writing, the
index schema, the JSON representation and `/doc` all read these descriptions; the
few behaviours that differ per resource (event dates, links, term parents) are hooks
in the service, not copies of handlers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    Link,
    Links,
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

STATUSES = ("publish", "future", "draft", "pending", "private", "trash")


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
class Resource:
    name: str  # collection name in URLs and folders: "events"
    singular: str  # "event"
    title_field: str  # the field naming a record: "title", "venue", "organizer", "name"
    fields: tuple[Field, ...]
    by_slug: bool = True  # has /by-slug/<slug> routes
    trashable: bool = True  # DELETE trashes (events, venues, organizers) or removes (terms)
    taxonomy: str = ""  # WordPress taxonomy name for terms
    hierarchical: bool = False
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


def _text(noun: str) -> tuple[Field, ...]:
    return (Field("excerpt", Text(), f"the {noun} excerpt"),
            Field("description", Text(), f"the {noun} description"))

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
    )
    + _text("event")
    + _RECURRENCE_FIELDS,
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
    + _text("venue"),
)

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
    + _text("organizer"),
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
)

TAGS = Resource(
    name="tags",
    singular="tag",
    title_field="name",
    fields=_TERM_FIELDS,
    by_slug=False,
    trashable=False,
    taxonomy="post_tag",
)

RESOURCES: dict[str, Resource] = {
    r.name: r for r in (EVENTS, VENUES, ORGANIZERS, CATEGORIES, TAGS)
}


def yaml_fields(resource: Resource) -> tuple[Field, ...]:
    """Fields stored in files, in file order (derived values such as date_utc are not)."""
    return tuple(f for f in resource.fields if f.key != "-")
