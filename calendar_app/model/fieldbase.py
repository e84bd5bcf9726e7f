"""What every field type (fieldtypes.py) builds on: the base class, the errors of
files, what reading a request value may ask of the calendar, and the form control
facet: how a control of each kind shows a value and reads a posted form back into
the value a request body would send (the editing pages render and read every form
from this, never from per-resource templates)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from . import errors

INT_ITEMS: Mapping[str, str] = {"type": "integer"}  # a list of ids in `/doc`
STRING_ITEMS: Mapping[str, str] = {"type": "string"}
INVALID = "Invalid parameter."


class RecordError(ValueError):
    """A file whose content does not make a valid record."""

    def __init__(self, message: str, key: str = "", at: str = "", code: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.at = at  # text inside the key's block the message is about
        self.code = code  # the finding's code in `check`, when not the field type's


class RequestContext(Protocol):
    """What reading a request value needs beyond the value: the calendar (service.py)."""

    updating: bool  # the body changes a record (empty text is kept as ""), else creates

    def site_date(self, name: str, raw: str) -> dt.datetime: ...
    def user_exists(self, user_id: int) -> bool: ...
    def media_file(self, path: str) -> bool: ...
    def clean_slug(self, value: str) -> str: ...
    def term_parent(self, raw: object) -> str | None: ...
    def term_plan(self, target: str, raw: object) -> list: ...
    def link_plan(self, name: str, target: str, raw: object, single: bool) -> list: ...


def file_text(value: object, key: str) -> str:
    if isinstance(value, (bool, dict | list)):
        raise RecordError(f"{key}: expected text, got {type(value).__name__}", key)
    return str(value)


def request_text(raw: object, name: str) -> str:
    """A text-like value of a body: null counts as empty, anything but text is refused."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise errors.wrong_type(name, "string")
    return raw


class FormData(Protocol):
    """A posted form (werkzeug's MultiDict): one value or all values of a name."""

    def get(self, key: str, default: Any = None) -> Any: ...
    def getlist(self, key: str) -> list[str]: ...


NOT_SENT: Any = type("NotSent", (), {"__repr__": lambda self: "NOT_SENT"})()
# Controls whose value is a list of choices (slugs shown, ids or names posted).
LIST_CONTROLS = frozenset({"select-multiple", "picker-multiple", "term-tree", "term-list"})
_WALL_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?")


def form_text(control: str, value: object) -> Any:
    """A field value as its control shows it: input text, "true" for a ticked box,
    one line per name, the list of slugs of a list control."""
    if control in LIST_CONTROLS:
        return [] if value is None else [str(v) for v in (
            value if isinstance(value, list) else [value])]
    if value is None:
        return ""
    if control == "checkbox":
        return "true" if value else ""
    if control == "datetime-local" and isinstance(value, dt.datetime):
        # Wall time with no zone: browsers never convert it (the zone is its own field).
        return value.strftime("%Y-%m-%dT%H:%M" + (":%S" if value.second else ""))
    if control == "text-list" and isinstance(value, list):
        return "\n".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_form(control: str, form: FormData, name: str) -> object:
    """What a posted form sets a field to, in the shape `from_request` reads (text as
    the interface takes it); NOT_SENT when the form has no input of that name. Every
    form of the editing pages shows all its fields: an unticked box is false."""
    if control in LIST_CONTROLS:
        return [v.strip() for v in form.getlist(name) if v.strip()]
    if control == "checkbox":
        return "true" if form.get(name) else "false"
    raw = form.get(name)
    if raw is None:
        return NOT_SENT
    raw = raw.replace("\r\n", "\n")  # browsers post line breaks as CRLF
    if control == "text-list":
        return [line.strip() for line in raw.splitlines() if line.strip()]
    if control == "datetime-local":
        found = _WALL_TIME.fullmatch(raw.strip())
        if found:  # the input's 2027-03-05T19:30 as the interface writes it
            return f"{found[1]} {found[2]}{found[3] or ':00'}"
    return raw


class LinkTarget(Protocol):
    """What a field type asks of a resource description (resources.Resource)."""

    is_term: bool
    singular: str
    schema_name: str

    def field(self, name: str) -> Any: ...


# Every resource description by collection name, filled by resources.py as it declares
# them. Link types name their target by collection and look it up here when asked, so
# field types depend on this module, not on resources.py (which imports them).
RESOURCES: dict[str, LinkTarget] = {}


class FieldType:
    """The base of the types. Class attributes describe the type; the dataclass fields
    of a subclass are the options a field declares."""

    control: ClassVar[str] = "text"  # form control: text, textarea, number, checkbox, ...
    is_text: ClassVar[bool] = False  # a number written unquoted is read as one: warned
    finding: ClassVar[str] = "wrong-type"  # `check`'s code for a value it refuses
    arg_type: ClassVar[str] = "string"  # WordPress argument type ("" = none declared)
    arg_items: ClassVar[Mapping[str, str] | None] = None
    searchable = False  # its words are found by search (an option of the text types)
    target = ""  # collection a link type points at
    write_default = False  # written to files even when it is the field's default

    def from_file(self, value: object, key: str) -> object:
        """The value a record holds for a (non-null) file value; raises RecordError.
        Unless a type says otherwise, text."""
        return file_text(value, key)

    def from_request(self, raw: object, name: str, ctx: RequestContext) -> object:
        """The value a body sets (None: the field is cleared); raises ApiError."""
        raise NotImplementedError

    def to_file(self, value: object) -> object:
        """The value as written to a file; None leaves the key out."""
        return value

    def json_schema(self) -> dict:
        """The file value's JSON Schema, description apart."""
        return {"type": "string"}

    def json_description(self, description: str) -> str:
        return description[:1].upper() + description[1:]

    def openapi(self, description: str) -> dict[str, Any]:
        """The field as a member of the read representation in `/doc`."""
        return {"type": self.arg_type or "string", "description": description}

    def wp_argument(self) -> tuple[str, Mapping[str, str] | None]:
        """(type, items) of the field as a write argument."""
        return self.arg_type, self.arg_items

    # -- the form control facet (the editing pages) ------------------------------
    def form_value(self, value: object) -> Any:
        """The value as this type's control shows it (`form_text`)."""
        return form_text(self.control, value)

    def from_form(self, form: FormData, name: str) -> object:
        """The request value a posted form gives, or NOT_SENT (`read_form`)."""
        return read_form(self.control, form, name)

    def form_attrs(self, value: object = None) -> dict[str, str]:
        """HTML attributes of the control beyond name and value (bounds, steps)."""
        if self.control == "datetime-local":
            seconds = isinstance(value, dt.datetime) and value.second
            return {"step": "1" if seconds else "60"}
        return {}

    def form_options(self) -> tuple[str, ...]:
        """The values a select offers (the calendar's records fill link controls)."""
        return ()
