"""URL slugs: WordPress-style normalisation, de-duplication and a filesystem guard.

Slugs double as YAML file names in the content tree, so besides imitating
WordPress `sanitize_title` we keep them plain ASCII and offer `is_safe_slug` as the
last check before a slug is turned into a path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = ["MAX_LENGTH", "RESERVED", "is_safe_slug", "sanitize_title", "unique_slug",
           "unsafe_slug_message"]

# WordPress stores post_name in a varchar(200).
MAX_LENGTH = 200

# Words WordPress refuses as top-level slugs because they collide with feed/embed URLs.
RESERVED = frozenset({"feed", "rdf", "rss", "rss2", "atom", "embed"})

# Letters that Unicode decomposition does not reduce to ASCII (a subset of WordPress
# remove_accents that covers the common Latin alphabets).
_TRANSLIT = str.maketrans({
    "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o",
    "Ø": "o", "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "ł": "l", "Ł": "l", "þ": "th",
    "Þ": "th", "ħ": "h", "Ħ": "h", "ı": "i", "ĸ": "k", "ŀ": "l", "Ŀ": "l", "ŋ": "n",
    "Ŋ": "n", "ŧ": "t", "Ŧ": "t", "ſ": "s", "ƒ": "f",
    # Typographic dashes and spaces separate words like their ASCII cousins.
    "\u2013": "-", "\u2014": "-", "\u00a0": " ",
})  # fmt: skip

# Like PHP strip_tags: "<" only opens a tag when a name, "/", "!" or "?" follows.
_TAG = re.compile(r"<!--.*?(?:-->|\Z)|<[A-Za-z/!?][^>]*(?:>|\Z)", re.DOTALL)
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);")
_SEPARATORS = re.compile(r"[\s./]+")
_DISALLOWED = re.compile(r"[^a-z0-9_-]+")
_DASHES = re.compile(r"-{2,}")
_SAFE = re.compile(r"[a-z0-9_.-]{1,200}", re.ASCII)


def sanitize_title(text: str) -> str:
    """WordPress ``sanitize_title``: ``"Summer Fête & BBQ!"`` -> ``"summer-fete-bbq"``.

    Characters that have no ASCII transliteration (Cyrillic, CJK, emoji, ...) are
    dropped rather than percent-encoded as WordPress does, so a slug is always safe as
    a file name. When nothing is left the result is ``""``; callers decide on a
    fallback (for example the record id).
    """
    text = _TAG.sub("", text)
    # WordPress drops entities outright, which is how "&amp;" disappears from slugs.
    text = _ENTITY.sub("", text)
    text = text.translate(_TRANSLIT)
    text = unicodedata.normalize("NFKD", text)
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    text = _SEPARATORS.sub("-", text)
    text = _DISALLOWED.sub("", text)
    text = _DASHES.sub("-", text).strip("-")
    # Truncating can expose a trailing dash; strip again so the result is idempotent.
    return text[:MAX_LENGTH].strip("-")


def unique_slug(base: str, taken: Callable[[str], bool]) -> str:
    """`base` if it is free and not reserved, else ``base-2``, ``base-3``, ...

    Like WordPress, a long base is shortened so the suffixed slug still fits in
    MAX_LENGTH characters. An empty base is a caller bug and raises ValueError.
    """
    if not base:
        raise ValueError("empty slug")
    if base not in RESERVED and not taken(base):
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        stem = base
        if len(stem) + len(suffix) > MAX_LENGTH:
            # Cut the base, not the suffix, and do not leave "word--2" behind.
            stem = stem[: MAX_LENGTH - len(suffix)].rstrip("-")
        candidate = stem + suffix
        if candidate not in RESERVED and not taken(candidate):
            return candidate
        n += 1


def is_safe_slug(slug: str) -> bool:
    """True when `slug` may be used as a file name inside the content tree.

    Only ``a-z 0-9 _ - .``, 1 to 200 characters, no leading dot and no ``..``: that
    excludes separators, traversal, hidden files, NUL/control characters and spaces.
    """
    return (
        isinstance(slug, str)
        and _SAFE.fullmatch(slug) is not None
        and not slug.startswith(".")
        and ".." not in slug
    )


def unsafe_slug_message(slug: object) -> str:
    """Why `is_safe_slug` refuses `slug`, in the words of the loader and of `check`."""
    return (f"slug {slug!r} is not a valid slug: only a-z, 0-9, '-', '_' and '.', "
            f"1 to {MAX_LENGTH} characters, not starting with '.' nor holding '..'")
