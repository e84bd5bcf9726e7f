"""HTML descriptions as plain text for calendar apps: the iCalendar DESCRIPTION and the
body of "add to calendar" links.

Calendar apps show that text as it is. Tags stripped into one run of words lose the
paragraphs, the lists and, worst, the address of every link: an online event's
registration or meeting link is the one thing its readers need. So paragraphs stay
apart (a blank line), list items start on their own line ("- ", or "1. " in an ordered
list, nested ones indented), and a link keeps its address after its text,
"Register (https://example.org/r)", unless the text already is the address.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin

from ..model.formats import digits

# Paragraph-like elements: a blank line before and after.
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "details", "div", "fieldset", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav",
    "p", "pre", "section", "table",
})  # fmt: skip
# Elements that start a line of their own, without a blank line.
_LINES = frozenset({"caption", "dd", "dt", "figcaption", "summary", "tr"})
_DROPPED = frozenset({"script", "style", "template"})  # content never shown as text
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # not U+00A0: a no-break space is meant
_SCHEMES = ("https://", "http://", "mailto:", "tel:")
INDENT = "  "  # per level of list nesting


@lru_cache(maxsize=4096)  # an event's page, .ics and feed entry ask for the same text
def html_to_text(html: str, base_url: str = "") -> str:
    """Plain text of an HTML fragment; relative link addresses are resolved against
    `base_url` (the page the fragment is shown on)."""
    if not html:
        return ""
    writer = _TextWriter(base_url)
    writer.feed(html)
    writer.close()
    return writer.text()


class _TextWriter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.parts: list[str] = []
        self.breaks = 0  # line breaks owed before the next text (2: a blank line)
        self.space = False  # a space owed before the next text on the same line
        self.lists: list[int | None] = []  # open lists: next number, None for bullets
        self.marker = ""  # an item's marker, written with its first text
        self.links: list[tuple[str, int]] = []  # open links: address, first part
        self.cells = 0  # cells so far in the table row
        self.dropped = 0  # inside <script> and the like
        self.pre = 0  # inside <pre>: spaces and line ends kept

    # -- parsing ----------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.dropped += 1
        if self.dropped:
            return
        if tag == "br":
            self._break(1, add=True)
        elif tag == "li":
            self._break(1)
            number = self.lists[-1] if self.lists else None
            if number is None:
                self.marker = "- "
            else:
                self.marker = f"{number}. "
                self.lists[-1] = number + 1
        elif tag in ("ul", "ol"):
            self._break(1 if self.lists else 2)  # a nested list goes on the next line
            self.lists.append(_start(attrs) if tag == "ol" else None)
        elif tag in ("td", "th"):
            if self.cells:
                self.space = True
                self._write("|")
                self.space = True
            self.cells += 1
        elif tag == "a":
            self.links.append((dict(attrs).get("href") or "", len(self.parts)))
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self.handle_data(alt)
        elif tag in _LINES or tag in _BLOCKS:
            self._break(1 if tag in _LINES else 2)
            self.cells = 0
            self.pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "img", "hr"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.dropped = max(0, self.dropped - 1)
            return
        if self.dropped:
            return
        if tag == "li":
            self.marker = ""  # an empty item shows nothing
            self._break(1)
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._break(1 if self.lists else 2)
        elif tag == "a":
            if self.links:
                self._link_end(*self.links.pop())
        elif tag in _LINES or tag in _BLOCKS:
            self._break(1 if tag in _LINES else 2)
            if tag == "pre":
                self.pre = max(0, self.pre - 1)

    def handle_data(self, data: str) -> None:
        if self.dropped or not data:
            return
        if self.pre:
            for number, line in enumerate(data.split("\n")):
                if number:
                    self._break(1, add=True)
                if line:
                    self._write(line)
            return
        collapsed = _HTML_SPACE.sub(" ", data)
        words = collapsed.strip(" ")
        if collapsed[0] == " ":
            self.space = True
        if words:
            self._write(words)
            self.space = collapsed[-1] == " "

    # -- writing ----------------------------------------------------------------------
    def _break(self, count: int, add: bool = False) -> None:
        """Owe `count` line breaks (at most a blank line); `add`: on top of those owed
        (two <br> in a row make a blank line, a <br> before a paragraph does not)."""
        self.breaks = min(2, self.breaks + count) if add else max(self.breaks, count)
        self.space = False

    def _write(self, text: str) -> None:
        starts_line = not self.parts or self.breaks > 0
        if self.parts and self.breaks:
            self.parts.append("\n" * self.breaks)
        if starts_line:
            depth = len(self.lists)
            if self.marker:
                self.parts.append(INDENT * (depth - 1) + self.marker)
            elif depth:
                self.parts.append(INDENT * depth)  # an item's text goes on
        elif self.space:
            self.parts.append(" ")
        self.marker = ""
        self.breaks = 0
        self.space = False
        self.parts.append(text)

    def _link_end(self, href: str, first: int) -> None:
        address = self._address(href)
        if address is None:
            return
        shown = "".join(self.parts[first:]).strip()
        if shown and _bare(shown) == _bare(address):
            return  # the text is the address
        self.space = True
        self._write(f"({address})" if shown else address)

    def _address(self, href: str) -> str | None:
        """What a reader types or clicks: an absolute URL, an e-mail address or a phone
        number. None for a link within the page."""
        href = href.strip()
        if not href or href.startswith("#"):
            return None
        lower = href.lower()
        if lower.startswith(("mailto:", "tel:")):
            return unquote(href.split(":", 1)[1].split("?", 1)[0]) or None
        return urljoin(self.base_url, href) if self.base_url else href

    def text(self) -> str:
        lines = "".join(self.parts).split("\n")
        return "\n".join(line.rstrip() for line in lines).strip("\n")


def _start(attrs: list[tuple[str, str | None]]) -> int:
    value = dict(attrs).get("start") or ""
    return int(value) if digits(value.strip().removeprefix("-")) else 1


def _bare(address: str) -> str:
    """An address without its scheme, `www.` or trailing slash, to compare with text."""
    found = address.strip().lower()
    for scheme in _SCHEMES:
        found = found.removeprefix(scheme)
    return found.removeprefix("www.").rstrip("/")
