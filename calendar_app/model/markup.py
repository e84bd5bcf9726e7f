"""Rendering stored text for the API: descriptions, excerpts and titles.

Records keep what the editor wrote (Markdown or HTML). On output we imitate the
WordPress filters clients are used to (spec 2.1, open point 7.8): `wpautop`-style
paragraphs for HTML, Markdown otherwise, always sanitised; and `wptexturize` entities
for titles. Markdown is GitHub's dialect (CommonMark with tables, strikethrough,
autolinks and task lists), the one editors already read in pull requests, through
cmark-gfm: C, twenty times quicker than a pure-Python converter.
"""

from __future__ import annotations

import hashlib
import html as _html
import re
from functools import lru_cache
from importlib.metadata import version as _version
from pathlib import Path

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options as _CmarkOptions

__all__ = ["plain_text", "render_excerpt", "render_html", "render_title"]

_BLOCK_TAGS = (
    "address|article|aside|blockquote|dd|details|div|dl|dt|fieldset|figcaption|figure|"
    "footer|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|summary|table|tbody|td|"
    "tfoot|th|thead|tr|ul"
)
# Any opening or closing block tag means the editor wrote HTML, not Markdown.
_HAS_BLOCK = re.compile(rf"</?(?:{_BLOCK_TAGS})(?:\s[^>]*)?/?>", re.IGNORECASE)
_BEFORE_BLOCK = re.compile(rf"(<(?:{_BLOCK_TAGS})[\s/>])", re.IGNORECASE)
_AFTER_BLOCK = re.compile(rf"(</(?:{_BLOCK_TAGS})>)", re.IGNORECASE)
_ANY_BLOCK = re.compile(rf"</?(?:{_BLOCK_TAGS})[\s/>]", re.IGNORECASE)
_P_BEFORE_BLOCK = re.compile(rf"<p>\s*(</?(?:{_BLOCK_TAGS})[\s/>])", re.IGNORECASE)
_P_AFTER_BLOCK = re.compile(rf"(</?(?:{_BLOCK_TAGS})[^>]*>)\s*</p>", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n\s*\n")

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "dd", "del",
    "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "small", "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "u", "ul",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "img": {"src", "alt", "width", "height", "title"},
    "ol": {"start"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
}
# No javascript:, data:, vbscript: ...; relative URLs are kept by nh3.
_URL_SCHEMES = {"http", "https", "mailto", "tel"}

# GitHub's set but "tagfilter": that one escapes <script> and the like into visible
# text, where the sanitizer drops them with their content.
_GFM_EXTENSIONS = ["table", "autolink", "strikethrough", "tasklist"]
# Raw HTML is passed on to the sanitizer, which keeps what it allows.
_CMARK_OPTIONS = _CmarkOptions.CMARK_OPT_UNSAFE | _CmarkOptions.CMARK_OPT_GITHUB_PRE_LANG


_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")


def _attribute(_tag: str, name: str, value: str) -> str | None:
    """`lang` (allowed everywhere by nh3, and set on code blocks from the fence's info
    string) keeps only a language name: a fence written ```javascript: must not carry
    its text into the markup."""
    if name == "lang" and not _LANGUAGE.fullmatch(value):
        return None
    return value


# Built once: passing the allow-lists to nh3.clean converted them on every call, three
# quarters of its time.
_CLEANER = nh3.Cleaner(
    attribute_filter=_attribute,
    tags=_ALLOWED_TAGS,
    # Drop the content of these too, not just the tags.
    clean_content_tags={"script", "style", "iframe", "object", "embed", "template"},
    attributes=_ALLOWED_ATTRIBUTES,
    url_schemes=_URL_SCHEMES,
    strip_comments=True,
    link_rel="noopener noreferrer",
)


def _sanitize(fragment: str) -> str:
    return _CLEANER.clean(fragment).strip()


# A tag as the sanitizer sees one: `<name` then a space, `/` or `>` (not `<https://..>`).
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?=[\s/>])")


def disallowed_tags(text: str) -> list[str]:
    """The names of the HTML tags in `text` that rendering would drop (sorted), so that
    a form can refuse them instead of publishing a text that reads otherwise."""
    return sorted({m.group(1).lower() for m in _TAG_NAME.finditer(text)} - _ALLOWED_TAGS)


def _autop(text: str) -> str:
    """A small `wpautop`: wrap text that is not inside block-level markup in ``<p>``.

    Same idea as WordPress: put blank lines around block tags, wrap every blank-line
    separated chunk in ``<p>``, then drop the ``<p>`` that ended up hugging a block
    tag. Single line breaks in pure-text paragraphs become ``<br />``.
    """
    text = _BEFORE_BLOCK.sub(r"\n\n\1", text)
    text = _AFTER_BLOCK.sub(r"\1\n\n", text)
    out = []
    for chunk in _BLANK_LINE.split(text):
        chunk = chunk.strip()
        if not chunk:
            continue
        if not _ANY_BLOCK.search(chunk):
            chunk = chunk.replace("\n", "<br />\n")
        chunk = "<p>" + chunk + "</p>"
        chunk = _P_BEFORE_BLOCK.sub(r"\1", chunk)
        chunk = _P_AFTER_BLOCK.sub(r"\1", chunk)
        out.append(chunk)
    return "\n".join(out)


