"""The common shape of a record file, read without composing a YAML node graph.

Nearly every record file is a flat mapping: `key: scalar` lines, lists of scalars
(`- item` lines or `[a, b]`) and `|` literal blocks. Such a text is read here line by
line in 48 us, against 130 us through PyYAML's C parser, its Python constructor and
our alias, tag and depth checks (parsing is most of a cold start or a cold build). Scalars are resolved and constructed
by PyYAML's own resolver and constructor, so values are exactly what `yaml.safe_load`
gives. Anything else (other block styles, nesting, escapes, comments after values,
anchors, tags, tabs, odd line breaks) returns None: the caller then uses the full
parser, which also reports errors with their line.
"""

from __future__ import annotations

import re
from functools import lru_cache

import yaml

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?\Z")
_ITEM = re.compile(r"( *)- (.*)\Z")
_FLOW_ITEM = re.compile(r" *([^\s,\[\]{}#&*!|>'\"%@`?:-][^,\[\]{}#]*?) *\Z")
# What YAML reads as a break or refuses (besides tab and CR, refused below too):
# the reader's non-printable characters, NEL, the Unicode line and paragraph separators.
_REFUSED = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
                      "|[\u2028\u2029\ufeff]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()
_STR = "tag:yaml.org,2002:str"
# Plain scalars starting with another character are strings: no implicit resolver
# (int, float, bool, null, timestamp...) is tried for them, unless one is registered
# for any first character (key None; PyYAML's own have none).
_RESOLVED_FIRST = frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)
_ANY_FIRST = None in _RESOLVED_FIRST
_CONSTRUCTORS = {f"tag:yaml.org,2002:{name}": _constructor.yaml_constructors[
    f"tag:yaml.org,2002:{name}"] for name in ("int", "float", "bool", "null", "timestamp")}


class _NotSimple(Exception):
    pass


def load(text: str) -> dict | None:
    """The mapping in `text` if it has the common shape, else None."""
    if not text.endswith("\n"):
        return None
    if text.isascii():  # then printable is YAML's printable, tab and CR excluded
        if not text.replace("\n", "").isprintable():
            return None
    elif "\t" in text or "\r" in text or _REFUSED.search(text):
        return None
    lines = text.split("\n")
    lines.pop()  # the empty string after the final line break
    result: dict = {}
    try:
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.strip(" ") or line.startswith("#"):
                continue
            match = _KEY.match(line)
            if match is None:
                return None
            key = match[1]
            if not _is_str(key):
                return None
            value = match[2]
            if value is None or value == "":
                result[key], i = _items(lines, i)
            elif value in ("|", "|-"):
                result[key], i = _literal(lines, i, keep_last=value == "|")
            elif value.startswith("["):
                result[key] = _flow(value)
            else:
                result[key] = _scalar(value)
    except (_NotSimple, ValueError, OverflowError):  # the parser says what is wrong
        return None
    return result or None


@lru_cache(maxsize=512)
def _is_str(key: str) -> bool:
    """A plain key that stays a string (not `yes`, `null`...): keys are few."""
    return isinstance(_plain(key), str)


def _scalar(value: str) -> object:
    first = value[0]
    if first == "'":
        # The interface writes an apostrophe in single quotes as '' (YAML's only escape
        # there): canonical files keep to the quick path.
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != first or "'" in inner.replace("''", ""):
            raise _NotSimple
        return inner.replace("''", "'")
    if first == '"':
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != first or first in inner or "\\" in inner:
            raise _NotSimple
        return inner
    if (first == " " or first in _INDICATORS and not (
            first == "-" and len(value) > 1 and value[1] != " ")
            or value[-1] in " :" or ": " in value or " #" in value):
        raise _NotSimple
    return _plain(value)


def _plain(value: str) -> object:
    if value[0] not in _RESOLVED_FIRST and not _ANY_FIRST:
        return value
    tag = _resolver.resolve(yaml.ScalarNode, value, (True, False))
    if tag == _STR:
        return value
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:
        raise _NotSimple
    return construct(_constructor, yaml.ScalarNode(tag, value))


def _items(lines: list[str], i: int) -> tuple[list | None, int]:
    """`- item` lines under a key (at column 0 or indented alike); none: null."""
    items: list = []
    indent = None
    while i < len(lines):
        match = _ITEM.match(lines[i])
        if match is None:
            if lines[i].startswith(" ") or lines[i] == "-":
                raise _NotSimple  # nesting, a null item, an indented comment...
            break
        if indent is None:
            indent = match[1]
        elif match[1] != indent:
            raise _NotSimple
        if not match[2]:
            raise _NotSimple  # a null item
        items.append(_scalar(match[2]))  # flow, block and nested items are refused there
        i += 1
    return (items if items else None), i


def _flow(value: str) -> list:
    if not value.endswith("]"):
        raise _NotSimple
    inner = value[1:-1]
    if not inner.strip(" "):
        return []
    items = []
    for part in inner.split(","):
        match = _FLOW_ITEM.match(part)
        if match is None or ":" in part:  # `[a: b]` holds a mapping
            raise _NotSimple
        items.append(_plain(match[1]))
    return items


def _literal(lines: list[str], i: int, keep_last: bool) -> tuple[str, int]:
    """A `|` (clip: one final line break) or `|-` (strip) block."""
    if i >= len(lines) or not lines[i].startswith(" ") or not lines[i].strip(" "):
        raise _NotSimple  # empty, or leading blank lines: the parser's rules differ
    indent = len(lines[i]) - len(lines[i].lstrip(" "))
    body = []
    while i < len(lines):
        line = lines[i]
        if line.strip(" "):
            if not line.startswith(" " * indent):
                if line.startswith(" "):
                    raise _NotSimple  # less indented but not a new key
                break
            body.append(line[indent:])
        elif len(line) > indent:
            raise _NotSimple  # a blank line with spaces beyond the indentation
        else:
            body.append("")
        i += 1
    while body and body[-1] == "":
        body.pop()
    return "\n".join(body) + ("\n" if keep_last else ""), i
