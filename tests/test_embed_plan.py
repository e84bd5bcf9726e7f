"""The `<calendar-events>` snapshots' planning (site/snapshots.py `plan_embeds`): every
list it plans selects exactly what `lists.select_ids` selects for the list's query, and
the (category, venue) lists are there exactly where filtering the venue's list on the
category would miss events."""

from __future__ import annotations

import datetime as dt
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calendar_app.catalog import lists
from calendar_app.model.errors import ApiError
from calendar_app.model.resources import RESOURCES
from calendar_app.site import Builder, Options
from calendar_app.site.snapshots import EMBED_COUNT, ListSnapshots, plan_embeds

NOW = dt.datetime(2027, 1, 10, 12, 0, tzinfo=dt.UTC)
EVENTS = RESOURCES["events"]


def generate(root: Path, seed: int, crowded: int) -> Path:
    """A calendar of random shape: categories in chains (and a loop), published and
    draft venues, one venue with `crowded` extra events (all in cat-7), drafts, past
    events, weekly series."""
    rng = random.Random(seed)
    content = root / f"content-{seed}-{crowded}"
    for part in ("events", "venues", "categories"):
        (content / part).mkdir(parents=True)
    (content / "calendar.yaml").write_text("title: Plan\ntimezone: UTC\nmax_per_page: 50\n")
    next_id = iter(range(1, 10_000))
    categories = [f"cat-{i}" for i in range(8)] + ["42"]  # a slug that is a number
    for i, slug in enumerate(categories):
        parent = {3: "cat-0", 4: "cat-3", 5: "cat-6", 6: "cat-5"}.get(i)  # 5 and 6: a loop
        (content / "categories" / f"{slug}.yaml").write_text(
            f"id: {next(next_id)}\nname: C{i}\nslug: '{slug}'\n"
            + (f"parent: {parent}\n" if parent else ""))
    venues = [f"venue-{i}" for i in range(5)]
    for i, slug in enumerate(venues):
        (content / "venues" / f"{slug}.yaml").write_text(
            f"id: {next(next_id)}\nname: V{i}\nslug: {slug}\n"
            f"status: {'draft' if i == 4 else 'publish'}\n")
    count = rng.randint(20, 60) + crowded
    for n in range(count):
        # The crowded venue's events first: its list is then all cat-7.
        hours = n + 1 if n < crowded else rng.randint(-24 * 60, 24 * 200)
        start = NOW.replace(tzinfo=None) + dt.timedelta(hours=hours)
        venue = "venue-0" if n < crowded else rng.choice([*venues, None])
        cats = rng.sample(categories, rng.randint(0, 3))
        if n < crowded and "cat-7" not in cats:  # a pair whose first 50 the venue's hold
            cats.append("cat-7")
        text = (f"id: {next(next_id)}\ntitle: Event {n}\nslug: event-{n}\n"
                f"status: {rng.choice(['publish'] * 5 + ['draft'])}\n"
                f"start_date: {start:%Y-%m-%d %H:%M}\n"
                f"end_date: {start + dt.timedelta(hours=rng.randint(1, 30)):%Y-%m-%d %H:%M}\n")
        text += f"venue: {venue}\n" if venue else ""
        text += "categories: [" + ", ".join(f"'{c}'" for c in cats) + "]\n" if cats else ""
        if rng.random() < 0.1:
            text += f"recurrence:\n  every: week\n  count: {rng.randint(2, 6)}\n"
        (content / "events" / f"event-{n}.yaml").write_text(text)
    return content


def check_plan(content: Path, cache: Path) -> list:
    builder = Builder(Options(content=content, out=cache / "out", now=NOW,
                              cache_dir=cache, progress=False))
    try:
        ctx = ListSnapshots("https://plan.example.org/")._context(builder.reader)
        planned = plan_embeds(ctx)
        for embed in planned:
            try:
                expected = lists.select_ids(ctx, EVENTS, embed.query)
            except ApiError:
                expected = []
            assert embed.found == expected, embed.paths
        assert len({p for e in planned for p in e.paths}) == sum(len(e.paths) for e in planned)
        pairs = {(e.query["categories"], e.query["venue"]): e for e in planned
                 if "categories" in e.query and "venue" in e.query}
        view = ctx.view
        for venue in view.all("venues"):
            if venue.status != "publish":
                assert not any(e.query.get("venue") == str(venue.id) for e in planned)
                continue
            at_venue = lists.select_ids(ctx, EVENTS, {"venue": str(venue.id)})
            for category in view.all("categories"):
                both = lists.select_ids(ctx, EVENTS, {"venue": str(venue.id),
                                                      "categories": str(category.id)})
                # What the component shows from the venue's list, filtered.
                filtered = [i for i in at_venue[:EMBED_COUNT] if i in set(both)]
                missing = filtered != both[:EMBED_COUNT]
                assert missing == ((str(category.id), str(venue.id)) in pairs)
        return planned
    finally:
        builder.close()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), crowded=st.sampled_from([0, 45, 70]))
def test_plan_selects_what_each_query_selects(seed: int, crowded: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:  # one per example
        check_plan(generate(Path(tmp), seed, crowded), Path(tmp) / "cache")


def test_a_crowded_venue_gets_lists_by_category(tmp_path: Path) -> None:
    planned = check_plan(generate(tmp_path, 7, 80), tmp_path / "cache")
    pairs = [e for e in planned if "pair/" in e.paths[0]]
    assert pairs  # 80 upcoming events at venue-0, categories spread over them
    for embed in pairs:
        category, venue = embed.query["categories"], embed.query["venue"]
        assert embed.paths[0].endswith(f"events/embed/pair/{category}/{venue}.json")
        # By id and slug in any mix; the category whose slug is a number by id only.
        assert len(embed.paths) in (2, 4)
        assert all("/42/" not in p for p in embed.paths) or len(embed.paths) == 2


@pytest.mark.parametrize("crowded", [0])
def test_no_pairs_where_every_venue_list_is_complete(tmp_path: Path, crowded: int) -> None:
    planned = check_plan(generate(tmp_path, 3, crowded), tmp_path / "cache")
    assert not [e for e in planned if "pair/" in e.paths[0]]


def test_an_embed_lists_paths_share_one_answer(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The same list by slug and by id: one answer to the query, the same bytes; a new
    plan (a later build, "now" moved) answers again."""
    content = generate(tmp_path, 7, 45)
    builder = Builder(Options(content=content, out=tmp_path / "out", now=NOW,
                              cache_dir=tmp_path / "cache", progress=False))
    try:
        snapshots = ListSnapshots("https://plan.example.org/")
        asked: list[dict] = []
        answer = ListSnapshots._get

        def counted(self, reader, collection, raw=None):
            asked.append(raw)
            return answer(self, reader, collection, raw)

        monkeypatch.setattr(ListSnapshots, "_get", counted)
        outputs = [o for o in snapshots.outputs(builder.reader, "d", "n")
                   if "/embed/" in o.path]
        linked = [o for o in outputs if o.same_as]
        assert linked  # venues and categories by slug and by id
        rendered = {o.path: o.render() for o in outputs}
        assert len(asked) == len(outputs) - len(linked)
        for output in linked:
            assert rendered[output.path] == rendered[output.same_as]
        list(snapshots.outputs(builder.reader, "d", "later"))
        linked[0].render()
        assert len(asked) == len(outputs) - len(linked) + 1
    finally:
        builder.close()
