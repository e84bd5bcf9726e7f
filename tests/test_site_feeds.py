"""Subscribing to the static site: what the iCalendar feeds hold (refresh interval, recent
past events, readable descriptions, stable UIDs) and the subscribe / add-to-calendar
links on its pages."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import icalendar
import pytest
from conftest import compiled_templates
from sitebuilds import small_sample

from calendar_app.cli import main as cli_main
from calendar_app.model import clock as clocks
from calendar_app.site import Builder, Options, build
from calendar_app.site.htmltext import html_to_text

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://example.org/calendar/"
PREVIEW_URL = "https://preview.example/"

ONLINE_TALK = """\
id: 990
title: 'Online talk: Saving seeds'
slug: online-talk-saving-seeds
start_date: 2026-12-02 18:00:00
end_date: 2026-12-02 19:00:00
categories:
  - talks-lectures
excerpt: A short talk, online.
description: |
  Join us online for a talk on **seed saving**.

  - Register at <https://example.org/register>
  - Slides: [download them](https://example.org/slides.pdf)
  - Questions: [write to us](mailto:talks@example.org)

  See the [venue page](/venue/the-blue-lantern/) too.
"""
ONLINE_TALK_TEXT = (
    "Join us online for a talk on seed saving.\n\n"
    "- Register at https://example.org/register\n"
    "- Slides: download them (https://example.org/slides.pdf)\n"
    "- Questions: write to us (talks@example.org)\n\n"
    # A root-relative link, resolved against the event page as a browser does.
    "See the venue page (https://example.org/venue/the-blue-lantern/) too.")


def jam(record_id: int, slug: str, end: dt.datetime) -> str:
    """A past jazz event at The Blue Lantern, one hour long, ending at `end` (UTC)."""
    start = end - dt.timedelta(hours=1)
    return (f"id: {record_id}\ntitle: Jam {slug}\nslug: {slug}\ntimezone: UTC\n"
            f"start_date: {start:%Y-%m-%d %H:%M:%S}\nend_date: {end:%Y-%m-%d %H:%M:%S}\n"
            "venue: the-blue-lantern\ncategories:\n  - music\n  - jazz\n")


# Feeds keep events that ended less than 30 days (the default) before now.
RECENT = "recent-jam"  # ended 30 days less an hour ago: in the feeds
OLDER = "older-jam"  # ended 30 days and an hour ago: out


def make_content(target: Path, settings: str = "", small: bool = False) -> Path:
    """The sample (or with `small`, sitebuilds' small calendar: where a test's checks
    do not depend on the calendar's size) with the online talk and the two jams."""
    if small:
        small_sample(target)
    else:
        shutil.copytree(REPO / "content", target)
    events = target / "events/2026"
    (events / "online-talk-saving-seeds.yaml").write_text(ONLINE_TALK)
    edge, hour = NOW.replace(tzinfo=None) - dt.timedelta(days=30), dt.timedelta(hours=1)
    (events / f"{RECENT}.yaml").write_text(jam(991, RECENT, edge + hour))
    (events / f"{OLDER}.yaml").write_text(jam(992, OLDER, edge - hour))
    if settings:
        with (target / "calendar.yaml").open("a") as file:
            file.write(settings)
    return target


def options(content: Path, out: Path, cache: Path, base_url: str = BASE_URL,
            now: dt.datetime = NOW, keep_going: bool = False) -> Options:
    return Options(content=content, out=out, now=now, base_url=base_url, cache_dir=cache,
                   progress=False, compiled_templates=compiled_templates(), keep_going=keep_going)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("feeds")
    report = build(options(make_content(tmp / "content"), tmp / "public", tmp / "cache"))
    assert report.written and not report.problems
    return tmp / "public"


def calendar(site: Path, path: str) -> icalendar.Calendar:
    return icalendar.Calendar.from_ical((site / path).read_bytes())


def slugs(cal: icalendar.Calendar) -> set[str]:
    return {str(e["URL"]).rstrip("/").rsplit("/", 1)[-1] for e in cal.walk("VEVENT")}


def upcoming_slugs(site: Path) -> set[str]:
    """The events the upcoming list pages show (a recurring event's by its dates' pages)."""
    pages = [site / "events/list/index.html", *(site / "events/list/page").glob("*/index.html")]
    found = {slug for page in pages
             for slug in re.findall(r'href="[./]*event/([^/"]+)/(?:[\d-]+/)?index.html"',
                                     page.read_text())}
    assert "online-talk-saving-seeds" in found
    return found


# -- the feeds -----------------------------------------------------------------------
def test_feeds_ask_to_be_refreshed_hourly(site: Path) -> None:
    feeds = sorted(site.rglob("calendar.ics"))
    assert len(feeds) > 30
    for path in feeds:
        cal = icalendar.Calendar.from_ical(path.read_bytes())
        assert cal["REFRESH-INTERVAL"].dt == dt.timedelta(hours=1), path
        assert cal["REFRESH-INTERVAL"].params["VALUE"] == "DURATION"
        assert cal["X-PUBLISHED-TTL"] == "PT1H", path
    # A single event's file is imported once, not subscribed to.
    single = calendar(site, "event/holiday-messiah-sing-along-2026/event.ics")
    assert "REFRESH-INTERVAL" not in single and "X-PUBLISHED-TTL" not in single


def test_feeds_keep_the_last_30_days(site: Path) -> None:
    upcoming_page = (site / "events/list/index.html").read_text()
    assert "recent-jam" not in upcoming_page  # the pages' upcoming lists are unchanged
    for path in ("calendar.ics", "venue/the-blue-lantern/calendar.ics",
                 "events/category/music/jazz/calendar.ics", "events/category/music/calendar.ics"):
        found = slugs(calendar(site, path))
        assert RECENT in found and OLDER not in found, path
        assert "jazz-night-january-2027" in found, path
    main = calendar(site, "calendar.ics")
    # The upcoming list's events (the online talk among them) and the recent jam.
    assert slugs(main) == upcoming_slugs(site) | {RECENT}
    # One VEVENT an event; a recurring series adds one per changed date (RECURRENCE-ID).
    series = [e for e in main.walk("VEVENT") if "RECURRENCE-ID" not in e]
    assert len(series) == len(upcoming_slugs(site)) + 1
    starts = [e["DTSTART"].dt for e in series]  # a changed date follows its series
    as_utc = [s if isinstance(s, dt.datetime) else dt.datetime.combine(s, dt.time(), dt.UTC)
              for s in starts]
    assert as_utc[0] == dt.datetime(2026, 10, 22, 12, 0, tzinfo=dt.UTC)
    assert as_utc == sorted(as_utc, key=lambda s: s.astimezone(dt.UTC))
    # Both past events keep their own page and file, and the past list shows both.
    past = (site / "events/past/index.html").read_text()
    assert "Jam recent-jam" in past and "Jam older-jam" in past
    assert (site / f"event/{OLDER}/event.ics").exists()


def test_feed_settings(tmp_path: Path) -> None:
    content = make_content(tmp_path / "content",
                           "feed_past_days: 0\nfeed_refresh_minutes: 90\n", small=True)
    report = build(options(content, tmp_path / "public", tmp_path / "cache"))
    assert not report.problems
    main = calendar(tmp_path / "public", "calendar.ics")
    assert slugs(main) == upcoming_slugs(tmp_path / "public")  # upcoming only
    assert main["REFRESH-INTERVAL"].dt == dt.timedelta(minutes=90)
    assert main["X-PUBLISHED-TTL"] == "PT1H30M"

    content = make_content(tmp_path / "longer", "feed_past_days: 60\n", small=True)
    build(options(content, tmp_path / "public-60", tmp_path / "cache"))
    assert {RECENT, OLDER} <= slugs(calendar(tmp_path / "public-60", "calendar.ics"))


def test_bad_feed_settings_are_reported_with_their_line(tmp_path: Path, capsys) -> None:
    content = make_content(tmp_path / "content",
                           "feed_past_days: -3\nfeed_refresh_minutes: often\n", small=True)
    lines = (content / "calendar.yaml").read_text().splitlines()
    past_line = lines.index("feed_past_days: -3") + 1
    refresh_line = lines.index("feed_refresh_minutes: often") + 1

    assert cli_main(["check", str(content), "--format", "json"]) == 1
    findings = {(Path(f["path"]).name, f["line"], f["code"]): f["message"]
                for f in json.loads(capsys.readouterr().out)["findings"]}
    assert findings[("calendar.yaml", past_line, "bad-setting")] == (
        "feed_past_days must be a whole number of 0 or more, not -3")
    assert findings[("calendar.yaml", refresh_line, "bad-setting")] == (
        "feed_refresh_minutes must be a whole number of 1 or more, not 'often'")

    # The build says so too and stops, as for a broken record; --keep-going goes on
    # with the defaults.
    stopped = build(options(content, tmp_path / "stopped", tmp_path / "cache"))
    assert stopped.stopped and not (tmp_path / "stopped/calendar.ics").exists()
    report = build(options(content, tmp_path / "public", tmp_path / "cache",
                           keep_going=True))
    assert report.problems == stopped.problems
    problems = {(p.path, p.line): p.message for p in report.problems}
    assert problems == {
        ("calendar.yaml", past_line): "feed_past_days must be a whole number of 0 or more, "
                                      "not -3; using 30",
        ("calendar.yaml", refresh_line): "feed_refresh_minutes must be a whole number of 1 "
                                         "or more, not 'often'; using 60"}
    main = calendar(tmp_path / "public", "calendar.ics")
    assert RECENT in slugs(main) and main["X-PUBLISHED-TTL"] == "PT1H"


def test_description_keeps_paragraphs_lists_and_links(site: Path) -> None:
    (talk,) = calendar(site, "event/online-talk-saving-seeds/event.ics").walk("VEVENT")
    assert str(talk["DESCRIPTION"]) == ONLINE_TALK_TEXT
    (in_feed,) = [e for e in calendar(site, "calendar.ics").walk("VEVENT")
                  if str(e["UID"]) == str(talk["UID"])]
    assert str(in_feed["DESCRIPTION"]) == ONLINE_TALK_TEXT
    (showcase,) = calendar(site, "event/nyc-winter-showcase-2026/event.ics").walk("VEVENT")
    assert str(showcase["DESCRIPTION"]) == (
        "Northbound Arts Exchange brings three Riverside acts to the West Village for one "
        "night:\n\n1. The Alvarado Trio (piano jazz)\n2. Marisol Vega & the Night Orchard "
        "(Latin soul)\n3. Big Table Brass (second-line brass band)\n\n"
        "Times on this listing are New York time.")


@pytest.mark.parametrize("html, text", [
    ("<p>One</p>\n<p>Two<br>lines</p>", "One\n\nTwo\nlines"),
    ("<p>a<br><br>b</p>", "a\n\nb"),
    ("<ul><li>x<ul><li>nested</li></ul></li><li>y</li></ul>", "- x\n  - nested\n- y"),
    ('<ol start="3"><li>c</li><li>d</li></ol>', "3. c\n4. d"),
    ('<p>See <a href="https://www.example.org/">example.org</a>.</p>', "See example.org."),
    ('<p><a href="https://example.org/x">https://example.org/x</a></p>',
     "https://example.org/x"),
    ('<p><a href="#top">Top</a> &amp; <a href="tel:+15551234">call</a></p>',
     "Top & call (+15551234)"),
    ('<p><a href="https://example.org/i"><img src="i.png" alt=""></a></p>',
     "https://example.org/i"),
    ("<p>Keep&nbsp;together, <em>stress</em>   spaces\n collapse</p><script>x()</script>",
     "Keep\u00a0together, stress spaces collapse"),
    ("<table><tr><th>Day</th><th>Act</th></tr><tr><td>Fri</td><td>Trio</td></tr></table>",
     "Day | Act\nFri | Trio"),
    ("<pre>a  b\n  c</pre><p>after</p>", "a  b\n  c\n\nafter"),
    ("", ""),
])
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_uids_do_not_depend_on_the_base_url(site: Path, tmp_path: Path) -> None:
    content = make_content(tmp_path / "content")
    build(options(content, tmp_path / "preview", tmp_path / "cache", PREVIEW_URL))
    for path in sorted(site.rglob("*.ics")):
        relative = path.relative_to(site)
        production = calendar(site, str(relative)).walk("VEVENT")
        preview = calendar(tmp_path / "preview", str(relative)).walk("VEVENT")
        assert [str(e["UID"]) for e in production] == [str(e["UID"]) for e in preview]
        for ours, theirs in zip(production, preview):
            assert re.fullmatch(r"\d+@calendar\.example\.org", str(ours["UID"]))
            assert str(ours["URL"]).startswith(BASE_URL)  # the page is where it is built for
            assert str(theirs["URL"]).startswith(PREVIEW_URL)

    # Without a url in calendar.yaml, the base URL's host is all there is: a calendar
    # of that one event shows it (a whole build more would only repeat it).
    small = tmp_path / "small"
    shutil.copytree(REPO / "content" / "categories", small / "categories")
    (small / "events").mkdir()
    (small / "events" / "online-talk-saving-seeds.yaml").write_text(ONLINE_TALK)
    (small / "calendar.yaml").write_text(
        re.sub(r"(?m)^url:.*\n", "", (REPO / "content" / "calendar.yaml").read_text()))
    report = build(options(small, tmp_path / "no-url", tmp_path / "small-cache", PREVIEW_URL))
    assert report.written and not report.problems, report.problems
    (event,) = calendar(tmp_path / "no-url", "event/online-talk-saving-seeds/event.ics"
                        ).walk("VEVENT")
    assert str(event["UID"]) == "990@preview.example"


# -- links on the pages ------------------------------------------------------------------
class Links(HTMLParser):
    """The links (href, text) inside each element of a class (`calendar-menu`, ...), and
    the text of each one's <summary>."""

    def __init__(self, css_class: str) -> None:
        super().__init__()
        self.css_class = css_class
        self.menus: list[list[tuple[str, str]]] = []
        self.summaries: list[str] = []
        self.open: list[str] = []  # tags open inside the current menu
        self.href: str | None = None
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = dict(attrs)
        if not self.open and self.css_class in (values.get("class") or "").split():
            self.menus.append([])
            self.summaries.append("")
        elif not self.open:
            return
        self.open.append(tag)
        if tag == "a":
            self.href, self.text = values["href"], ""

    def handle_endtag(self, tag: str) -> None:
        if not self.open:
            return
        if tag == "a" and self.href is not None:
            self.menus[-1].append((self.href, self.text.strip()))
            self.href = None
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self.href is not None:
            self.text += data
        elif "summary" in self.open:
            self.summaries[-1] += data


def menus(page: Path, css_class: str = "calendar-menu") -> Links:
    parser = Links(css_class)
    parser.feed(page.read_text())
    return parser


def subscribe_hrefs(feed_url: str, name: str) -> list[tuple[str, str]]:
    webcal = "webcal://" + feed_url.split("://", 1)[1]
    query = f"url={quote(feed_url, safe='')}&name={quote(name, safe='')}"
    return [(webcal, "Apple Calendar and other apps"),
            ("https://calendar.google.com/calendar/r?cid=" + quote(webcal, safe=""),
             "Google Calendar"),
            ("https://outlook.live.com/calendar/0/addfromweb?" + query, "Outlook.com"),
            ("https://outlook.office.com/calendar/0/addfromweb?" + query, "Office 365")]


def test_subscribe_menus(site: Path) -> None:
    title = "Riverside Arts & Community Calendar"
    venue = menus(site / "venue/the-blue-lantern/index.html")
    # The venue's own feed, then the whole calendar's in the footer.
    assert venue.summaries == [f"Subscribe to {title}: The Blue Lantern",
                               f"Subscribe to {title}"]
    assert venue.menus[0] == [
        *subscribe_hrefs(BASE_URL + "venue/the-blue-lantern/calendar.ics",
                         f"{title}: The Blue Lantern"),
        ("calendar.ics", "iCalendar file (.ics)")]
    assert venue.menus[1] == [*subscribe_hrefs(BASE_URL + "calendar.ics", title),
                              ("../../calendar.ics", "iCalendar file (.ics)")]
    assert venue.menus[0][0][0] == (
        "webcal://example.org/calendar/venue/the-blue-lantern/calendar.ics")
    google = urlsplit(venue.menus[1][1][0])
    assert parse_qs(google.query) == {"cid": ["webcal://example.org/calendar/calendar.ics"]}
    outlook = urlsplit(venue.menus[1][2][0])
    assert parse_qs(outlook.query) == {"url": ["https://example.org/calendar/calendar.ics"],
                                       "name": [title]}
    # Every page offers the whole calendar; each term, venue and organizer page its own.
    for page in ("index.html", "events/month/2026-12/index.html", "404.html",
                 "event/holiday-messiah-sing-along-2026/index.html"):
        assert menus(site / page).menus[-1][0][0] == "webcal://example.org/calendar/calendar.ics"
    for page, feed in (("events/category/music/jazz/index.html",
                        "events/category/music/jazz/calendar.ics"),
                       ("tag/live-music/index.html", "tag/live-music/calendar.ics"),
                       ("organizer/inland-chamber-players/index.html",
                        "organizer/inland-chamber-players/calendar.ics")):
        found = menus(site / page).menus
        assert len(found) == 2 and found[0][0][0] == "webcal://example.org/calendar/" + feed
        assert (site / feed).exists()
    assert menus(site / "404.html").menus[-1][-1][0] == "/calendar/calendar.ics"


def add_links(site: Path, slug: str) -> dict[str, str]:
    (found,) = menus(site / f"event/{slug}/index.html", "add-to-calendar").menus
    return {text: href for href, text in found}


def query(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    values = parse_qs(parts.query, keep_blank_values=True)
    assert all(len(v) == 1 for v in values.values())
    return {k: v[0] for k, v in values.items()}


def test_add_to_calendar_timed_event(site: Path) -> None:
    links = add_links(site, "holiday-messiah-sing-along-2026")
    assert list(links) == ["Download .ics", "Google Calendar", "Outlook.com", "Office 365"]
    assert links["Download .ics"] == "event.ics"
    page = BASE_URL + "event/holiday-messiah-sing-along-2026/"
    # The excerpt, then the page (the description is in the .ics and on the page).
    body = ("Sing the choruses of Handel's Messiah with a chamber orchestra and four "
            "soloists.\n\n" + page)
    location = "Magnolia Arts Center, 5120 Magnolia Avenue, Riverside, CA 92506, United States"
    google = links["Google Calendar"]
    assert google.startswith("https://calendar.google.com/calendar/render?")
    assert query(google) == {
        "action": "TEMPLATE", "text": "Holiday Messiah Sing-Along",
        # 3:00-5:30 pm in Los Angeles (PST) is 23:00-01:30 UTC.
        "dates": "20261213T230000Z/20261214T013000Z", "details": body,
        "location": location, "ctz": "America/Los_Angeles"}
    outlook = {"path": "/calendar/action/compose", "rru": "addevent",
               "subject": "Holiday Messiah Sing-Along", "startdt": "2026-12-13T23:00:00Z",
               "enddt": "2026-12-14T01:30:00Z", "body": body, "location": location,
               "allday": "false"}
    assert links["Outlook.com"].startswith("https://outlook.live.com/calendar/0/deeplink/compose?")
    assert query(links["Outlook.com"]) == outlook
    assert links["Office 365"].startswith(
        "https://outlook.office.com/calendar/0/deeplink/compose?")
    assert query(links["Office 365"]) == outlook
    assert "+" not in links["Outlook.com"]  # spaces are %20 for every service


def test_add_to_calendar_all_day_and_online_events(site: Path) -> None:
    market = add_links(site, "december-makers-market-2026")
    # Two days, December 5 and 6: the end is exclusive, as in the .ics.
    assert query(market["Google Calendar"])["dates"] == "20261205/20261207"
    outlook = query(market["Outlook.com"])
    assert (outlook["startdt"], outlook["enddt"], outlook["allday"]) == (
        "2026-12-05", "2026-12-07", "true")
    assert query(market["Office 365"]) == outlook

    talk = add_links(site, "online-talk-saving-seeds")
    body = "A short talk, online.\n\n" + BASE_URL + "event/online-talk-saving-seeds/"
    assert query(talk["Google Calendar"])["details"] == body
    assert "location" not in query(talk["Google Calendar"])  # no venue
    assert query(talk["Outlook.com"])["body"] == body
    assert query(talk["Outlook.com"])["startdt"] == "2026-12-03T02:00:00Z"


def test_links_without_excerpt_take_the_description_cut_short(tmp_path: Path) -> None:
    content = make_content(tmp_path / "content", small=True)
    talk = content / "events/2026/online-talk-saving-seeds.yaml"
    talk.write_text(talk.read_text().replace("excerpt: A short talk, online.\n", "")
                    + "\n  " + "word " * 400 + "\n")
    build(options(content, tmp_path / "public", tmp_path / "cache"))
    links = add_links(tmp_path / "public", "online-talk-saving-seeds")
    details = query(links["Google Calendar"])["details"]
    assert query(links["Outlook.com"])["body"] == details
    text, page = details.rsplit("\n\n", 1)
    assert page == BASE_URL + "event/online-talk-saving-seeds/"
    assert text.startswith(ONLINE_TALK_TEXT.rsplit("\n\n", 1)[0])  # link addresses kept
    assert text.endswith("word …") and len(text) <= 502
    # The feed keeps all of it.
    (event,) = calendar(tmp_path / "public", "event/online-talk-saving-seeds/event.ics"
                        ).walk("VEVENT")
    assert str(event["DESCRIPTION"]).count("word") == 400


# -- incremental builds --------------------------------------------------------------------
def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_rebuild_after_an_event_leaves_the_window(tmp_path: Path) -> None:
    """Two hours on, the recent jam ended over 30 days ago: a --watch rebuild after a
    text edit (the incremental path) drops it from the feeds as a full build does."""
    content = make_content(tmp_path / "content", small=True)
    builder = Builder(options(content, tmp_path / "a", tmp_path / "cache"))
    later = NOW + dt.timedelta(hours=2)
    try:
        builder.build()
        assert RECENT in slugs(calendar(tmp_path / "a", "calendar.ics"))
        relpath = "events/2026/holiday-messiah-sing-along-2026.yaml"
        event = content / relpath
        event.write_text(event.read_text().replace("title: Holiday Messiah Sing-Along",
                                                   "title: Messiah Sing-Along"))
        builder.reader.catalog.refresh([relpath])
        builder.reader = dataclasses.replace(builder.reader, clock=clocks.fixed(later))
        report = builder.build()
        assert "calendar.ics" in report.written and not report.problems
    finally:
        builder.close()
    main = calendar(tmp_path / "a", "calendar.ics")
    assert RECENT not in slugs(main) and "Messiah Sing-Along" in [
        str(e["SUMMARY"]) for e in main.walk("VEVENT")]
    build(options(content, tmp_path / "full", tmp_path / "other-cache", now=later))
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "full")
