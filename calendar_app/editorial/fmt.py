"""Canonical form of record files, comments kept.

The canonical text is exactly what the interface writes, `yamlfile.dump(to_file(r))`,
so a file formatted here and a file written by the interface cannot differ. Comments
are found with the YAML scanner (anything between tokens is whitespace or a comment,
so a `#` inside a quoted or block string is never mistaken for one) and put back next
to the key they belonged to. A comment whose key disappears (a default value dropped)
moves to the next key; no comment is ever lost.

Why not a ruamel round trip: its emitter quotes, indents and writes dates differently
from the interface's, so two canonical forms would exist.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import yaml

from ..model import records
from ..model.records import RecordError
from ..store import yamlfile

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MODELINE = "# yaml-language-server:"


class FormatError(ValueError):
    """A file that is not a valid record: `check` explains why."""


@dataclass
class _Comments:
    header: list[str] = field(default_factory=list)
    header_blank: bool = False  # a blank line separated the header from the first key
    leading: dict[str, list[str]] = field(default_factory=dict)  # key -> lines above it
    trailing_of: dict[str, str] = field(default_factory=dict)  # key -> "  # eol comment"
    trailer: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # top-level keys as the file has them


def canonical_text(collection: str, path: str, data: bytes) -> str:
    """The canonical text of a record file (raises FormatError for invalid files)."""
    try:
        raw = yamlfile.load(data)
        mapping = records.to_file(records.from_file(collection, raw, path))
    except (yamlfile.YamlError, RecordError) as exc:
        raise FormatError(str(exc)) from None
    plain = yamlfile.dump(mapping)
    text = data.decode("utf-8")
    if "#" not in text:
        return plain
    comments = _find_comments(text)
    if comments is None:
        return plain
    return _splice(plain, list(mapping), comments)


def _find_comments(text: str) -> _Comments | None:
    tokens = list(yaml.scan(text, Loader=_Loader))
    keys: list[tuple[int, str]] = []  # (line, key) of top-level keys
    for tok, nxt in itertools.pairwise(tokens):
        if isinstance(tok, yaml.KeyToken) and tok.start_mark.column == 0 and isinstance(
                nxt, yaml.ScalarToken):
            keys.append((tok.start_mark.line, str(nxt.value)))
    found: list[tuple[int, bool, str]] = []  # (line, whole line?, comment with spacing)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for prev, nxt in itertools.pairwise(tokens):
        gap_start, gap_end = prev.end_mark.index, nxt.start_mark.index
        for m in re.finditer(r"#[^\n]*", text[gap_start:gap_end]):
            offset = gap_start + m.start()
            line = text.count("\n", 0, offset)
            before = text[line_starts[line]:offset]
            whole = before.strip() == ""
            spacing = before[len(before.rstrip()):] or " "
            found.append((line, whole, m.group().rstrip() if whole else spacing + m.group()))
    if not found:
        return None
    out = _Comments(order=[k for _, k in keys])
    first_key_line = keys[0][0] if keys else len(line_starts)
    lines = text.split("\n")
    pre = [c for c in found if c[0] < first_key_line]
    for line, _, comment in pre:
        gap_below = any(not lines[i].strip() for i in range(line + 1, first_key_line))
        if gap_below or comment.startswith(_MODELINE):
            out.header.append(comment)
            out.header_blank = out.header_blank or gap_below
        elif keys:
            out.leading.setdefault(keys[0][1], []).append(comment)
        else:
            out.trailer.append(comment)
    for line, whole, comment in found[len(pre):]:
        owner = max((k for k in keys if k[0] <= line), default=None)
        following = next((k for k in keys if k[0] > line), None)
        if not whole and owner and owner[0] == line:
            out.trailing_of[owner[1]] = comment
        elif whole and lines[line][:1] == "#":
            # A comment at the left margin introduces what follows it.
            if following:
                out.leading.setdefault(following[1], []).append(comment)
            else:
                out.trailer.append(comment)
        elif owner:
            # Inside a value (between list items): keep it above its key.
            out.leading.setdefault(owner[1], []).append(comment.strip())
        else:
            out.trailer.append(comment.strip())
    return out


def _blocks(plain: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    # Only the last line break goes: blank lines after it end a final `|+` block's text.
    for line in plain.removesuffix("\n").split("\n"):
        if line and not line[0].isspace() and not line.startswith("#"):
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def _splice(plain: str, keys: list[str], comments: _Comments) -> str:
    blocks = _blocks(plain)
    if len(blocks) != len(keys):  # never silently lose comments
        raise FormatError("cannot place comments in the canonical form")
    present = set(keys)
    carried: list[str] = []  # comments of keys the canonical form leaves out
    leading: dict[str, list[str]] = {}
    # Walk the keys in the file's order: a dropped key's comments go to the next kept one.
    for key in comments.order:
        above = comments.leading.get(key, [])
        if key in present:
            leading[key] = carried + above
            carried = []
        else:
            carried += above
            if key in comments.trailing_of:
                carried.append(comments.trailing_of[key].strip())
    out: list[str] = list(comments.header)
    if comments.header and comments.header_blank:
        out.append("")
    for key, block in zip(keys, blocks, strict=True):
        out += leading.get(key, [])
        first = block[0]
        if key in comments.trailing_of:
            first += comments.trailing_of[key]
        out.append(first)
        out += block[1:]
    out += carried + comments.trailer
    return "\n".join(out) + "\n"
