"""What search engines and link previews read: every event page's JSON-LD passes a
schema.org validator (the official vocabulary) and Google's Event rules, the REST single
read's `json_ld` is the page's, head tags, noindex and the sitemap."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import compiled_templates, embed_snapshots
from schemaorg_check import check
from sitebuilds import small_sample

from calendar_app.http.app import create_app
from calendar_app.site import Builder, Options, build
from calendar_app.site.meta import shorten

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
# calendar.yaml's url: the API and the pages share their permalinks.
BASE_URL = "https://calendar.example.org/"
REST = "/wp-json/tribe/events/v1"

# Attended in a Toronto room and online, priced in Canadian dollars, two organizers,
# two performers.
MIXED = """\
id: 901
title: Hybrid Jazz Summit
slug: hybrid-jazz-summit-2027
status: publish
author: 1
date: 2026-10-01 09:30:00
modified: 2026-10-02 10:00:00
start_date: 2027-03-12 19:00:00
end_date: 2027-03-12 22:00:00
timezone: America/Toronto
venue: the-blue-lantern
organizers:
  - riverside-jazz-collective
  - northbound-arts-exchange
cost: CA$15 - CA$1,040
currency_code: CAD
online_url: https://stream.example.org/jazz-summit
performer:
  - The Blue Notes
  - Ada Park
image: media/jazz-night.png
excerpt: Two stages, one stream.
"""

ONLINE = """\
id: 902
title: Webinar on Archives
slug: webinar-on-archives-2027
status: publish
author: 1
date: 2026-11-01 08:00:00
start_date: 2027-04-14 10:00:00
end_date: 2027-04-14 11:00:00
online_url: https://meet.example.org/archives
performer: Dr. Ines Oduya
cost: Free
description: |
  How to *find* things in the county archive.
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("jsonld")
    content = tmp / "content"
    shutil.copytree(REPO / "content", content)
    (content / "events/2027/hybrid-jazz-summit-2027.yaml").write_text(MIXED)
    (content / "events/2027/webinar-on-archives-2027.yaml").write_text(ONLINE)
    report = build(Options(content=content, out=tmp / "public", now=NOW, base_url=BASE_URL,
                           cache_dir=tmp / "cache", progress=False,
                           compiled_templates=compiled_templates()))
    assert report.written and not report.problems
    return content, tmp / "public"


def page(site: Path, slug: str) -> str:
    return (site / "event" / slug / "index.html").read_text(encoding="utf-8")


def page_json_ld(html: str) -> dict:
    (found,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html,
                          re.DOTALL)
    return json.loads(found)


def meta_tags(html: str) -> dict[str, str]:
    head = html.split("</head>", 1)[0]
    return {m[0]: m[1] for m in re.findall(
        r'<meta (?:name|property)="([^"]+)" content="([^"]*)">', head)}


def test_mixed_attendance_cad_range_organizers_performers(built: tuple[Path, Path]) -> None:
    ld = page_json_ld(page(built[1], "hybrid-jazz-summit-2027"))
    url = BASE_URL + "event/hybrid-jazz-summit-2027/"
    assert ld == {
        "@context": "http://schema.org", "@type": "Event", "name": "Hybrid Jazz Summit",
        "description": "Two stages, one stream.",
        "image": BASE_URL + "media/jazz-night.png",
        "url": url,
        "eventAttendanceMode": "https://schema.org/MixedEventAttendanceMode",
        "eventStatus": "https://schema.org/EventScheduled",
        "startDate": "2027-03-12T19:00:00-05:00", "endDate": "2027-03-12T22:00:00-05:00",
        "location": [
            {"@type": "Place", "name": "The Blue Lantern",
             "description": "A 120-capacity listening room below the old Mission Hardware "
                            "building. Entrance is on the alley side; 21+ after 8 pm.",
             "address": {"@type": "PostalAddress",
                         "streetAddress": "3890 Main Street, Suite B",
                         "addressLocality": "Riverside", "addressRegion": "CA",
                         "postalCode": "92501", "addressCountry": "United States"},
             "telephone": "(951) 555-0173", "sameAs": "https://bluelantern.example.com/",
             "geo": {"@type": "GeoCoordinates", "latitude": 33.98452,
                     "longitude": -117.37391},
             "url": BASE_URL + "venue/the-blue-lantern/"},
            {"@type": "VirtualLocation", "url": "https://stream.example.org/jazz-summit"}],
        "organizer": [
            {"@type": "Organization", "name": "Riverside Jazz Collective",
             "description": "A volunteer collective of working musicians who book the monthly "
                            "Jazz Night, run a youth combo program and host the New Year's "
                            "Eve gala.",
             "url": "https://riversidejazz.example.org/", "telephone": "(951) 555-0101",
             "email": "hello@riversidejazz.example.org",
             "sameAs": "https://riversidejazz.example.org/"},
            {"@type": "Organization", "name": "Northbound Arts Exchange",
             "description": "A small presenting organization that swaps artists between "
                            "Riverside, New York and Vancouver each season.",
             "url": "https://northbound.example.com/", "telephone": "(212) 555-0145",
             "email": "exchange@northbound.example.com",
             "sameAs": "https://northbound.example.com/"}],
        # A range: low and high as plain numbers, in the event's own currency.
        "offers": {"@type": "AggregateOffer", "lowPrice": "15", "highPrice": "1040",
                   "priceCurrency": "CAD", "url": url,
                   "availability": "https://schema.org/InStock",
                   "validFrom": "2026-10-01T00:00:00-07:00"},
        "performer": [{"@type": "Person", "name": "The Blue Notes"},
                      {"@type": "Person", "name": "Ada Park"}],
    }


