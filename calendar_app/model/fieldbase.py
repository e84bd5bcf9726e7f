"""What every field type (fieldtypes.py) builds on: the base class, the errors of
files, what reading a request value may ask of the calendar."""

from __future__ import annotations

import datetime as dt
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

    # The `tec/v1` namespace (catalog/tec_bodies.py) checks a body member by its OpenAPI
    # schema: a type says its schema there, and the plugin's error code for a bad value.
    tec_code: ClassVar[str] = "tec_rest_invalid_string_argument"
    tec_type: ClassVar[Mapping[str, Any] | None] = None  # None: {"type": arg_type}

    def tec_schema(self) -> dict[str, Any]:
        """The field as a `tec/v1` request body member (OpenAPI 3)."""
        return dict(self.tec_type or {"type": self.arg_type or "string"})
