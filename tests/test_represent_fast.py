"""The event representation made with less work keeps its bytes: each date formatted
once (its details sliced from its text, its JSON-LD offset from its UTC time), and the
page JSON-LD made from the snapshot's when the API's permalink base is not the pages'."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import pickle
import shutil
from pathlib import Path

import pytest
from conftest import NOW, SAMPLE, site_options
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup

from calendar_app.catalog.represent import Representer
from calendar_app.model import dates
from calendar_app.model.records import Record
from calendar_app.site import Builder
from calendar_app.site import ahead as ahead_module
from calendar_app.site.memo import BuildRepresenter
from calendar_app.site.model import SiteModel
from calendar_app.site.pages import Pages
from calendar_app.site.render import ItemShape
from calendar_app.store.locations import DEFAULT_BASE_PATH
from tests.test_site_build import tree_bytes

PAGES = "https://example.org/calendar/"
API = "https://api.example.net/"
ZONES = ["UTC", "America/Los_Angeles", "Europe/London", "Australia/Lord_Howe",
         "Asia/Kolkata", "America/St_Johns", "Africa/Monrovia", "Pacific/Chatham",
         "UTC+5.5", "UTC-3", "UTC+14"]


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)))
def test_a_dates_text_and_details_come_from_one_formatting(value: dt.datetime) -> None:
    assert dates.fmt_details(value) == (dates.fmt(value), dates.details(value))


@given(st.datetimes(min_value=dates.MIN_KEPT, max_value=dates.MAX_KEPT), st.sampled_from(ZONES))
def test_an_offset_from_the_utc_time_is_the_zones_offset(local: dt.datetime, name: str) -> None:
    # DST gaps and folds, half-hour and historic (seconds) offsets: to_utc and offset_iso
    # both take fold=0, so the wall time minus its UTC time is the offset.
    zone = dates.zone(name)
    expected = dates.offset_iso(local, zone)
    assert dates.iso_with_offset(dates.fmt(local), local - dates.to_utc(local, zone)) == (
        expected)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("represent")
    content = shutil.copytree(SAMPLE, tmp / "content")
    builder = Builder(site_options(content, tmp / "public", tmp / "cache", PAGES))
    yield builder.reader.catalog
    builder.close()


def _variants(record: Record) -> list[Record]:
    """The event as written and with the members the JSON-LD's URLs hang on changed."""
    data = record.data
    changes = [{}, {"online_url": "https://meet.example.com/x"}, {"venue": None},
               {"image": "https://cdn.example.com/poster.JPG"}, {"image": "media/none.png"},
               {"cost": "$5 - $15"}, {"cost": "Free"}, {"cost": None},
               {"organizer": ["nope", *(data.get("organizer") or [])]},
               {"all_day": True, "previous_start_date": data["start_date"]},
               {"timezone": "Australia/Lord_Howe", "performer": ["A", "B"]}]
    return [dataclasses.replace(record, data={**data, **change}) for change in changes]


def _events(catalog) -> list[Record]:
    return [v for r in catalog.all("events") for v in _variants(r)]


@pytest.mark.parametrize("kind", [Representer, BuildRepresenter])
def test_the_json_ld_of_a_single_read_is_the_one_made_on_its_own(catalog, kind) -> None:
    # A single read passes its representation's times and links; event_json_ld works
    # them out again from the record: the same JSON-LD.
    rep = kind(catalog, API, API + "wp-json")
    for record in _events(catalog):
        body = rep.event(record, single=True)
        assert body["json_ld"] == rep.event_json_ld(record, rep.event(record)), record.slug


@pytest.mark.parametrize("kind", [Representer, BuildRepresenter])
def test_the_pages_json_ld_rebased_from_the_apis_is_the_one_made_for_the_pages(catalog, kind
                                                                               ) -> None:
    api = kind(catalog, API, PAGES.rstrip("/") + DEFAULT_BASE_PATH)
    pages = kind(catalog, PAGES, api.rest_root)
    seen = set()
    for record in _events(catalog):
        snapshot = api.event(record, single=True)
        body = {**snapshot, "url": pages.url(record),
                "image": pages.image(record.get("image"))}
        del body["json_ld"]
        made = pages.event_json_ld(record, body)
        rebased = pages.rebased_event_json_ld(record, body, snapshot["json_ld"])
        # Dumped: the same members in the same order, as the page prints them.
        assert json.dumps(rebased) == json.dumps(made), record.slug
        assert rebased != snapshot["json_ld"]  # the URLs did change
        seen.update(key for key in made if isinstance(made[key], (dict, list)))
    assert {"location", "organizer", "offers"} <= seen