def test_online_event(built: tuple[Path, Path]) -> None:
    ld = page_json_ld(page(built[1], "webinar-on-archives-2027"))
    url = BASE_URL + "event/webinar-on-archives-2027/"
    assert ld == {
        "@context": "http://schema.org", "@type": "Event", "name": "Webinar on Archives",
        "description": "How to find things in the county archive.",
        "url": url,
        "eventAttendanceMode": "https://schema.org/OnlineEventAttendanceMode",
        "eventStatus": "https://schema.org/EventScheduled",
        "startDate": "2027-04-14T10:00:00-07:00", "endDate": "2027-04-14T11:00:00-07:00",
        "location": {"@type": "VirtualLocation", "url": "https://meet.example.org/archives"},
        "offers": {"@type": "Offer", "price": "0", "priceCurrency": "USD", "url": url,
                   "availability": "https://schema.org/InStock",
                   "validFrom": "2026-11-01T00:00:00-07:00"},
        "performer": {"@type": "Person", "name": "Dr. Ines Oduya"},
    }


def test_performer_type_from_settings(built: tuple[Path, Path], tmp_path: Path) -> None:
    # The small calendar with the module's two events: one page is looked at.
    content = small_sample(tmp_path / "content")
    for name in ("hybrid-jazz-summit-2027.yaml", "webinar-on-archives-2027.yaml"):
        shutil.copy(built[0] / "events/2027" / name, content / "events/2027" / name)
    with (content / "calendar.yaml").open("a") as fh:
        fh.write("performer_type: PerformingGroup\n")
    build(Options(content=content, out=tmp_path / "public", now=NOW, base_url=BASE_URL,
                  cache_dir=tmp_path / "cache", progress=False,
                  compiled_templates=compiled_templates()))
    ld = page_json_ld(page(tmp_path / "public", "hybrid-jazz-summit-2027"))
    assert ld["performer"] == [{"@type": "PerformingGroup", "name": "The Blue Notes"},
                               {"@type": "PerformingGroup", "name": "Ada Park"}]
    assert check(ld) == []


def test_every_event_page_passes_the_validator(built: tuple[Path, Path]) -> None:
    content, site = built
    pages = sorted((site / "event").glob("*/index.html"))
    assert len(pages) == 58  # the sample's 56 and the two above
    for path in pages:
        ld = page_json_ld(path.read_text(encoding="utf-8"))
        findings = check(ld)
        assert [str(f) for f in findings if f.severity == "error"] == [], path
        # Recommended members are missing only where the content has nothing to say.
        (file,) = content.glob(f"events/*/{path.parent.name}.yaml")
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
        priced = re.search(r"[0-9]|free", str(data.get("cost")), re.IGNORECASE)
        expected = {name for name, key in (("performer", "performer"), ("image", "image"),
                                           ("organizer", "organizers")) if not data.get(key)}
        expected |= set() if priced else {"offers"}
        assert {f.where for f in findings} == expected, path


