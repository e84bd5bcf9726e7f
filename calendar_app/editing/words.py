"""The editing pages' words for the resource descriptions' names: each form field's
label and hint, the choices of a select, record statuses, list tabs and the kinds of
record. Marked for the catalogs here (N_), translated where shown (language.py).

The descriptions in model/resources.py are the plugin's interface documentation
(`/doc`, in its English, with the record's noun filled in), not words for a form: the
forms say what a field is for in the editor's language. A field without a label here
gets its name, and tests/test_admin_i18n.py fails on it.
"""

from __future__ import annotations

from ..site.i18n import N_, N_plural

LABELS = {
    "title": N_("Title"), "description": N_("Description"), "excerpt": N_("Excerpt"),
    "slug": N_("Slug"), "start_date": N_("Starts"), "end_date": N_("Ends"),
    "all_day": N_("All day"), "timezone": N_("Time zone"), "cost": N_("Cost"),
    "currency_symbol": N_("Currency symbol"), "currency_position": N_("Currency position"),
    "currency_code": N_("Currency code"), "website": N_("Website"), "image": N_("Image"),
    "venue": N_("Venue"), "organizer": N_("Organizers"), "categories": N_("Categories"),
    "tags": N_("Tags"), "featured": N_("Featured"), "sticky": N_("Sticky"),
    "hide_from_listings": N_("Hide from listings"), "recurrence": N_("Repeats"),
    "event_status": N_("Event status"), "event_status_reason": N_("Reason for the status"),
    "previous_start_date": N_("Previous start"), "performer": N_("Performers"),
    "online_url": N_("Online address"), "address": N_("Address"), "city": N_("City"),
    "country": N_("Country"), "province": N_("Province"), "state": N_("State"),
    "stateprovince": N_("State or province"), "zip": N_("ZIP or postal code"),
    "phone": N_("Phone"), "show_map": N_("Show a map"),
    "show_map_link": N_("Show a link to the map"), "geo_lat": N_("Latitude"),
    "geo_lng": N_("Longitude"), "email": N_("E-mail address"), "name": N_("Name"),
    "parent": N_("Parent category"),
}

HINTS = {
    "slug": N_("The last part of the page's address; made from the title when empty."),
    "excerpt": N_("A short summary for lists and search results."),
    "cost": N_("For example 15, 10-20 or Free."),
    "currency_code": N_("Three letters, such as EUR or USD."),
    "image": N_("An address of an image, or a file in the calendar's media folder."),
    "description": N_("Plain text or Markdown; a blank line starts a new paragraph."),
    "hide_from_listings": N_("The event keeps its page but stays out of lists and feeds."),
    "event_status_reason": N_("Shown beside the status, such as why it was cancelled."),
    "previous_start_date": N_("When a postponed event was to start."),
    "online_url": N_("Where an online event takes place."),
    "geo_lat": N_("Decimal degrees, such as 52.52."),
    "geo_lng": N_("Decimal degrees, such as 13.40."),
}

# Values of a select as the form names them (the value itself when not here).
OPTIONS = {
    "": N_("(not set)"), "scheduled": N_("Scheduled"), "canceled": N_("Canceled"),
    "postponed": N_("Postponed"), "prefix": N_("Before the amount"),
    "suffix": N_("After the amount"),
}

STATUSES = {
    "publish": N_("Published"), "future": N_("Scheduled to publish"), "draft": N_("Draft"),
    "pending": N_("Pending review"), "private": N_("Private"), "trash": N_("In the trash"),
}

ROLES = {
    "administrator": N_("Administrator"), "editor": N_("Editor"), "author": N_("Author"),
    "contributor": N_("Contributor"), "subscriber": N_("Subscriber"),
}

TABS = {
    "upcoming": N_("Upcoming"), "past": N_("Past"), "drafts": N_("Drafts"),
    "pending": N_("Pending"), "trash": N_("Trash"), "all": N_("All"),
}