def _markdown(text: str) -> str:
    return cmarkgfm.markdown_to_html_with_extensions(
        text, options=_CMARK_OPTIONS, extensions=_GFM_EXTENSIONS)


# One line of words and harmless punctuation, nothing Markdown reads as syntax (no
# `*_[]<>&#|\\~` and the like, no list or heading at the start, nothing autolinked):
# Markdown would only wrap it in <p>. Most excerpts are such a sentence.
_PLAIN_LINE = re.compile(
    r"(?![0-9]+[.)])(?!.*(?:www\.|://))[A-Za-z0-9\"'][A-Za-z0-9 .,;:?!%/$'\"()-]*")


# Renderings made earlier by this same code (a static build keeps its last run's):
# taken as they are instead of converting again.
_known: dict[str, str] = {}
_learned: dict[str, str] = {}
_learning = False


def remember(rendered: dict[str, str]) -> None:
    """Use these renderings (text -> HTML), made by code with the same `fingerprint()`,
    and from now on note new ones for `learned()`."""
    global _learning
    _known.clear()
    _known.update(rendered)
    _learned.clear()
    _learning = True
    render_html.cache_clear()


def learned() -> dict[str, str]:
    """Texts converted since `remember()` (none are noted before it is called)."""
    return dict(_learned)


def fingerprint() -> str:
    """Changes with this module and the Markdown and sanitizer libraries."""
    digest = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=8)
    digest.update(f"{_version('cmarkgfm')} {_version('nh3')}".encode())
    return digest.hexdigest()


# Rendering Markdown costs milliseconds; the same texts are rendered again and again.
@lru_cache(maxsize=32768)
def render_html(text: str | None) -> str:
    """Safe HTML for a stored description (Markdown or HTML), trimmed; ``""`` if empty."""
    if not text or not text.strip():
        return ""
    found = _known.get(text)
    if found is not None:
        return found
    if _PLAIN_LINE.fullmatch(text) and not text.endswith(" "):
        return f"<p>{text}</p>"
    original = text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _HAS_BLOCK.search(text):
        rendered = _sanitize(_autop(text))
    else:
        rendered = _sanitize(_markdown(text))
    if _learning:
        _learned[original] = rendered
    return rendered


@lru_cache(maxsize=32768)
def render_excerpt(text: str | None) -> str:
    """Excerpts follow the same rules: a plain line becomes ``<p>...</p>``."""
    return render_html(text)


# ---- titles: the_title filters (wptexturize + escaping), simplified

_BARE_AMP = re.compile(r"&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)")
# An opening quote follows the start, whitespace, an opening bracket or a dash.
_OPENS = r"(?:^|(?<=[\s(\[{\-]))"
_OPEN_SINGLE = re.compile(_OPENS + r"'(?=[^\s'])")
_DECADE = re.compile(_OPENS + r"'(?=\d\ds\b)")
_OPEN_DOUBLE = re.compile(_OPENS + r'"(?=[^\s"])')


@lru_cache(maxsize=32768)
def render_title(text: str) -> str:
    """Title as WordPress prints it: ``Ann's`` -> ``Ann&#8217;s``, ``&`` -> ``&#038;``."""
    if not text:
        return ""
    # Existing entities are kept; a bare ampersand gets WordPress's numeric form.
    out = _BARE_AMP.sub("&#038;", text)
    out = out.replace("<", "&lt;").replace(">", "&gt;")
    # Dashes and ellipsis (longest first, as in wptexturize's static table).
    out = out.replace("---", "&#8212;").replace(" -- ", " &#8212; ")
    out = out.replace("--", "&#8211;").replace(" - ", " &#8211; ")
    out = out.replace("...", "&#8230;")
    # Quotes: decades ('90s) and apostrophes close, quotes after a space open.
    out = _DECADE.sub("&#8217;", out)
    out = _OPEN_SINGLE.sub("&#8216;", out)
    out = out.replace("'", "&#8217;")
    out = _OPEN_DOUBLE.sub("&#8220;", out)
    out = out.replace('"', "&#8221;")
    return out.strip()


# ---- plain text for search and feeds

_DROP_WITH_CONTENT = re.compile(
    r"<(script|style|template)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL
)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_BREAKING_TAG = re.compile(rf"</?(?:{_BLOCK_TAGS}|br)\b[^>]*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_WHITESPACE = re.compile(r"\s+")
_HTML_SPACE = re.compile(r"[ \t\n\r\f\v]+")  # HTML's white space: no no-break space


# An event page asks for the text of its title, excerpt and description about seven
# times (head tags, JSON-LD, calendar links, feeds): five regex passes each, a tenth of
# the page's Python before this cache. Neighbouring outputs show the same event.
@lru_cache(maxsize=1024)
def plain_text(html: str, keep_no_break: bool = False) -> str:
    """Text content of an HTML fragment: tags removed, entities decoded, spaces collapsed;
    `keep_no_break`: a no-break space stays one (a title's text, as its author typed)."""
    if not html:
        return ""
    text = _DROP_WITH_CONTENT.sub(" ", html)
    text = _COMMENT.sub(" ", text)
    # Block boundaries separate words; inline tags ("<b>x</b>y") do not.
    text = _BREAKING_TAG.sub(" ", text)
    text = _ANY_TAG.sub("", text)
    text = _html.unescape(text)
    return (_HTML_SPACE if keep_no_break else _WHITESPACE).sub(" ", text).strip()
