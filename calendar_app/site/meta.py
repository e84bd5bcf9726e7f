"""What a page's head tells search engines and link previews: the description, the
Open Graph and Twitter card tags, and whether the page may be indexed.

Only values of the page itself (its record, canonical address and the calendar's
settings) go in, so the tags change exactly when the page's own signature does.
"""

from __future__ import annotations

from dataclasses import dataclass

# Search engines show about this many characters of a description.
DESCRIPTION_LENGTH = 160


@dataclass(frozen=True)
class HeadMeta:
    title: str
    description: str  # plain text, already shortened
    url: str  # the canonical address; "" for pages without one (404)
    image: str = ""  # absolute URL
    noindex: bool = False  # an event hidden from listings: reachable, not advertised
    # Open Graph type: an event page is "website" too (Open Graph has no event type
    # any more, and "article" asks for an author and publishing times).
    type: str = "website"

    @property
    def card(self) -> str:
        return "summary_large_image" if self.image else "summary"


def shorten(text: str, limit: int = DESCRIPTION_LENGTH) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters with an
    ellipsis when it is longer."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut and not text[limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-\u2013\u2014") + "\u2026"