# The service's own messages as forms show them next to a field or in a notice (the
# interface's wording, WordPress's where it has one), translated on the pages only: the
# interface keeps answering them in English, as the plugin does. A message the service
# fills in (f-string) is here as its template: `%(name)s` stands for what it filled in
# (language.service_message reads the values back out of the text). Every message
# service.py and model/errors.py raise must be here (tests/test_admin_i18n.py).
SERVICE = (N_("Invalid parameter."), N_("Missing parameter(s): %(names)s"),
           N_("Invalid parameter(s): %(names)s"),
           N_("%(name)s is not of type %(type)s."),
           N_("%(name)s must be within %(range)s."),
           # the only range the service names (dates.KEPT_RANGE): a whole sentence
           N_("%(name)s must be within years 1000 to 9998."),
           N_("The end date must not be before the start date."),
           N_("Sorry, you are not allowed to do that."),
           N_("Sorry, you are not allowed to %(verb)s %(records)s as this user."),
           N_("A term with the name provided already exists in this taxonomy."),
           N_("A term with the name provided already exists with this parent."),
           N_("The slug \"%(slug)s\" is already in use by another term."),
           N_("Can not set resource parent, taxonomy is not hierarchical."),
           N_("The %(record)s is already trashed"),
           N_("The %(record)s was removed or renamed while this request was made; reload "
              "it and try again."),
           N_("No new record can be made now: %(reason)s."),
           N_("No new record can be made now: %(reason)s. Records already made can still "
              "be changed."),
           N_("The calendar's repository takes no writes now: %(reason)s. Try again once "
              "it is over."),
           N_("The change could not be saved; nothing was changed: %(reason)s."),
           # Flask-WTF's reasons for refusing a form.
           N_("The CSRF token is missing."), N_("The CSRF session token is missing."),
           N_("The CSRF token has expired."), N_("The CSRF token is invalid."),
           N_("The CSRF tokens do not match."), N_("The referrer header is missing."),
           N_("The referrer does not match the host."))

# dates.KEPT_RANGE, as a rule's message puts it in parentheses (a test holds them equal).
KEPT_RANGE = N_("years 1000 to 9998")

# SERVICE's messages that name a kind of record, filled in with each kind's noun (the
# resources' `singular`, `name` and the verbs service.py gives): a whole sentence each,
# since the noun's gender and case change the words around it ("Die Veranstaltung",
# "Der Veranstaltungsort"). language.service_message takes these before reading values
# back; tests/test_admin_i18n.py fails when a kind of record lacks its sentences.
FILLED = (
    N_("The event is already trashed"), N_("The venue is already trashed"),
    N_("The organizer is already trashed"),
    N_("The event was removed or renamed while this request was made; reload it and "
       "try again."),
    N_("The venue was removed or renamed while this request was made; reload it and "
       "try again."),
    N_("The organizer was removed or renamed while this request was made; reload it and "
       "try again."),
    N_("The category was removed or renamed while this request was made; reload it and "
       "try again."),
    N_("The tag was removed or renamed while this request was made; reload it and "
       "try again."),
    N_("Sorry, you are not allowed to create events as this user."),
    N_("Sorry, you are not allowed to update events as this user."),
    N_("Sorry, you are not allowed to create venues as this user."),
    N_("Sorry, you are not allowed to update venues as this user."),
    N_("Sorry, you are not allowed to create organizers as this user."),
    N_("Sorry, you are not allowed to update organizers as this user."),
    N_("Sorry, you are not allowed to create categories as this user."),
    N_("Sorry, you are not allowed to update categories as this user."),
    N_("Sorry, you are not allowed to create tags as this user."),
    N_("Sorry, you are not allowed to update tags as this user."),
)