@pytest.mark.parametrize(("change", "error"), [
    ({"performer": "Organization"},  # the plugin's placeholder
     ("error: performer: the text 'Organization' where schema.org expects Organization or "
     "Person")),
    ({"offers": {"@type": "Offer", "price": "5", "priceCurrency": "USD", "url": "https://x.org/",
                 "validFrom": "2026-01-01", "availability": "inStock"}},
     ("error: offers.availability: the text 'inStock' where schema.org expects "
     "ItemAvailability")),
    ({"eventStatus": "https://schema.org/InStock"},
     "error: eventStatus: the member 'InStock' where schema.org expects EventStatusType"),
    ({"organizer": {"@type": "Organisation", "name": "X"}},
     "error: organizer: unknown type 'Organisation'"),
    ({"venue": "Hall"}, "error: venue: unknown property 'venue'"),
    ({"location": {"@type": "Place", "name": "Hall", "lowPrice": 3}},
     "error: location.lowPrice: 'lowPrice' is not a property of Place"),
    ({"location": {"@type": "VirtualLocation"}},
     "error: location.url: required for a VirtualLocation"),
    ({"url": "/event/x/"}, "error: url: the text '/event/x/' where schema.org expects URL"),
    ({"startDate": "2027-01-01T10:00:00"}, "error: startDate: a time without its UTC offset"),
    ({"startDate": "next Tuesday"},
     "error: startDate: the text 'next Tuesday' where schema.org expects Date or DateTime"),
])
def test_validator_finds_what_google_refuses(built: tuple[Path, Path], change: dict,
                                             error: str) -> None:
    good = page_json_ld(page(built[1], "webinar-on-archives-2027"))
    assert [f for f in check(good) if f.severity == "error"] == []
    assert error in [str(f) for f in check({**good, **change})]


def test_validator_requires_googles_event_members(built: tuple[Path, Path]) -> None:
    good = page_json_ld(page(built[1], "webinar-on-archives-2027"))
    bare = {k: v for k, v in good.items() if k not in ("location", "startDate", "offers")}
    assert [str(f) for f in check(bare)] == [
        "error: startDate: required by Google for an Event",
        "error: location: required by Google for an Event",
        "warning: image: recommended by Google for an Event",
        "warning: offers: recommended by Google for an Event",
        "warning: organizer: recommended by Google for an Event"]


def test_rest_single_read_carries_the_pages_json_ld(built: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    content, site = built
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "u.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "SITE_URL": BASE_URL})
    client = app.test_client()
    for event_id, slug in ((901, "hybrid-jazz-summit-2027"), (902, "webinar-on-archives-2027"),
                           (115, "winter-chamber-series-brahms-2027")):
        response = client.get(f"{REST}/events/{event_id}")
        assert response.status_code == 200
        body = response.get_json()
        assert body["json_ld"] == page_json_ld(page(site, slug)), slug
    mixed = client.get(f"{REST}/events/901").get_json()
    # Our fields follow the plugin's, before json_ld, only on events that have them.
    assert list(mixed)[-3:] == ["online_url", "performer", "json_ld"]
    assert mixed["online_url"] == "https://stream.example.org/jazz-summit"
    assert mixed["performer"] == ["The Blue Notes", "Ada Park"]
    plain = client.get(f"{REST}/events/101").get_json()
    assert list(plain)[-2:] == ["custom_fields", "json_ld"]
    listed = client.get(f"{REST}/events?per_page=50&start_date=2027-04-01").get_json()
    webinar = next(e for e in listed["events"] if e["id"] == 902)
    assert webinar["performer"] == ["Dr. Ines Oduya"] and "json_ld" not in webinar


def test_head_tags(built: tuple[Path, Path]) -> None:
    site = built[1]
    tags = meta_tags(page(site, "hybrid-jazz-summit-2027"))
    url = BASE_URL + "event/hybrid-jazz-summit-2027/"
    assert tags == {
        "viewport": "width=device-width, initial-scale=1",
        "description": "Two stages, one stream.", "og:type": "website",
        "og:title": "Hybrid Jazz Summit", "og:url": url,
        "og:site_name": "Riverside Arts &amp; Community Calendar",
        "og:description": "Two stages, one stream.",
        "og:image": BASE_URL + "media/jazz-night.png",
        "twitter:card": "summary_large_image"}
    # No image: the small card. A long description is cut at a word, on one line.
    chamber = meta_tags(page(site, "online-workshop-grant-writing-2027"))
    assert chamber["twitter:card"] == "summary" and "og:image" not in chamber
    assert chamber["description"] == ("A practical session on writing your first arts grant "
                                      "application.")
    venue = meta_tags((site / "venue/the-blue-lantern/index.html").read_text())
    assert venue["description"] == ("A 120-capacity listening room below the old Mission "
                                     "Hardware building. Entrance is on the alley side; 21+ "
                                     "after 8 pm.")
    assert venue["og:title"] == "Venue: The Blue Lantern"
    upcoming = meta_tags((site / "events/list/index.html").read_text())
    assert upcoming["description"].startswith("Concerts, exhibitions, workshops")
    assert upcoming["og:url"] == BASE_URL + "events/list/"
    home = meta_tags((site / "index.html").read_text())
    assert home["og:url"] == BASE_URL + "events/list/"  # the canonical page's address


def test_shorten() -> None:
    assert shorten("  two\n lines ") == "two lines"
    text = "word " * 40
    assert shorten(text) == ("word " * 32).strip() + "\u2026"  # 160 characters
    assert len(shorten(text)) <= 160
    assert shorten("x" * 200) == "x" * 159 + "\u2026"


def test_hidden_event_is_noindex_and_not_in_the_sitemap(built: tuple[Path, Path]) -> None:
    site = built[1]
    hidden = page(site, "volunteer-usher-orientation-2027")
    assert meta_tags(hidden)["robots"] == "noindex"
    assert "robots" not in meta_tags(page(site, "hybrid-jazz-summit-2027"))
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.parse(site / "sitemap.xml").findall(".//s:loc", ns)]
    assert len(locs) == len(set(locs))
    assert BASE_URL + "event/volunteer-usher-orientation-2027/" not in locs
    assert BASE_URL not in locs  # "/": its canonical is the upcoming list
    assert BASE_URL + "events/list/" in locs
    assert BASE_URL + "event/hybrid-jazz-summit-2027/" in locs
    # Every other page is there: all HTML outputs but the 404, the home page, the
    # hidden event, the views for iframes (noindex) and this week's address (an alias).
    pages = {BASE_URL + p.relative_to(site).as_posix().removesuffix("index.html")
             for p in site.rglob("*.html") if p.name == "index.html"} - {BASE_URL}
    framed = {p for p in pages if p.startswith((BASE_URL + "embed/list/",
                                                BASE_URL + "embed/month/"))}
    assert framed and BASE_URL + "embed/" in locs
    assert set(locs) == pages - framed - {BASE_URL + "event/volunteer-usher-orientation-2027/",
                                          BASE_URL + "events/week/"}


