"""The event page: breadcrumbs, previous/next/all links (and their incremental builds),
the excerpt rule, readable zone names, cost in the event's currency, the map link."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import compiled_templates, embed_snapshots
from markupsafe import Markup

from calendar_app.site import Builder, Options, build
from calendar_app.site.model import EventView
from calendar_app.site.zonenames import zone_name

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2027, 3, 1, 12, 0, tzinfo=dt.UTC)

EVENTS = {
    "alpha": ("Alpha Recital", "2027-04-01 18:00", """venue: magnolia-arts-center
categories: [music, classical]
excerpt: Bring a friend.
description: Bring a friend. The recital runs two hours.
"""),
    "bravo": ("Bravo Rehearsal", "2027-04-02 18:00", "hide_from_listings: true\n"),
    "charlie": ("Charlie Songs", "2027-04-03 19:00", """timezone: America/Toronto
currency_code: CAD
cost: '25'
excerpt: A night of songs.
description: Doors at six.
"""),
    "delta": ("Delta Dance", "2027-04-04 19:00", """venue: magnolia-arts-center
show_map_link: false
cost: $25
description: Dance all night.
"""),
    "echo": ("Echo Exhibition", "2027-04-05 10:00", """currency_code: EUR
cost: '25'
excerpt: Only an excerpt.
"""),
}


def make_content(root: Path) -> Path:
    content = root / "content"
    for part in ("venues", "organizers", "categories", "tags", "media"):
        shutil.copytree(REPO / "content" / part, content / part)
    shutil.copy(REPO / "content" / "calendar.yaml", content / "calendar.yaml")
    (content / "events").mkdir()
    for number, (slug, (title, start, extra)) in enumerate(EVENTS.items(), start=900):
        end = start.replace(start[-5:], "23:00")
        (content / "events" / f"{slug}.yaml").write_text(
            f"id: {number}\ntitle: {title}\nslug: {slug}\nstatus: publish\n"
            f"start_date: {start}\nend_date: {end}\n{extra}", encoding="utf-8")
    return content


def options(content: Path, out: Path, cache: Path) -> Options:
    return Options(content=content, out=out, now=NOW, base_url="https://example.org/",
                   cache_dir=cache, progress=False, compiled_templates=compiled_templates())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("event-page")
    report = build(options(make_content(tmp), tmp / "public", tmp / "cache"))
    assert not report.problems
    return tmp / "public"


def page(site: Path, slug: str) -> str:
    return (site / f"event/{slug}/index.html").read_text(encoding="utf-8")


def event_nav(html: str) -> dict[str, tuple[str, str] | None]:
    """prev/next: (href, title) or None; all: href."""
    nav = re.search(r'<nav class="event-nav" aria-label="More events">.*?</nav>', html,
                    re.DOTALL).group(0)
    found: dict = {}
    for rel in ("prev", "next"):
        link = re.search(rf'<a href="([^"]*)" rel="{rel}"><span class="event-nav-label">'
                         rf'[^<]*</span> ([^<]*)</a>', nav)
        found[rel] = link.groups() if link else None
    found["all"] = re.search(r'<a href="([^"]*)">All events</a>', nav).group(1)
    return found


def test_previous_next_and_all_events(site: Path) -> None:
    link = "../../event/{}/index.html".format
    assert event_nav(page(site, "alpha")) == {
        "prev": None, "next": (link("charlie"), "Charlie Songs"),  # bravo is hidden
        "all": "../../events/list/index.html"}
    assert event_nav(page(site, "charlie"))["prev"] == (link("alpha"), "Alpha Recital")
    assert event_nav(page(site, "charlie"))["next"] == (link("delta"), "Delta Dance")
    # A hidden event links into the listed sequence around it.
    assert event_nav(page(site, "bravo")) == {
        "prev": (link("alpha"), "Alpha Recital"), "next": (link("charlie"), "Charlie Songs"),
        "all": "../../events/list/index.html"}
    assert event_nav(page(site, "echo"))["next"] is None


def test_breadcrumbs(site: Path) -> None:
    assert ('<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>'
            '<li><a href="../../events/list/index.html">Events</a></li>'
            '<li><a href="../../events/category/music/index.html">Music</a></li>'
            '<li><a href="../../events/category/music/classical/index.html">Classical</a></li>'
            '<li aria-current="page">Alpha Recital</li></ol></nav>') in page(site, "alpha")
    assert ('<ol><li><a href="../../events/list/index.html">Events</a></li>'
            '<li aria-current="page">Charlie Songs</li></ol>') in page(site, "charlie")


def test_excerpt_only_when_it_adds_something(site: Path) -> None:
    alpha = page(site, "alpha")  # the excerpt is the description's first sentence
    assert 'class="event-excerpt"' not in alpha and "The recital runs two hours." in alpha
    assert '<div class="event-excerpt"><p>A night of songs.</p>' in page(site, "charlie")
    assert '<div class="event-excerpt"><p>Only an excerpt.</p>' in page(site, "echo")


@pytest.mark.parametrize("excerpt, description, shown", [
    ("<p>Bring a friend.</p>", "<p>Bring a friend. The recital runs two hours.</p>", False),
    ("<p>Bring a friend…</p>", "<p>Bring a friend and a chair.</p>", False),
    ("<p>Bring a friend [...]</p>", "<p>Bring a friend and a chair.</p>", False),
    ("<p>BRING a  friend.</p>", "<p>bring a <em>friend</em>. More.</p>", False),
    ("<p>Bring a fr</p>", "<p>Bring a friend.</p>", True),  # not at a word's end
    ("<p>A different summary.</p>", "<p>Bring a friend.</p>", True),
    ("<p>Only an excerpt.</p>", "", True),
    ("", "<p>Bring a friend.</p>", False),
    ("<p>…</p>", "<p>Bring a friend.</p>", False),
])
def test_excerpt_rule(excerpt: str, description: str, shown: bool) -> None:
    view = SimpleNamespace(excerpt=Markup(excerpt), description=Markup(description))
    view.summary_text = EventView.summary_text.func(view)  # type: ignore[attr-defined]
    assert EventView.shows_excerpt.func(view) is shown  # type: ignore[attr-defined]


def test_zone_names(site: Path) -> None:
    assert "Times are in Pacific Time." in page(site, "alpha")
    assert '<abbr title="Pacific Time">PDT</abbr>' in page(site, "alpha")
    assert "Times are in Eastern Time." in page(site, "charlie")
    assert "America/" not in re.sub(r'<a [^>]*calendar\.google[^>]*>', "", page(site, "charlie"))


@pytest.mark.parametrize("zone, name", [
    ("America/Los_Angeles", "Pacific Time"), ("America/Vancouver", "Pacific Time"),
    ("America/Phoenix", "Mountain Time"), ("America/Chicago", "Central Time"),
    ("Asia/Shanghai", "China Standard Time"), ("Asia/Kolkata", "India Standard Time"),
    ("Asia/Jerusalem", "Israel Time"), ("Europe/Berlin", "Central European Time"),
    ("Europe/London", "British Time"), ("Europe/Dublin", "Irish Time"),
    ("Australia/Sydney", "Australian Eastern Time"), ("UTC", "Coordinated Universal Time"),
    ("Europe/Istanbul", "Istanbul time"), ("America/Argentina/Buenos_Aires", "Buenos Aires time"),
    ("Etc/GMT+5", "UTC-05"), ("UTC+5.5", "UTC+5.5"),
])
def test_zone_name_table(zone: str, name: str) -> None:
    assert zone_name(zone, 2027) == name


def test_cost_in_the_events_currency(site: Path) -> None:
    assert "<dt>Cost</dt><dd>CA$25</dd>" in page(site, "charlie")
    assert "<dt>Cost</dt><dd>$25</dd>" in page(site, "delta")  # the calendar's USD
    assert "<dt>Cost</dt><dd>€25</dd>" in page(site, "echo")


def test_map_link_on_unless_turned_off(site: Path) -> None:
    # Neither the event nor the venue says anything: on, as in the plugin's editor.
    assert ('<a href="https://www.google.com/maps/search/?api=1&amp;query=5120%20Magnolia'
            '%20Avenue') in page(site, "alpha")
    assert "google.com/maps" not in page(site, "delta")  # show_map_link: false


def tree(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_neighbour_title_edit_reaches_the_page(tmp_path: Path, watcher_started,
                                               watch_stops_quickly) -> None:
    """--watch: a new title of Charlie is the next link of Alpha (and Bravo) and the
    previous link of Delta at once, the bytes of a full build; so is a new process's
    incremental build after a second edit."""
    from calendar_app.site.watch import watch

    content = make_content(tmp_path)
    out = tmp_path / "public"
    builder = Builder(options(content, out, tmp_path / "cache"))
    builder.build()
    reports: list = []
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(builder, reports.append, stop), daemon=True)
    thread.start()
    charlie = content / "events/charlie.yaml"
    try:
        assert watcher_started.wait(20)
        charlie.write_text(charlie.read_text().replace("Charlie Songs", "Charlie Sings"))
        deadline = time.monotonic() + 20
        while not reports and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reports, "no rebuild"
        written = set(reports[0].written)
        assert {"event/alpha/index.html", "event/bravo/index.html",
                "event/delta/index.html"} <= written
        assert "event/echo/index.html" not in written
        # The incremental path: only what shows Charlie, and the component's lists.
        assert reports[0].skipped < 20 + embed_snapshots(out)
    finally:
        stop.set()
        thread.join(10)
        builder.close()
    assert event_nav(page(out, "alpha"))["next"][1] == "Charlie Sings"
    assert event_nav(page(out, "delta"))["prev"][1] == "Charlie Sings"
    build(options(content, tmp_path / "full", tmp_path / "cache-full"))
    assert tree(out) == tree(tmp_path / "full")

    charlie.write_text(charlie.read_text().replace("Charlie Sings", "Charlie Again"))
    report = build(options(content, out, tmp_path / "cache"))
    assert "event/alpha/index.html" in report.written
    build(options(content, tmp_path / "full2", tmp_path / "cache-full2"))
    assert tree(out) == tree(tmp_path / "full2")
    assert event_nav(page(out, "alpha"))["next"][1] == "Charlie Again"


def test_description_start_matches_the_whole_text() -> None:
    """The excerpt rule reads only the start of a description: as the whole would read."""
    from calendar_app.model import markup
    from calendar_app.site.model import _plain_start

    html = ("<p>Caf&eacute; <em>night</em>, " + "tea &amp; cake <b>x</b> " * 150 + "</p>"
            "<ul><li>one</li><li>two</li></ul>" + "<p>word " * 100 + "</p>")
    whole = markup.plain_text(html)
    for length in range(1, len(whole) + 50, 13):
        start = _plain_start(html, length)
        assert start[:length] == whole[:length], length


def test_venue_section_shared_yet_follows_an_edit(tmp_path: Path) -> None:
    """The venue section is rendered once for its venue (render.rendered_for): the
    same bytes on both events there; after an edit of the venue, the same builder
    shows the new phone on both, the bytes of a fresh build."""
    content = make_content(tmp_path)
    out = tmp_path / "public"
    builder = Builder(options(content, out, tmp_path / "cache"))
    try:
        builder.build()

        def section(slug: str) -> str:
            html = page(out, slug)
            return html[html.index('<section class="event-venue"'):
                        html.index("</section>", html.index('class="event-venue"'))]
        # Delta turns the map link off: another block, the same venue otherwise.
        assert "View on a map" in section("alpha") and "View on a map" not in section("delta")
        map_link = re.search(r'<p><a href="https://www\.google.*?</a></p>', section("alpha"))
        assert section("delta") == section("alpha").replace(map_link.group(0), "")
        assert "tel:(951)555-0117" in section("alpha") and "555-0117" in section("delta")
        venue = content / "venues/magnolia-arts-center.yaml"
        venue.write_text(venue.read_text().replace("555-0117", "555-0199"))
        builder.reader.catalog.refresh(["venues/magnolia-arts-center.yaml"])
        assert not builder.build().problems
        assert "555-0199" in section("alpha") and "555-0199" in section("delta")
        assert "555-0117" not in section("alpha") + section("delta")
    finally:
        builder.close()
    build(options(content, tmp_path / "full", tmp_path / "cache-full"))
    assert tree(out) == tree(tmp_path / "full")
