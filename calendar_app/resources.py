"""One declarative description per resource.

The field tables of the interface become data here. Validation, YAML writing, the
index schema, the JSON representation and `/doc` all read these descriptions; the
few behaviours that differ per resource (event dates, links, term parents) are hooks
in the service, not copies of handlers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("publish", "future", "draft", "pending", "private", "trash")


@dataclass(frozen=True)
class Field:
    """A field of a record.

    `name` is the interface's name, `key` the YAML key when it differs. `type` is one
    of: string, text (Markdown/HTML), integer, number, boolean, datetime, status, url,
    email, image, timezone, cost, link (slug of a record of `link`), links (list of slugs),
    names (a name or a list of names: a list in records, one name alone in files).
    """

    name: str
    type: str
    description: str
    key: str = ""
    required: bool = False
    default: object = None
    link: str = ""
    writable: bool = True  # False: kept in the file, never set from a request body

    @property
    def yaml_key(self) -> str:
        return self.key or self.name


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


def _post_fields(noun: str, title: Field) -> tuple[Field, ...]:
    """Fields every post-like record (event, venue, organizer) starts with."""
    return (
        Field("id", "integer", f"the {noun} post ID", writable=False),
        title,
        Field("slug", "string", f"the {noun} slug"),
        Field("status", "status", f"the {noun} post status", default="publish"),
        Field("author", "integer", f"the {noun} author ID", default=0),
        Field("date", "datetime", f"the {noun} publication date"),
        Field("date_utc", "datetime", f"the {noun} publication date (UTC time zone)", key="-"),
        Field("modified", "datetime", f"the {noun} last modification date", writable=False),
    )


def _text(noun: str) -> tuple[Field, ...]:
    return (Field("excerpt", "text", f"the {noun} excerpt"),
            Field("description", "text", f"the {noun} description"))

# Recurring events (docs/recurring-events.md): one block holding the rules, extra and
# excluded dates and per-occurrence changes; calendar_app/recurrence.py reads it.
_RECURRENCE_FIELDS = (
    Field("recurrence", "recurrence", "the event recurrence: RFC 5545 rules or a readable "
          "rule, extra and excluded dates, changes per occurrence"),
)

EVENTS = Resource(
    name="events",
    singular="event",
    title_field="title",
    fields=_post_fields("event", Field("title", "string", "the event title", required=True))
    + (
        Field("start_date", "datetime", "the event start date and time", required=True),
        Field("end_date", "datetime", "the event end date and time", required=True),
        Field("all_day", "boolean", "whether the event lasts the whole day or not", default=False),
        Field("timezone", "timezone", "the event time zone"),
        Field("venue", "link", "the event venue ID or data", link="venues"),
        Field("organizer", "links", "the event organizer IDs or data", key="organizers",
              link="organizers"),
        Field("categories", "links", "the event category IDs or names", link="categories"),
        Field("tags", "links", "the event tag IDs or names", link="tags"),
        Field("cost", "cost", "the event cost"),
        Field("currency_symbol", "string", "the cost currency symbol", writable=False),
        Field("currency_position", "string", "prefix or postfix", writable=False),
        Field("currency_code", "string", "the ISO 4217 currency code", writable=False),
        Field("website", "url", "the event website URL"),
        Field("online_url", "url", "the address where the event is attended online; with a "
              "venue too, attendance is mixed"),
        Field("performer", "names", "the name or names of who performs at the event"),
        Field("image", "image", "the event featured image URL or media path"),
        Field("featured", "boolean", "whether the event is featured", default=False),
        Field("sticky", "boolean", "whether the event is sticky in calendar views",
              default=False),
        Field("hide_from_listings", "boolean", "whether the event is hidden from listings",
              default=False),
        Field("show_map", "boolean", "whether the event shows a map", default=False),
        Field("show_map_link", "boolean", "whether the event shows a map link", default=False),
    )
    + _text("event")
    + _RECURRENCE_FIELDS,
)

VENUES = Resource(
    name="venues",
    singular="venue",
    title_field="venue",
    fields=_post_fields("venue", Field("venue", "string", "the venue name", key="name", required=True))
    + (
        Field("address", "string", "the venue address"),
        Field("city", "string", "the venue city"),
        Field("state", "string", "the venue state (US)"),
        Field("province", "string", "the venue province"),
        Field("stateprovince", "string", "the venue state or province"),
        Field("zip", "string", "the venue ZIP or postal code"),
        Field("country", "string", "the venue country"),
        Field("phone", "string", "the venue phone number"),
        Field("website", "url", "the venue website URL"),
        Field("image", "image", "the venue featured image URL or media path"),
        Field("show_map", "boolean", "whether events at the venue show a map", default=True),
        Field("show_map_link", "boolean", "whether events at the venue show a map link",
              default=True),
        Field("geo_lat", "number", "the venue latitude"),
        Field("geo_lng", "number", "the venue longitude"),
    )
    + _text("venue"),
)

ORGANIZERS = Resource(
    name="organizers",
    singular="organizer",
    title_field="organizer",
    fields=_post_fields(
        "organizer", Field("organizer", "string", "the organizer name", key="name", required=True)
    )
    + (
        Field("phone", "string", "the organizer phone number"),
        Field("website", "url", "the organizer website URL"),
        Field("email", "email", "the organizer e-mail address"),
        Field("image", "image", "the organizer featured image URL or media path"),
    )
    + _text("organizer"),
)

_TERM_FIELDS = (
    Field("id", "integer", "the term ID", writable=False),
    Field("name", "string", "the term name", required=True),
    Field("slug", "string", "the term slug"),
    Field("description", "string", "the term description"),
)

CATEGORIES = Resource(
    name="categories",
    singular="category",
    title_field="name",
    fields=_TERM_FIELDS[:3]
    + (Field("parent", "link", "the parent category ID", link="categories"),)
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
