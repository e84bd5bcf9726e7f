"""Tests for calendar_app.model.markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calendar_app.model import markup
from calendar_app.model.markup import plain_text, render_excerpt, render_html, render_title


def test_markdown_paragraphs() -> None:
    text = "Jazz Night edition 1. Bring friends.\n\nSecond paragraph with **markup**."
    assert render_html(text) == (
        "<p>Jazz Night edition 1. Bring friends.</p>\n"
        "<p>Second paragraph with <strong>markup</strong>.</p>"
    )


def test_markdown_features() -> None:
    assert render_html("- a\n- b") == "<ul>\n<li>a</li>\n<li>b</li>\n</ul>"
    assert render_html("3. x\n4. y") == '<ol start="3">\n<li>x</li>\n<li>y</li>\n</ol>'
    assert render_html("## Title") == "<h2>Title</h2>"
    assert render_html('[site](https://example.org "Ex")') == (
        '<p><a href="https://example.org" title="Ex" rel="noopener noreferrer">site</a></p>'
    )
    assert render_html("![pic](/media/a.png)") == '<p><img src="/media/a.png" alt="pic"></p>'
    table = render_html("| a | b |\n|---|---|\n| 1 | 2 |")
    assert table.startswith("<table>") and "<td>1</td>" in table
    assert render_html("> quoted") == "<blockquote>\n<p>quoted</p>\n</blockquote>"
    assert render_html("`x < y`") == "<p><code>x &lt; y</code></p>"


def test_github_flavoured_markdown() -> None:
    """The dialect editors read on GitHub: what they preview is what the site shows."""
    assert render_html("Bring:\n- a hat\n  - and gloves") == (
        "<p>Bring:</p>\n<ul>\n<li>a hat\n<ul>\n<li>and gloves</li>\n</ul>\n</li>\n</ul>")
    assert render_html("~~sold out~~ more seats") == "<p><del>sold out</del> more seats</p>"
    assert render_html("See www.example.org") == (
        '<p>See <a href="http://www.example.org" rel="noopener noreferrer">'
        "www.example.org</a></p>")
    assert render_html("Mail info@example.org") == (
        '<p>Mail <a href="mailto:info@example.org" rel="noopener noreferrer">'
        "info@example.org</a></p>")
    # Task list checkboxes are not among the tags kept: the item's text stays.
    assert render_html("- [x] done") == "<ul>\n<li> done</li>\n</ul>"
    # Raw HTML inside Markdown goes through the sanitizer: kept tags stay, scripts go
    # with their content (not shown as text).
    assert render_html("Hello <b>there</b><script>x()</script>") == (
        "<p>Hello <b>there</b></p>")


def test_html_input_gets_paragraphs_like_wpautop() -> None:
    assert render_html("<p>Already</p>\n\nplain block\nline two\n\n<div>x</div>") == (
        "<p>Already</p>\n<p>plain block<br>\nline two</p>\n<div>x</div>"
    )
    assert render_html("<h2>Heading</h2>\nBody text") == "<h2>Heading</h2>\n<p>Body text</p>"
    # Markdown syntax inside HTML is not interpreted.
    assert render_html("<div>**not bold**</div>") == "<div>**not bold**</div>"


def test_empty_and_whitespace() -> None:
    assert render_html(None) == ""
    assert render_html("") == ""
    assert render_html(" \n\t ") == ""
    assert render_excerpt(None) == ""
    assert render_excerpt("") == ""


def test_excerpt_is_a_paragraph() -> None:
    assert render_excerpt("Volunteer morning.") == "<p>Volunteer morning.</p>"
    assert render_excerpt("  Short summary\n") == "<p>Short summary</p>"


@pytest.mark.parametrize(
    "dangerous",
    [
        "<script>alert(1)</script>",
        '<p onclick="alert(1)">x</p>',
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        '<a href="JaVaScRiPt:alert(1)">x</a>',
        '<a href="jav&#x61;script:alert(1)">x</a>',
        "[x](javascript:alert(1))",
        '<img src="data:text/html;base64,AAAA">',
        '<iframe src="https://evil.example"></iframe>',
        "<style>body{display:none}</style>",
        '<div style="position:fixed">x</div>',
        "<svg onload=alert(1)>",
        "<p>ok</p><script>alert(1)</script>",
    ],
)
def test_sanitizer_removes_active_content(dangerous: str) -> None:
    out = render_html(dangerous).lower()
    assert "<script" not in out
    assert "javascript:" not in out
    assert "data:" not in out
    assert "<iframe" not in out and "<style" not in out and "style=" not in out
    assert not re.search(r"\son\w+\s*=", out)


def test_plain_text() -> None:
    html = "<p>Hello <b>wor</b>ld</p><p>Second&nbsp;&amp; more</p><script>x()</script>"
    assert plain_text(html) == "Hello world Second & more"
    assert plain_text("line<br>break\n\n  spaced") == "line break spaced"
    assert plain_text("") == ""
    assert plain_text("<!-- hidden -->visible") == "visible"


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Jazz Night #1", "Jazz Night #1"),
        ("Ann's River Clean-Up", "Ann&#8217;s River Clean-Up"),
        ("Tom & Jerry", "Tom &#038; Jerry"),
        ("Rock &amp; Roll", "Rock &amp; Roll"),
        ("<b>Bold</b>", "&lt;b&gt;Bold&lt;/b&gt;"),
        ('"Quoted" title', "&#8220;Quoted&#8221; title"),
        ("'Single' quotes", "&#8216;Single&#8217; quotes"),
        ("Back to the '90s", "Back to the &#8217;90s"),
        ("Jazz - Live", "Jazz &#8211; Live"),
        ("2026--2027", "2026&#8211;2027"),
        ("Wait---what", "Wait&#8212;what"),
        ("And then...", "And then&#8230;"),
        ("  padded  ", "padded"),
        ("", ""),
    ],
)
def test_render_title(title: str, expected: str) -> None:
    assert render_title(title) == expected


_C0_AND_SPACE = "".join(chr(i) for i in range(0x21))


class _Inspector(HTMLParser):
    """Collects what the browser would treat as active content."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "iframe", "object", "embed"):
            self.problems.append(tag)
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.problems.append(name)
            # What a browser's URL parser does: trim C0/space, drop tabs and newlines.
            cleaned = re.sub(r"[\t\n\r]", "", (value or "").strip(_C0_AND_SPACE)).lower()
            if name in ("href", "src") and cleaned.startswith(
                ("javascript:", "data:", "vbscript:")
            ):
                self.problems.append(f"{name}={value}")


