"""List pages of the static site: month separators, date badges, thumbnails, cost,
featured events, "Jump to month", and their place in incremental builds."""

from __future__ import annotations

import datetime as dt
import re
import struct
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
import sitebuilds
from conftest import site_options

from calendar_app.site import Builder, build


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sitebuilds.sample_site(tmp_path_factory)


class Items(HTMLParser):
    """The list items of a page, in order, each with the month heading above it."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[dict] = []
        self.month = ""
        self.featured = False  # the <li> being read has class "featured"
        self._in: str | None = None  # the element whose text is being collected

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if "month-separator" in classes:
            self._in, self.month = "month", ""
        elif tag == "li":
            self.featured = "featured" in classes
        elif tag == "article" and "event-item" in classes:
            self.items.append({"month": self.month, "featured": self.featured,
                               "end": a.get("data-end"), "text": "", "badge": "",
                               "badge_hidden": None, "labels": [], "img": None,
                               "time": None, "cost": "", "heading": None})
        elif self.items:
            item = self.items[-1]
            if "date-badge" in classes:
                item["badge_hidden"], self._in = a.get("aria-hidden"), "badge"
            elif "event-title" in classes:
                item["heading"], self._in = tag, "title"
            elif "featured-label" in classes:
                self._in = "featured"
            elif "event-cost" in classes:
                self._in = "cost"
            elif tag == "time" and item["time"] is None:
                item["time"] = a["datetime"]
            elif tag == "img" and "event-thumb" in classes:
                item["img"] = a

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3", "h4", "p"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "month":
            self.month += data
        elif self._in == "featured":
            self.items[-1]["labels"].append(data.strip())
        elif self._in in ("badge", "title", "cost"):
            key = "text" if self._in == "title" else self._in
            self.items[-1][key] += data


def items_of(site: Path, path: str) -> list[dict]:
    parser = Items()
    parser.feed((site / path).read_text(encoding="utf-8"))
    return parser.items


def month_of(iso: str) -> str:
    return dt.date.fromisoformat(iso[:10]).strftime("%B %Y")


def test_month_separators_head_each_month(site: Path) -> None:
    for path, count in (("events/list/index.html", 10), ("events/list/page/2/index.html", 10),
                        ("venue/the-blue-lantern/index.html", 7)):
        items = items_of(site, path)
        assert len(items) == count, path
        # Every item sits under the heading of its start month, and months run in order.
        assert [i["month"] for i in items] == [month_of(i["time"]) for i in items], path
    page = (site / "events/list/index.html").read_text()
    assert re.findall(r'<h2 class="month-separator">([^<]*)</h2>', page) == [
        "December 2026", "January 2027"]
    # Page 2 starts with a heading for the month it starts in, even if page 1 had it.
    second = (site / "events/list/page/2/index.html").read_text()
    first = items_of(site, "events/list/page/2/index.html")[0]
    assert re.search(r'<h1>.*?</h1>.*?<h2 class="month-separator">([^<]*)</h2>',
                     second, re.DOTALL).group(1) == month_of(first["time"]) == "February 2027"
    # One heading level below the page's: h1 > h2 month > h3 event; on a venue page
    # h2 "Upcoming events" > h3 month > h4 event.
    assert {i["heading"] for i in items_of(site, "events/list/index.html")} == {"h3"}
    venue = (site / "venue/the-blue-lantern/index.html").read_text()
    assert '<h3 class="month-separator">December 2026</h3>' in venue
    assert {i["heading"] for i in items_of(site, "venue/the-blue-lantern/index.html")} == {"h4"}
    # A day page lists one day: no separators.
    assert "month-separator" not in (site / "events/2026-12-13/index.html").read_text()


def test_date_badge_is_hidden_from_readers_and_matches_the_date(site: Path) -> None:
    items = items_of(site, "events/list/index.html")
    for item in items:
        day = dt.date.fromisoformat(item["time"][:10])
        assert item["badge"].split() == [day.strftime("%b"), str(day.day)]
        assert item["badge_hidden"] == "true"  # the full date is in the <time> beside it
    assert items[0]["badge"].split() == ["Dec", "5"]


def png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_thumbnail_with_size_alt_and_lazy_loading(site: Path) -> None:
    items = {i["text"]: i for i in items_of(site, "events/list/index.html")}
    gala = items["New Year’s Eve Jazz Gala"]["img"]
    assert gala is not None
    assert gala["src"] == "../../media/jazz-night.png"
    assert gala["alt"] == "" and gala["loading"] == "lazy"
    image = site / "events/list" / unquote(gala["src"])
    assert (int(gala["width"]), int(gala["height"])) == png_size(image.resolve())
    assert items["December Makers Market"]["img"] is None  # no image: no thumbnail
    # Deeper pages link the same file from where they are.
    venue = {i["text"]: i for i in items_of(site, "venue/the-blue-lantern/index.html")}
    assert venue["New Year’s Eve Jazz Gala"]["img"]["src"] == "../../media/jazz-night.png"


def test_cost_and_featured(site: Path) -> None:
    items = {i["text"]: i for i in items_of(site, "events/list/index.html")}
    assert items["December Makers Market"]["cost"] == "Cost: Free"
    assert items["Riverside Comes to Manhattan: Winter Showcase"]["cost"] == "Cost: $20 – $35"
    featured = sorted(t for t, i in items.items() if i["featured"])
    assert featured == ["New Year’s Eve Jazz Gala", "Winter Solstice Lantern Walk"]
    for title, item in items.items():
        assert item["labels"] == (["Featured"] if title in featured else []), title
    page = (site / "events/list/index.html").read_text()
    assert page.count('class="featured-label">Featured<') == 2


def jump_links(page: str) -> list[tuple[str, str]]:
    menu = re.search(r'<details class="jump-month">.*?</details>', page, re.DOTALL)
    assert menu, "no Jump to month menu"
    return re.findall(r'<a href="([^"]+)" data-month="([^"]+)">', menu.group(0))


@pytest.mark.parametrize("path", ["events/list/index.html", "events/past/index.html",
                                  "events/category/music/index.html",
                                  "events/month/2027-03/index.html"])
def test_jump_to_month_links_every_month_page(site: Path, path: str) -> None:
    page = (site / path).read_text()
    links = jump_links(page)
    months = sorted(p.parent.name for p in (site / "events/month").glob("*/index.html"))
    assert [month for _, month in links] == months
    assert months[0] == "2026-11" and months[-1] == "2028-06"
    for href, month in links:
        target = (site / path).parent / href
        assert target.resolve() == (site / f"events/month/{month}/index.html").resolve()
    field = re.search(r'<input type="month"[^>]*>', page).group(0)
    assert 'min="2026-11"' in field and 'max="2028-06"' in field
    root = "../" * path.count("/")
    assert f'<script src="{root}assets/jump-month.js"></script>' in page


def test_no_jump_menu_after_the_first_page_of_a_list(site: Path) -> None:
    for path in ("events/list/page/2/index.html", "events/category/music/page/2/index.html"):
        page = (site / path).read_text()
        assert "jump-month" not in page, path


def tree(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


def test_incremental_builds_follow_new_months_and_images(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A new last month changes every jump menu; a replaced image the thumbnails'
    sizes: a running builder gives the bytes of a full build (the pages' bytes, for
    the image: the JSON snapshots' image sizes do not follow a replaced file yet)."""
    content = sitebuilds.sample_copy(tmp_path_factory, tmp_path) / "content"
    builder = Builder(site_options(content, tmp_path / "public", tmp_path / "cache"))
    try:
        assert builder.build().written == []  # the built sample: nothing to redo
        source = content / "events/2027/jazz-night-march-2027.yaml"
        late = content / "events/2029/jazz-night-march-2029.yaml"
        late.parent.mkdir()
        text = source.read_text().replace("2027-03-04", "2029-03-01")
        text = re.sub(r"(?m)^id: \d+$", "id: 9001", text)
        late.write_text(text.replace("slug: jazz-night-march-2027",
                                     "slug: jazz-night-march-2029"))
        builder.reader.catalog.refresh(["events/2029/jazz-night-march-2029.yaml"])
        report = builder.build()
        assert not report.problems
        # First pages show the new month in their menu; later pages have no menu.
        assert {"events/list/index.html", "events/month/2027-03/index.html",
                "venue/the-blue-lantern/index.html"} <= set(report.written)
        assert "events/list/page/2/index.html" not in report.written
        page = (tmp_path / "public/events/list/index.html").read_text()
        assert jump_links(page)[-1][1] == "2029-03"
        fresh = tmp_path / "full-1"
        build(site_options(content, fresh, tmp_path / "cache-1"))
        assert tree(tmp_path / "public") == tree(fresh)

        # A wider image under the same name: list pages show its new size.
        image = content / "media/jazz-night.png"
        data = bytearray(image.read_bytes())
        data[16:24] = struct.pack(">II", 800, 500)
        image.write_bytes(bytes(data))
        report = builder.build()
        assert "events/list/index.html" in report.written
        assert 'width="800" height="500"' in (tmp_path / "public/events/list/index.html").read_text()
        fresh = tmp_path / "full-2"
        build(site_options(content, fresh, tmp_path / "cache-2"))
        pages = {p: b for p, b in tree(tmp_path / "public").items() if p.suffix == ".html"}
        assert pages == {p: b for p, b in tree(fresh).items() if p.suffix == ".html"}
    finally:
        builder.close()


def test_jump_to_month_field_in_chromium(site: Path, site_tab) -> None:
    tab, problems = site_tab
    tab.goto((site / "events/category/music/index.html").as_uri())
    tab.click(".jump-month summary")
    field = tab.locator("#jump-month-field")
    assert field.is_visible()  # shown by jump-month.js (hidden without it)
    field.fill("2028-07")  # after the last month with a page
    tab.click(".jump-month-form button")
    assert tab.locator(".jump-month-error").inner_text() == (
        "Choose a month from 2026-11 to 2028-06.")
    field.fill("2027-03")
    tab.click(".jump-month-form button")
    tab.wait_for_url("**/events/month/2027-03/index.html")
    assert tab.locator("h1").inner_text() == "March 2027"
    assert problems == []
