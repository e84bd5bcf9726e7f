"""YAML text of records: fast safe loading, canonical dumping, comment-keeping edits.

Whole-tree reads use the C loader (ten times faster than the pure-Python one); only
the one file being edited goes through ruamel's round-trip parser, so its comments and
untouched lines survive and the git diff shows just what changed.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from . import fastyaml, simpleyaml

MAX_FILE_BYTES = 1 << 20  # a record file above 1 MiB is refused unread
MAX_DEPTH = 20

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(ValueError):
    """A file that is not a valid record document; `line` is 1-based (0 = unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class _Unreadable:
    """Stands for a value YAML recognises but cannot build (`2027-02-30 10:00:00`, a
    5,000-digit number): the rest of the document is still built, and the value's
    place is known for the report."""

    __slots__ = ("error",)

    def __init__(self, error: YamlError) -> None:
        self.error = error


def _lenient(construct: Callable) -> Callable:
    def build(loader: yaml.BaseLoader, node: yaml.ScalarNode) -> object:
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            return _Unreadable(YamlError(f"{shown!r} cannot be read: {str(exc)[:120]}",
                                         node.start_mark.line + 1, node.start_mark.column + 1))
    return build


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    pass


for _name in ("int", "float", "timestamp"):
    _tag = f"tag:yaml.org,2002:{_name}"
    _Loader.add_constructor(_tag, _lenient(_BaseLoader.yaml_constructors[_tag]))


def _depth(value: object, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level)
    return level


def load(data: bytes) -> dict:
    """Parse one record file. Refuses aliases (YAML bombs), tags, NULs, deep nesting,
    and values that cannot be built (the first one, with its line and column)."""
    value, unreadable = load_partial(data)
    if unreadable:
        raise unreadable[0][1]
    return value


def load_partial(data: bytes) -> tuple[dict, list[tuple[str, YamlError]]]:
    """Like `load`, but a top-level key whose value cannot be built is left out and
    reported as (key, error) instead, so a check can go on with the rest of the file."""
    value, simple = _load(data)
    if simple:  # simpleyaml gives up on a value it cannot build: nothing to look for
        return value, []
    bad = {k: u for k, v in value.items() if (u := _first_unreadable([k, v])) is not None}
    for key in bad:
        del value[key]
    return value, [("" if isinstance(k, _Unreadable) else str(k), u.error)
                   for k, u in bad.items()]


def _first_unreadable(value: object) -> _Unreadable | None:
    if isinstance(value, _Unreadable):
        return value
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((u for v in value if (u := _first_unreadable(v)) is not None), None)
    return None


def _load(data: bytes) -> tuple[dict, bool]:
    """The mapping, and whether the flat shape's reader (simpleyaml) read it."""
    if len(data) > MAX_FILE_BYTES:
        raise YamlError(f"file is larger than {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlError("file is not valid UTF-8", line) from None
    if "\x00" in text:
        raise YamlError("file contains a NUL byte", text[: text.index("\x00")].count("\n") + 1)
    simple = simpleyaml.load(text)
    if simple is not None:  # the common flat shape: no aliases, tags or nesting
        return simple, True
    _check_nesting(text)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            # Aliases are what make billion-laughs bombs; records never need them.
            # The composed graph is checked before anything is constructed.
            _refuse_aliases_and_tags(node)
        value = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise YamlError(_tab_hint(text, mark) or str(exc.problem or exc), line, col) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc)) from None
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. a 100,000-digit number
        raise YamlError(f"a value cannot be read: {str(exc)[:120]}") from None
    finally:
        loader.dispose()
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise YamlError("a record file must hold a mapping of keys to values", 1)
    if _depth(value) > MAX_DEPTH:
        raise YamlError("structure is nested too deeply", 1)
    return value, False