_FRAGMENTS = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<script",
        "<a href='javascript:alert(1)'>x</a>",
        '<a href="java\tscript:x">y</a>',
        "<img src=x onerror=alert(1)>",
        "<p onmouseover=alert(1)>",
        "<div>",
        "</div>",
        "<p>",
        "[link](javascript:alert(1))",
        "![img](data:image/png;base64,AA)",
        "**bold**",
        "\n\n",
        "\n",
        "<",
        ">",
        '"',
        "'",
        "=",
        " on",
        "click=",
        "text",
        "<!--",
        "-->",
        "<textarea>",
        "`",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(_FRAGMENTS, max_size=10).map("".join)))
def test_render_html_never_emits_active_content(text: str) -> None:
    out = render_html(text)
    assert "<script" not in out.lower()
    inspector = _Inspector()
    inspector.feed(out)
    inspector.close()
    assert inspector.problems == []
    # Inside any tag: no javascript: URL and no event handler attribute.
    for tag in re.findall(r"<[^>]*>", out):
        assert "javascript:" not in tag.lower()
        assert not re.search(r"\son\w+\s*=", tag.lower())
    assert out == out.strip()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_render_title_never_emits_tags(text: str) -> None:
    out = render_title(text)
    assert "<" not in out and ">" not in out
    assert "'" not in out and '"' not in out
    assert out == out.strip()


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ09 .,;:?!%@/$'\"()-")), min_size=1, max_size=40)
       | st.text(min_size=1, max_size=40))
def test_plain_line_shortcut_agrees_with_markdown(text: str) -> None:
    """The shortcut for one plain line gives what Markdown and the sanitizer give."""
    if markup._PLAIN_LINE.fullmatch(text) and not text.endswith(" "):
        slow = markup._sanitize(markup._markdown(text))
        assert markup.render_html.__wrapped__(text) == slow


def test_plain_line_shortcut_examples() -> None:
    assert markup._PLAIN_LINE.fullmatch("Doors at 7pm: all-ages, free (bring a friend)!")
    for syntax in ("1. first", "- item", "a_b_", "Tom & Jerry", "*x*", "# Title", "a | b",
                   "Café"):
        assert not markup._PLAIN_LINE.fullmatch(syntax), syntax


def test_a_code_fence_info_string_is_not_carried_into_markup() -> None:
    """Found by the property test above: ```javascript: became <pre lang="javascript:">."""
    assert render_html("```javascript:\nx\n```") == "<pre><code>x\n</code></pre>"
    assert render_html("```python\nx\n```").startswith('<pre lang="python">')
