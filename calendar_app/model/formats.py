"""The forms values take wherever they are read: web and e-mail addresses, dates in
files, WordPress booleans, ids in digits."""

from __future__ import annotations

import re

# An absolute web address: what `url` fields hold, in files and in request bodies.
URL = re.compile(r"https?://[^\s/$.?#][^\s]*", re.IGNORECASE)
# An e-mail address, what `email` fields hold: an RFC 5322 dot-atom addr-spec (letters
# and digits beyond ASCII allowed, RFC 6531) with a dotted domain. Feeds write it as a
# mailto: address, so no whitespace, control character, quote, bracket or comment.
_ATOM = r"(?:[!#$%&'*+/=?^_`{|}~-]|[^\W_])+"  # alternatives disjoint: no backtracking
_LABEL = r"[^\W_]+(?:-+[^\W_]+)*"
EMAIL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})+")
# What from_file accepts for dates: seconds and the time may be left out.
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$"
OFFSET_PATTERN = r"^UTC[+-]\d{1,2}([.:]\d{1,2})?$"
_TRUE = {"true", "1", "yes", "on"}


def valid_email(value: str) -> bool:
    """An address `EMAIL` matches, of at most 254 characters, 64 before the @."""
    return (len(value) <= 254 and EMAIL.fullmatch(value) is not None
            and len(value.rpartition("@")[0]) <= 64)


def parse_bool(value: object) -> bool | None:
    """The WordPress REST boolean: true/false, "true"/"false", "1"/"0", 1/0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    return None


def truthy(value: object) -> bool:
    """Loose truthiness of text flags (venue show_map, strict_dates, ...)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²", which int() refuses."""
    return text.isascii() and text.isdigit() and len(text) < 19
