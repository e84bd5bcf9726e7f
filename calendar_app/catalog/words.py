"""The words of a record's text, as the search sees them: `\\w+` runs of the text with
HTML tags removed, lowered (index.ANALYZER's tokens, without Whoosh)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..model.records import Record

_TAGS = re.compile(r"<[^>]*>")
# Whoosh's RegexTokenizer yields every match of this pattern, LowercaseFilter lowers
# each; done here without Whoosh's per-token objects (3x faster when indexing).
_WORD = re.compile(r"\w+")


def _plain(value: object) -> str:
    return _TAGS.sub(" ", value) if isinstance(value, str) else ""


def tokens(text: str) -> list[str]:
    """index.ANALYZER's tokens."""
    return [t.lower() for t in _WORD.findall(text)]


# ASCII text: every byte that is not a word character (`\\w`: letters, digits, "_")
# becomes a space, and capitals are lowered, so `split` yields the lowered tokens.
_ASCII_WORDS = bytes(c if chr(c).isalnum() or c == 95 else 32
                     for c in range(128)).lower() + b" " * 128


def word_set(fields: tuple[str, ...]) -> Callable[[Record], set[bytes]]:
    """The distinct tokens of a record's `fields` (what `document` indexes), UTF-8
    encoded, for `Postings`; ~3x faster than `tokens`. ASCII text (most) is mapped
    byte by byte in C (`_ASCII_WORDS`); other text is split on whitespace (never part
    of a word), and only the distinct pieces that are not one word already (`isalnum`
    is `\\w` without "_") go through the regular expression."""
    findall = _WORD.findall

    def words(record: Record) -> set[bytes]:
        data = record.data
        text = " ".join(v for name in fields if isinstance(v := data.get(name), str))
        if "<" in text:
            text = " ".join(_plain(data.get(name)) for name in fields)
        if text.isascii():
            return set(text.encode().translate(_ASCII_WORDS).split())
        found: set[str] = set()
        for piece in set(text.split()):
            if piece.isalnum():
                found.add(piece)
            else:
                found.update(findall(piece))
        return {w.lower().encode("utf-8", "surrogatepass") for w in found}
    return words