def tree_bytes(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_edits_rebuild_like_a_full_build(built: tuple[Path, Path], tmp_path: Path) -> None:
    """Performer and online address edits take the incremental path; hiding an event
    re-plans (the sitemap and lists change). Either way: a full build's bytes."""
    # The small calendar with the module's two events: the checks here do not depend
    # on the calendar's size (sitebuilds.small_sample).
    content = small_sample(tmp_path / "content")
    for name in ("hybrid-jazz-summit-2027.yaml", "webinar-on-archives-2027.yaml"):
        shutil.copy(built[0] / "events/2027" / name, content / "events/2027" / name)
    relpath = "events/2027/webinar-on-archives-2027.yaml"
    event = content / relpath

    def options(out: str, cache: str) -> Options:
        return Options(content=content, out=tmp_path / out, now=NOW, base_url=BASE_URL,
                       cache_dir=tmp_path / cache, progress=False,
                       compiled_templates=compiled_templates())
    builder = Builder(options("a", "cache"))
    try:
        builder.build()
        for old, new in (("performer: Dr. Ines Oduya", "performer: [Ines Oduya, Sam Lee]"),
                         ("meet.example.org/archives", "meet.example.org/county"),
                         ("cost: Free", "cost: Free\nhide_from_listings: true")):
            event.write_text(event.read_text().replace(old, new))
            builder.reader.catalog.refresh([relpath])
            report = builder.build()
            assert report.written and not report.problems
            fresh = f"full-{len(report.written)}"
            build(options(fresh, "other"))
            assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / fresh), new
            if "performer" in new:
                # Incremental: only the event's outputs looked at (and the component's lists).
                assert report.skipped < 50 + embed_snapshots(tmp_path / "a")
    finally:
        builder.close()
    site = tmp_path / "a"
    ld = page_json_ld(page(site, "webinar-on-archives-2027"))
    assert ld["performer"] == [{"@type": "Person", "name": "Ines Oduya"},
                               {"@type": "Person", "name": "Sam Lee"}]
    assert ld["location"]["url"] == "https://meet.example.org/county"
    assert meta_tags(page(site, "webinar-on-archives-2027"))["robots"] == "noindex"
    assert "webinar-on-archives" not in (site / "sitemap.xml").read_text()
