"""Faster text rendering for the length of a build, with byte-identical results.

`markup.render_html` builds a new `markdown.Markdown` (extension registration ~1 ms)
for every call, and a single event's representation renders its venue's and
organizers' texts again. During a build we (1) memoize render_html/render_excerpt by
their input (they are pure functions of it) and (2) reuse one Markdown converter per
extension list, `reset()` between documents as Python-Markdown documents it. Both
are undone when the build ends. (Suggested permanent fix: the same in markup.py.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace

import markdown as markdown_lib

from .. import markup


def _reusing_converter() -> SimpleNamespace:
    converters: dict[tuple, markdown_lib.Markdown] = {}

    def convert(text: str, extensions: list | None = None, **kwargs: object) -> str:
        key = tuple(extensions or ()) + tuple(sorted(kwargs.items()))
        converter = converters.get(key)
        if converter is None:
            converter = converters[key] = markdown_lib.Markdown(
                extensions=list(extensions or ()), **kwargs)
        return converter.reset().convert(text)

    return SimpleNamespace(markdown=convert, Markdown=markdown_lib.Markdown)


def _memo(function):
    cache: dict = {}

    def wrapper(text):
        try:
            return cache[text]
        except KeyError:
            result = cache[text] = function(text)
            return result
        except TypeError:  # unhashable: not something a record holds, just call
            return function(text)

    return wrapper


@contextlib.contextmanager
def fast_markup() -> Iterator[None]:
    saved = (markup.markdown, markup.render_html, markup.render_excerpt)
    markup.markdown = _reusing_converter()  # type: ignore[assignment]
    markup.render_html = _memo(saved[1])  # type: ignore[assignment]
    markup.render_excerpt = _memo(saved[2])  # type: ignore[assignment]
    try:
        yield
    finally:
        markup.markdown, markup.render_html, markup.render_excerpt = saved  # type: ignore[assignment]