def test_an_edited_venue_shows_in_the_event_pages_json_ld(tmp_path: Path) -> None:
    # The pages' JSON-LD is rebased from the snapshot's (the sample's API base is its
    # settings' url, not the pages'); under one builder (--watch), a rebuild after the
    # venue's edit shows its new address and its page's URL with the pages' base.
    content = shutil.copytree(SAMPLE, tmp_path / "content")
    builder = Builder(site_options(content, tmp_path / "public", tmp_path / "cache", PAGES))
    page = tmp_path / "public/event/december-makers-market-2026/index.html"

    def place() -> dict:
        html = page.read_text()
        start = html.index('<script type="application/ld+json">') + 35
        return json.loads(html[start:html.index("</script>", start)])["location"]
    try:
        builder.build()
        assert builder._last.model.api_rep.site_url != PAGES
        assert place()["address"]["streetAddress"] == "5225 Canyon Crest Drive"
        assert place()["url"] == PAGES + "venue/canyon-crest-community-hall/"
        venue = content / "venues/canyon-crest-community-hall.yaml"
        venue.write_text(venue.read_text().replace("5225 Canyon Crest Drive", "12 Orange Row"))
        builder.reader.catalog.refresh(["venues/canyon-crest-community-hall.yaml"])
        assert not builder.build().problems
        assert place()["address"]["streetAddress"] == "12 Orange Row"
        assert place()["url"] == PAGES + "venue/canyon-crest-community-hall/"
    finally:
        builder.close()


def test_list_items_made_while_planning_give_the_site_one_process_gives(
        tmp_path: Path, monkeypatch) -> None:
    # A cold two-process build renders the listed events' items in the child that
    # works while it plans (site/ahead.py), cut into shapes set on the views before the
    # render processes fork; a one-process build renders each where a page asks.
    monkeypatch.setattr(ahead_module, "AHEAD_MIN", 1)  # the sample has ~100 events
    kept: list[int] = []
    start = ahead_module.start

    def counted(pages, vevents):
        keep = start(pages, vevents)

        def keep_counted() -> None:
            listed = pages.model.listed
            before = sum(e.kept_item is not None for e in listed)
            keep()
            kept.append(sum(e.kept_item is not None for e in listed) - before)
            # Only items whose one way up is their link have a shape (no local thumbnail).
            assert all(e.kept_item is not None or e.record.get("image") for e in listed)
        return keep_counted
    monkeypatch.setattr(ahead_module, "start", counted)
    content = shutil.copytree(SAMPLE, tmp_path / "content")
    for workers in (2, 1):
        builder = Builder(site_options(content, tmp_path / f"public-{workers}",
                                       tmp_path / f"cache-{workers}", PAGES))
        builder.workers = workers
        try:
            assert not builder.build().problems
        finally:
            builder.close()
    assert len(kept) == 1 and kept[0] > 20  # the two-process build, most of the events
    assert tree_bytes(tmp_path / "public-2") == tree_bytes(tmp_path / "public-1")


def test_no_items_ahead_from_templates_without_the_item_macro(tmp_path: Path) -> None:
    # A user's _macros.html without event_item: nothing made ahead, nothing fails.
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "_macros.html").write_text("{% macro other() %}x{% endmacro %}\n")
    content = shutil.copytree(SAMPLE, tmp_path / "content")
    builder = Builder(site_options(content, tmp_path / "public", tmp_path / "cache", PAGES,
                                   templates=templates))
    try:
        builder.reader.catalog  # noqa: B018 (loaded)
        model = SiteModel(builder.reader.catalog, Representer(builder.reader.catalog, PAGES, "r"),
                          NOW)
        pages = Pages(model, builder.env, PAGES)
        assert ahead_module.item_shapes(pages, lambda: False) == {}
    finally:
        builder.close()


def test_an_item_shape_comes_back_from_the_child_the_same() -> None:
    item = Markup('<article><h3 class="event-title"><a href="../../event/a/">A</a></h3>'
                  '<p>x</p></article>')
    shape = ItemShape("h3", "../../event/a/", item)
    back = pickle.loads(pickle.dumps(shape, protocol=pickle.HIGHEST_PROTOCOL))
    for heading, link in (("h3", "../../event/a/"), ("h2", "../event/a/"),
                          ("h4", "../../../event/a/")):
        assert back.made(heading, link) == shape.made(heading, link) is not None
    assert shape.made("h2", "../event/a/") == Markup(
        '<article><h2 class="event-title"><a href="../event/a/">A</a></h2><p>x</p></article>')