# Suspicious texts: a run of MAX_DEPTH "- " (nested sequences on one line) or a line
# indented by 4 * MAX_DEPTH. Patterns that start with a literal or at the start: one
# alternation with a line anchor was tried at every character (40 us a file).
_DASHES = re.compile(rf"-[ \t]+(?:-[ \t]+){{{MAX_DEPTH - 1}}}")
_INDENT = re.compile(rf"[ \t]{{{4 * MAX_DEPTH}}}")  # matched at the start of the text
_INDENTED_LINE = re.compile(rf"\n[ \t]{{{4 * MAX_DEPTH}}}")
_OPEN = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken,
         yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _tab_hint(text: str, mark: yaml.Mark | None) -> str:
    """PyYAML names a tab only sometimes ("found character that cannot start any
    token"): say what it is and what to do."""
    if mark is None or mark.index >= len(text) or text[mark.index] != "\t":
        return ""
    return (f"a tab character at line {mark.line + 1}, column {mark.column + 1}: YAML "
            "indents with spaces only; replace the tab with spaces")


def _check_nesting(text: str) -> None:
    """Refuse deep nesting before composing: the C composer recurses and a few
    thousand levels crash the process. Only suspicious texts are scanned."""
    if (text.count("[") + text.count("{") <= 2 * MAX_DEPTH and not _DASHES.search(text)
            and not _INDENT.match(text) and not _INDENTED_LINE.search(text)):
        return
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlError("structure is nested too deeply",
                                    token.start_mark.line + 1, token.start_mark.column + 1)
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.YAMLError:
        return  # the parser reports the syntax error with its position


_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in (
    "str", "int", "float", "bool", "null", "timestamp", "map", "seq"))


def _refuse_aliases_and_tags(root: yaml.Node) -> None:
    """An alias makes a node appear twice in the graph; a tag other than the plain
    types (`!!python/object`, `!custom`) would construct something else."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise YamlError("YAML anchors and aliases are not allowed in record files",
                            node.start_mark.line + 1)
        seen.add(id(node))
        if node.tag not in _PLAIN_TAGS:
            raise YamlError("YAML tags are not allowed in record files",
                            node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


class _CanonicalDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True  # record files never use anchors, even for repeated values

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # lists indented under their key


# Characters a literal block cannot hold, and that YAML reads back as something else
# unless escaped (NEL and the Unicode line separators become line breaks).
_SPECIAL = re.compile("[\x00-\x08\x0b\x0c\r\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff"
                      "\ud800-\udfff\ufffe\uffff]")


def _has_special(value: object) -> bool:
    if isinstance(value, str):
        return bool(_SPECIAL.search(value))
    if isinstance(value, dict):
        return any(_has_special(k) or _has_special(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_special(v) for v in value)
    return False


# A tab, or a space before a line break or at the very end: a literal block would hold
# them, but PyYAML will not write one (editors strip such spaces), so both writers quote.
_NOT_IN_BLOCK = re.compile(r"\t| (?:\n|\Z)")


def _text_style(value: str) -> str | None:
    """How a text is written: with a line break (one line ending in one too) as a
    literal block, `|` or `|-` / `|+` when it does not end in exactly one break, so
    it reads back exactly; in double quotes when a block cannot hold it; one line as
    the dumper likes (None)."""
    if "\n" not in value:
        return None
    return '"' if _SPECIAL.search(value) or _NOT_IN_BLOCK.search(value) else "|"


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=_text_style(value))


_CanonicalDumper.add_representer(str, _represent_str)


def dump(mapping: dict) -> str:
    """Canonical text of a record: keys in the given order, block style, UTF-8."""
    fast = fastyaml.dump(mapping)  # the usual flat record, without PyYAML's emitter
    if fast is not None:
        return fast
    return slow_dump(mapping)


def slow_dump(mapping: dict) -> str:
    """`dump` by PyYAML's emitter alone: any shape, and the reference for fastyaml."""
    return _without_end_marker(yaml.dump(
        mapping, Dumper=_CanonicalDumper, sort_keys=False,
        allow_unicode=not _has_special(mapping),  # else every odd character is escaped
        default_flow_style=False, width=4096,
    ))


