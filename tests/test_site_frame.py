"""The page frame (`_frame.html`'s header and footer) is rendered once per key
(render.rendered_once): what it shows must still follow the page's depth, section,
site and language."""

from __future__ import annotations

from calendar_app.site.render import make_environment

PAGE = '{% extends "base.html" %}{% block main %}<p>body</p>{% endblock %}'


def _render(env, root: str, section: str | None, title: str = "Town",
            description: str = "What is on") -> str:
    site = {"title": title, "description": description, "url": "https://example.org/",
            "submit_url": ""}
    context = {"site": site, "root": root, "lang": "en", "dir": "ltr",
               "page_path": root.count("../") * "x/" + "index.html",
               "this_month": "events/month/2026-06/index.html"}
    if section is not None:
        context["section"] = section
    return env.from_string(PAGE).render(**context)


def test_frame_follows_depth_section_and_site() -> None:
    env = make_environment()
    top = _render(env, "", "upcoming")
    deep = _render(env, "../../", "upcoming")
    assert 'href="events/list/index.html" aria-current="page"' in top
    assert 'href="../../events/list/index.html" aria-current="page"' in deep
    assert 'href="../../feed.xml"' in deep and 'href="../../feed.xml"' not in top
    past = _render(env, "../../", "past")
    assert 'href="../../events/past/index.html" aria-current="page"' in past
    assert 'events/list/index.html" aria-current' not in past
    # No section (event pages): no link marked current, the search form shown.
    plain = _render(env, "../../", None)
    assert 'aria-current="page"' not in plain and 'class="header-search"' in plain
    assert 'class="header-search"' not in _render(env, "../../", "search")
    # Another site's title and description in the same process (a --watch rebuild
    # after calendar.yaml changed): a new frame, not the first one kept.
    renamed = _render(env, "../../", "upcoming", title="City", description="Now on")
    assert '<a href="../../index.html">City</a>' in renamed
    assert "<p>Now on</p>" in renamed and "What is on" not in renamed
    assert _render(env, "../../", "upcoming") == deep  # the first one, unchanged
