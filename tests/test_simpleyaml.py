"""The flat-record reader gives what `yaml.safe_load` gives, or declines."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from calendar_app.store import simpleyaml, yamlfile

SAMPLE = Path(__file__).resolve().parent.parent / "content"


def same(fast: dict, text: str) -> None:
    """Same keys, order, values and types as PyYAML (repr tells 1 from True)."""
    assert repr(fast) == repr(yaml.load(text, Loader=yaml.CSafeLoader))


def test_every_sample_record_takes_the_quick_path() -> None:
    files = sorted(SAMPLE.rglob("*.yaml"))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        fast = simpleyaml.load(text)
        if "\nrecurrence:\n" in text:  # a nested block: the full parser reads it
            assert fast is None, path
            continue
        assert fast is not None, path
        same(fast, text)


def test_values_are_constructed_as_yaml_does() -> None:
    text = ("id: 7\nall_day: yes\nno_value:\ncost: '10'\nprice: 1_000\nstart: 2026-01-02\n"
            "when: 2026-01-02 10:00:00\nratio: .5\ntilde: ~\nlng: -117.4\n"
            "tags: [a b, 3, on]\nlist:\n- x\n- 2026-01-02\nquoted: \"a # b: c\"\n"
            "apostrophes: 'it''s ''quoted'''\n"
            "text: |\n  one\n\n    two\n\n\nafter: |-\n  kept\n")
    fast = simpleyaml.load(text)
    assert fast is not None
    same(fast, text)
    assert fast["all_day"] is True and fast["no_value"] is None and fast["price"] == 1000
    assert fast["when"] == dt.datetime(2026, 1, 2, 10) and fast["tags"] == ["a b", 3, True]
    assert fast["text"] == "one\n\n  two\n" and fast["after"] == "kept"


@pytest.mark.parametrize("text", [
    "a:\n  b: 1\n",                       # nesting
    "a: &x 1\nb: *x\n",                   # anchors and aliases
    "a: !!python/object:os.system 1\n",   # tags
    "a: |+\n  kept\n\n",                  # keep chomping
    "a: >\n  folded\n",                   # folded block
    "a: 1 # comment\n",                   # comment after a value
    "a: \"esc\\n\"\n",                    # escapes
    "a: x\n  continued\n",                # multi-line plain scalar
    "---\na: 1\n",                        # document marker
    "a: 1",                               # no final line break
    "a:\tb\n",                            # tab
    "a: b\r\n",                           # CR
    "a: b\u2028c\n",                      # a Unicode line separator
    "a: b\x85c\n",                        # NEL
    "yes: 1\n",                           # a key that is not a string
    "a: [x: y]\n",                        # a mapping in a flow sequence
    "a: b: c\n",                          # not YAML
    "a: [b\n",                            # not YAML
    "- a\n",                              # not a mapping
    "# only a comment\n",                 # nothing
    "id: " + "9" * 5000 + "\n",           # an int Python refuses to convert
])
def test_other_shapes_are_declined_and_read_by_the_parser(text: str) -> None:
    assert simpleyaml.load(text) is None


def test_declined_text_still_loads_or_fails_as_before() -> None:
    assert yamlfile.load(b"a:\n  b: 1\n") == {"a": {"b": 1}}
    with pytest.raises(yamlfile.YamlError) as caught:
        yamlfile.load(b"a: 1\nb: *x\n")
    assert caught.value.line == 2


_KEYS = st.sampled_from(["id", "title", "yes", "null", "on", "x-y", "k", "description",
                         "No", "true_ish", "_a", "a1"])
_CHARS = st.sampled_from(list("aZ09 .:#-_,[]{}|>&*!%@`'\"~\\/?=<+") + [
    "\t", "\n", "\u2028", "\x85", "\xa0", "é", "\x07", "\ufeff", "  "])
_TEXT = st.lists(_CHARS, max_size=12).map("".join)
_WORDS = st.sampled_from(["yes", "No", "null", "~", "12", "-3", "0x1F", "1_0", "3.5e2",
                          ".inf", "2026-01-02", "2026-01-02 03:04:05", "2026-1-2",
                          "1:30", "true", "=", "<<", "hello world", "007", "+1", "0o7"])
_SCALAR = st.one_of(_TEXT, _WORDS)


@st.composite
def _value(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "double", "single", "flow", "block", "literal"]))
    if kind == "plain":
        return " " + draw(_SCALAR)
    if kind == "double":
        return f' "{draw(_SCALAR)}"'
    if kind == "single":
        return f" '{draw(_SCALAR)}'"
    if kind == "flow":
        return " [" + ",".join(draw(st.lists(_SCALAR, max_size=4))) + "]"
    if kind == "block":
        indent = draw(st.sampled_from(["", "  ", " "]))
        items = draw(st.lists(_SCALAR, max_size=3))
        return "\n" + "".join(f"{indent}- {item}\n" for item in items).rstrip("\n")
    header = draw(st.sampled_from(["|", "|-", "|+", "| "]))
    indent = draw(st.sampled_from(["  ", " ", "    "]))
    lines = draw(st.lists(st.one_of(_TEXT, st.sampled_from(["", " ", "   ", "      "])),
                          min_size=1, max_size=4))
    return f" {header}\n" + "\n".join(indent + line if line.strip() else line
                                      for line in lines)


@st.composite
def _document(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# note", "  ", " # indented"])))
        lines.append(draw(_KEYS) + ":" + draw(_value()))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


# Documents drawn: the default run draws 300 (the known hard cases are explicit examples);
# `-m slow` draws the full 1,500.
@pytest.mark.parametrize("size", [300, pytest.param(1500, marks=pytest.mark.slow)])
def test_quick_path_agrees_with_pyyaml(size: int) -> None:
    @settings(max_examples=size, deadline=None)
    @given(_document())
    @example("a: b\n\nc:\n  - d\n")
    @example("a: |\n  x\n   \n")
    @example("id: |\n  a\n\xa0\n")  # a no-break space is text to YAML, not a blank
    def agrees(text: str) -> None:
        fast = simpleyaml.load(text)
        if fast is not None:  # accepted: PyYAML reads the same (and does not fail)
            same(fast, text)

    agrees()


def test_a_value_the_quick_path_cannot_build_is_still_reported_with_its_key() -> None:
    # What the quick path reads is built whole, so yamlfile skips its search for
    # unbuildable values; one it cannot build sends the file to the full parser.
    text = b"id: 3\nstart_date: 2027-02-30 10:00:00\ntitle: x\n"
    assert simpleyaml.load(text.decode()) is None
    value, unreadable = yamlfile.load_partial(text)
    assert value == {"id": 3, "title": "x"}
    assert [key for key, _ in unreadable] == ["start_date"] and unreadable[0][1].line == 2
    assert yamlfile.load_partial(b"id: 3\ntitle: x\n") == ({"id": 3, "title": "x"}, [])