def _without_end_marker(text: str) -> str:
    """Text without the `...` both emitters add after a final `|+` block: the end of the
    file ends the block just as well, and a record file is one document."""
    return text[:-4] if text.endswith("\n...\n") else text


def _rt() -> YAML:
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096
    return rt


_RESOLVER = yaml.resolver.Resolver()


def _reads_as_other_type(value: str) -> bool:
    """ruamel writes YAML 1.2, where `NO`, `on` or `1_000` are plain strings; our
    loader reads YAML 1.1, where they are a bool and a number: such text is quoted."""
    return _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str"


def _rt_value(value: object, replaced: object = None) -> object:
    if isinstance(value, str) and _SPECIAL.search(value):
        return DoubleQuotedScalarString(value)  # escaped, whatever style the key had
    if isinstance(value, str) and _reads_as_other_type(value):
        # Single quotes, as the canonical form (`dump`) has them, so an edit of a
        # canonical file stays canonical; double if the value replaced had them.
        if isinstance(replaced, DoubleQuotedScalarString):
            return DoubleQuotedScalarString(value)
        return SingleQuotedScalarString(value)
    if isinstance(value, str) and "\n" in value:  # as `dump` writes it
        if _text_style(value) == "|":
            return LiteralScalarString(value)
        return DoubleQuotedScalarString(value)
    if isinstance(value, list):
        seq = CommentedSeq([_rt_value(v) for v in value])
        seq.fa.set_block_style()
        return seq
    if isinstance(value, dict):  # a nested block (recurrence): its texts quoted alike
        return CommentedMap((_rt_value(k), _rt_value(v)) for k, v in value.items())
    return value


def _replace_items(seq: CommentedSeq, items: list) -> None:
    """Change a list in place so its style stays; a comment after its last item (which
    reads as belonging to the next key) stays after the new last item."""
    if list(seq) == items:
        return
    trailing = seq.ca.items.get(len(seq) - 1)
    del seq[:]
    seq.ca.items.clear()
    seq.extend(_rt_value(item) for item in items)
    if trailing is not None:
        seq.ca.items[len(items) - 1] = trailing


def edit(text: str, changes: dict, order: Sequence[str]) -> str:
    """Apply `changes` (key -> value, None removes) to a file, keeping everything else.

    New keys are inserted where `order` puts them, so a hand-written file that is
    terser than the canonical form still reads in the usual order.
    """
    rt = _rt()
    if not re.search(r"^- ", text, re.MULTILINE):  # lists indented unless the file isn't
        rt.indent(mapping=2, sequence=4, offset=2)
    doc = rt.load(text)
    if _has_special(changes) or _has_special(doc):
        rt.allow_unicode = False
    if not isinstance(doc, CommentedMap):
        doc = CommentedMap()
    rank = {key: i for i, key in enumerate(order)}
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        elif key in doc and isinstance(doc[key], CommentedSeq) and isinstance(value, list):
            _replace_items(doc[key], value)
        elif key in doc:
            doc[key] = _rt_value(value, doc[key])
        else:
            keys = list(doc.keys())
            pos = sum(1 for k in keys if rank.get(k, len(rank)) < rank.get(key, len(rank)))
            doc.insert(pos, key, _rt_value(value))
    edited = _dumped(rt, doc)
    # ruamel reads YAML 1.2 and writes back some untouched scalars it took for numbers
    # in another form (`0e1`, a string to our YAML 1.1 loader, came back as `0e0`):
    # any untouched value that no longer reads the same is written again as a value.
    try:
        before, after = load(text.encode("utf-8")), load(edited.encode("utf-8"))
    except YamlError:
        return edited
    drifted = [k for k in before if k not in changes and after.get(k) != before[k]]
    for key in drifted:
        doc[key] = _rt_value(before[key])
    return _dumped(rt, doc) if drifted else edited


def _dumped(rt: YAML, doc: CommentedMap) -> str:
    out = io.StringIO()
    rt.dump(doc, out)
    return _without_end_marker(out.getvalue())