# Why the YAML reader (store/yamlfile.py) refuses a record file, as its sentences word
# it, and the problems PyYAML and Python's dates name most often, in their words; the
# editing pages name unreadable files with these translated (editing/unreadable.py).
# A problem not here is shown in the parser's English inside a translated sentence
# (none that tests/test_catalog_reasons.py can make PyYAML raise).
YAML = (
    N_("file is larger than %(bytes)s bytes"), N_("file is not valid UTF-8"),
    N_("file contains a NUL byte"), N_("a record file must hold a mapping of keys to values"),
    N_("structure is nested too deeply"), N_("a value cannot be read: %(message)s"),
    N_("%(value)s cannot be read: %(message)s"),
    N_("YAML anchors and aliases are not allowed in record files"),
    N_("YAML tags are not allowed in record files"),
    N_("a tab character at line %(line)s, column %(column)s: YAML indents with spaces "
       "only; replace the tab with spaces"),
    N_("cannot read the file"), N_("cannot read: %(reason)s"),
    N_("mapping values are not allowed in this context"),
    N_("did not find expected ',' or ']'"), N_("did not find expected ',' or '}'"),
    N_("found unexpected end of stream"), N_("did not find expected key"),
    N_("could not find expected ':'"), N_("found character that cannot start any token"),
    N_("but found another document"), N_("day is out of range for month"),
    N_("month must be in 1..12"), N_("hour must be in 0..23"), N_("minute must be in 0..59"),
    N_("second must be in 0..59"),
    # PyYAML's rarer problems (every one a test could make it raise)
    N_("did not find expected '-' indicator"), N_("found unknown escape character"),
    N_("did not find expected <document start>"), N_("found duplicate %YAML directive"),
    N_("found unknown directive name"), N_("did not find expected node content"),
    N_("did not find expected comment or line break"),
    N_("found an indentation indicator equal to 0"),
    N_("did not find expected hexdecimal number"),
    N_("block sequence entries are not allowed in this context"),
    N_("mapping keys are not allowed in this context"),
    N_("did not find expected alphabetic or numeric character"),
)


class Kind:
    """The words of one kind of record: each language inflects "new", "this" and the
    counts by the noun's gender, so every phrase is a message of its own."""

    def __init__(self, plural: str, new: str, edit: str, count: tuple[str, str],
                 or_new: str, conflict: str, identical: str) -> None:
        self.plural, self.new, self.edit, self.count = plural, new, edit, count
        self.or_new, self.conflict, self.identical = or_new, conflict, identical


KINDS = {
    "events": Kind(N_("Events"), N_("New event"), N_("Edit event: %(name)s"),
                   N_plural("%(count)s event.", "%(count)s events."), N_("Or a new event"),
                   N_("Someone saved this event while you were editing it"),
                   N_("An identical event already exists: nothing was made.")),
    "venues": Kind(N_("Venues"), N_("New venue"), N_("Edit venue: %(name)s"),
                   N_plural("%(count)s venue.", "%(count)s venues."), N_("Or a new venue"),
                   N_("Someone saved this venue while you were editing it"),
                   N_("An identical venue already exists: nothing was made.")),
    "organizers": Kind(N_("Organizers"), N_("New organizer"), N_("Edit organizer: %(name)s"),
                       N_plural("%(count)s organizer.", "%(count)s organizers."),
                       N_("Or a new organizer"),
                       N_("Someone saved this organizer while you were editing it"),
                       N_("An identical organizer already exists: nothing was made.")),
    "categories": Kind(N_("Categories"), N_("New category"), N_("Edit category: %(name)s"),
                       N_plural("%(count)s category.", "%(count)s categories."),
                       N_("Or a new category"),
                       N_("Someone saved this category while you were editing it"),
                       N_("An identical category already exists: nothing was made.")),
    "tags": Kind(N_("Tags"), N_("New tag"), N_("Edit tag: %(name)s"),
                 N_plural("%(count)s tag.", "%(count)s tags."), N_("Or a new tag"),
                 N_("Someone saved this tag while you were editing it"),
                 N_("An identical tag already exists: nothing was made.")),
}


def label(name: str) -> str:
    """A field's label in English (the message id), its name when it has none."""
    return LABELS.get(name) or name.replace("_", " ").capitalize()
