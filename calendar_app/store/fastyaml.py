"""A fast writer of the canonical record text, for the shapes records nearly always
have: a flat mapping of plain keys to scalars and lists of scalars.

It writes exactly what `yamlfile.dump` (PyYAML's pure-Python emitter with our
representers) writes, a fifth of the time or less: importing 10,000 records spent most
of its time in that emitter. Whatever it cannot prove it writes the same (a nested
mapping, a tab, a control character, a line long enough to be folded, a type of its own)
makes `dump` answer None and the caller takes the slow path. The rules below follow
the emitter's own analysis of a scalar (`Emitter.analyze_scalar`, `choose_scalar_style`);
tests/test_fastyaml.py compares both writers over generated records.
"""

from __future__ import annotations

import datetime as dt
import math
import re

import yaml

# Characters the emitter writes as they are with `allow_unicode` (its "printable" set),
# less the ones that make the canonical writer escape the whole file (yamlfile._SPECIAL)
# and the tab (always double-quoted). A text with any other character is not ours.
_SAFE = re.compile("[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                   "\U00010000-\U0010fffe]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
# The emitter folds a line at a space once it passes the width (4096): lines longer than
# this are left to it.
MAX_LINE = 4000
_STR = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()
# First characters for which the resolver has a rule: a text starting otherwise is a str.
# (A rule for any first character, None, would make every text go to the resolver.)
_RULED = frozenset(k for k in _RESOLVER.yaml_implicit_resolvers if k)
_ANY_RULED = None in _RESOLVER.yaml_implicit_resolvers
_KEYS_OK: dict[str, bool] = {}  # field names seen: the same few thousand times over


class _Unsure(Exception):
    """A value this writer cannot prove it writes as the canonical writer does."""


def _resolves_as(text: str, tag: str) -> bool:
    if tag == _STR and text and text[0] not in _RULED and not _ANY_RULED:
        return True
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == tag


def _plain_shape(text: str) -> bool:
    """Does the emitter's analysis allow a one-line text (printable, no break) plain in
    block context? (Whether it reads back as the same type is the resolver's part.)"""
    if not text or text[0] == " " or text[-1] == " " or text[0] in _FIRST_INDICATORS:
        return False
    if text[0] in "?:-" and (len(text) == 1 or text[1] == " "):
        return False
    return not (text.startswith(("---", "...")) or ": " in text or " #" in text
                or text[-1] == ":")


def _one_line(text: str) -> str:
    """A one-line text as the emitter writes it: plain, or single-quoted."""
    if _plain_shape(text) and _resolves_as(text, _STR):
        return text
    return "'" + text.replace("'", "''") + "'"


def _literal(text: str, indent: str) -> str:
    """A text with line breaks as a literal block (`|`, `|-`, `|+`, `|2...`)."""
    hints = "2" if text[0] in " \n" else ""
    if text[-1] != "\n":
        hints += "-"
    elif len(text) == 1 or text[-2] == "\n":
        hints += "+"
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return f"|{hints}\n" + "".join(f"{indent}{line}\n" if line else "\n" for line in lines)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    # PyYAML's float representer: "1e+20" is not a YAML 1.1 float, "1.0e+20" is.
    return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text


def _scalar(value: object, indent: str, width: int) -> str:
    """A scalar's text after `key: ` or `- `, `width` columns already taken."""
    kind = type(value)
    if kind is str:
        if _SAFE.fullmatch(value) is None:  # type: ignore[arg-type]
            raise _Unsure
        if "\n" in value:  # type: ignore[operator]
            # yamlfile._text_style: double quotes when a block cannot hold the text.
            if " \n" in value or value.endswith(" "):  # type: ignore[union-attr]
                raise _Unsure
            return _literal(value, indent)  # type: ignore[arg-type]
        text = _one_line(value)  # type: ignore[arg-type]
    elif kind is bool:
        return "true\n" if value else "false\n"
    elif value is None:
        return "null\n"
    elif kind is int:
        text, tag = str(value), "tag:yaml.org,2002:int"
        if not _resolves_as(text, tag):
            raise _Unsure
    elif kind is float:
        text = _float_text(value)  # type: ignore[arg-type]
        if not _resolves_as(text, "tag:yaml.org,2002:float"):
            raise _Unsure
    elif kind is dt.datetime or kind is dt.date:
        text = value.isoformat(" ") if kind is dt.datetime else value.isoformat()  # type: ignore[attr-defined]
        if not _resolves_as(text, "tag:yaml.org,2002:timestamp"):
            raise _Unsure
    else:
        raise _Unsure  # a type of its own: the representers decide (or refuse)
    if kind is not str and not _plain_shape(text):
        raise _Unsure
    if width + len(text) > MAX_LINE:
        raise _Unsure
    return text + "\n"


def _key_ok(key: str) -> bool:
    """Is the key written plain (and as a simple key)?"""
    ok = _KEYS_OK.get(key)
    if ok is None:
        ok = bool(_KEY.fullmatch(key)) and _resolves_as(key, _STR)
        if len(_KEYS_OK) < 10_000:
            _KEYS_OK[key] = ok
    return ok


def dump(mapping: dict) -> str | None:
    """The canonical text of `mapping`, or None when it is not a shape written here."""
    if not mapping:
        return None
    out = []
    try:
        for key, value in mapping.items():
            if type(key) is not str or not _key_ok(key):
                return None
            if type(value) is list:
                if not value:
                    return None  # `key: []`: flow style, left to the emitter
                out.append(f"{key}:\n")
                for item in value:
                    if type(item) is str and "\n" in item:
                        return None  # a block inside a list item: rare, not ours
                    out.append("  - " + _scalar(item, "", 4))
            else:
                out.append(f"{key}: " + _scalar(value, "  ", len(key) + 2))
    except (_Unsure, ValueError):  # ValueError: an int too long for str()
        return None
    return "".join(out)
