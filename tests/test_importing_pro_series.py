"""A plugin site's recurring series (Events Calendar Pro lists each occurrence as an
event with the series' slug and an id of its own) imported as one series whose dates
are exactly the listed ones: a rule when one gives them exactly, else `rdate`; a date
with another title or length a `changes` entry; what one date cannot hold reported.
A stub on the loopback serves the plugin's captured answers plus Pro-style series."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_importing import _captured, commits, empty_tree, open_cal, plugin_stub, serve

from calendar_app.importing.apply import Options, apply_batch
from calendar_app.importing.batch import Batch, Incoming
from calendar_app.importing.tec import _add_events, read_tec
from calendar_app.importing.tec_series import series
from calendar_app.model import recurrence

WEEKLY = [dt.datetime(2027, 1, 5, 19) + dt.timedelta(weeks=n) for n in range(4)]
SECOND_TUESDAY = [dt.datetime(2027, 1, 12, 10), dt.datetime(2027, 2, 9, 10),
                  dt.datetime(2027, 3, 9, 10), dt.datetime(2027, 4, 13, 10)]
IRREGULAR = [dt.datetime(2027, 1, 5, 20), dt.datetime(2027, 1, 9, 20),
             dt.datetime(2027, 2, 20, 20)]


def _occurrences(template: dict, slug: str, starts: list[dt.datetime], first_id: int,
                 **per_date: dict) -> list[dict]:
    """Pro's listing of a series: one item per date, the series' slug and fields, an
    id and a dated URL of its own."""
    out = []
    for n, start in enumerate(starts):
        item = copy.deepcopy(template)
        end = start + dt.timedelta(hours=2)
        item.update(id=first_id + n, slug=slug, title=slug.replace("-", " ").title(),
                    url=f"http://127.0.0.1:8089/event/{slug}/{start:%Y-%m-%d}/",
                    start_date=f"{start:%Y-%m-%d %H:%M:%S}",
                    end_date=f"{end:%Y-%m-%d %H:%M:%S}")
        item.update(per_date.get(f"d{n}", {}))
        out.append(item)
    return out


@pytest.fixture(scope="module")
def pro_lists() -> dict[str, list[dict]]:
    lists = _captured()
    template = next(e for e in lists["events"] if e["id"] == 12)
    other_venue = next(v for v in lists["venues"] if v["id"] != template["venue"]["id"])
    # Listed in date order across series, as the plugin lists: interleaved.
    lists["events"] += sorted(
        _occurrences(template, "weekly-jam", WEEKLY, 10_000_001)
        + _occurrences(template, "second-tuesday-talk", SECOND_TUESDAY, 10_000_011)
        + _occurrences(template, "odd-dates", IRREGULAR, 10_000_021,
                       d1={"title": "Odd Dates (encore)", "end_date": "2027-01-09 23:30:00"},
                       d2={"venue": other_venue}),
        key=lambda e: e["start_date"])
    return lists


@pytest.fixture(scope="module")
def imported(pro_lists: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("pro")
    with serve(plugin_stub(pro_lists)) as url:
        batch = read_tec(url)
        again = read_tec(url)
    calendar = open_cal(empty_tree(tmp), tmp)
    first = apply_batch(calendar.service, batch, Options("pro"), None)
    count = commits(calendar.tree.root)
    second = apply_batch(calendar.service, again, Options("pro"), None)
    out = {"batch": batch, "first": first, "second": second, "calendar": calendar,
           "commits": (count, commits(calendar.tree.root))}
    yield out
    calendar.close()


def _starts(record) -> list[dt.datetime]:
    data = record.data
    return [o.start for o in recurrence.expand(data["recurrence"], data["start_date"],
                                               data["end_date"], dt.datetime(2030, 1, 1))
            if not o.cancelled]


@pytest.mark.parametrize("slug, starts, block", [
    ("weekly-jam", WEEKLY, {"rrule": "FREQ=WEEKLY;COUNT=4"}),
    ("second-tuesday-talk", SECOND_TUESDAY, {"rrule": "FREQ=MONTHLY;BYDAY=2TU;COUNT=4"}),
    ("odd-dates", IRREGULAR, {"rdate": IRREGULAR[1:], "changes": {
        "2027-01-09 20:00:00": {"end_date": dt.datetime(2027, 1, 9, 23, 30),
                                "title": "Odd Dates (encore)"}}}),
])
def test_each_series_is_one_event_with_exactly_the_listed_dates(
        imported: dict, slug: str, starts: list, block: dict) -> None:
    record = imported["calendar"].catalog.by_slug("events", slug)
    assert record.data["recurrence"] == block
    assert record.data["start_date"] == starts[0] and _starts(record) == starts
    assert record.data["source_id"] == f"series:{slug}"
    assert record.id == {"weekly-jam": 10_000_001, "second-tuesday-talk": 10_000_011,
                         "odd-dates": 10_000_021}[slug]  # the first date's id, free here
    assert not [r for r in imported["calendar"].catalog.all("events")
                if r.slug.startswith(f"{slug}-")]  # no copies


def test_what_one_date_cannot_hold_is_reported(imported: dict) -> None:
    messages = [p.message for p in imported["first"].problems]
    assert messages == [("odd-dates on 2027-02-20 20:00:00: another venue than the series' "
                        "first date; one date cannot have its own venue here, the "
                        "series' is kept")]


def test_single_events_stay_single_and_a_second_run_changes_nothing(
        imported: dict, pro_lists: dict) -> None:
    catalog = imported["calendar"].catalog
    singles = {str(e["id"]) for e in _captured()["events"]}
    assert singles <= {r.data["source_id"] for r in catalog.all("events")}
    assert len(catalog.all("events")) == len(singles) + 3
    second = imported["second"]
    assert not second.committed and not second.created and not second.changed
    assert imported["commits"][0] == imported["commits"][1]


_DAY = st.datetimes(min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2029, 12, 31)
                    ).map(lambda d: d.replace(second=0, microsecond=0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_DAY, min_size=2, max_size=12, unique=True) | st.builds(
    lambda start, step, n: [start + step * k for k in range(n)], _DAY,
    st.sampled_from([dt.timedelta(days=1), dt.timedelta(days=3), dt.timedelta(weeks=2)]),
    st.integers(2, 10)), st.integers(0, 300))
def test_any_listed_dates_come_back_exactly(starts: list[dt.datetime], minutes: int) -> None:
    items = [Incoming("events", str(n), {"title": "T", "start_date": s,
                                         "end_date": s + dt.timedelta(minutes=minutes)})
             for n, s in enumerate(starts)]
    batch = Batch("stub")
    made = series(batch, "t", items[::-1])
    block = recurrence.normalize(made.fields["recurrence"])
    first = min(starts)
    got = [o.start for o in recurrence.expand(block, first, first + dt.timedelta(
        minutes=minutes), dt.datetime(2031, 1, 1))]
    assert got == sorted(starts) and batch.problems == []


_VALUE = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=8),
                   st.sampled_from(["2027-01-05 19:00:00", "2027-01-12 19:00:00",
                                    "0000-00-00 00:00:00", "2027-02-30 10:00:00"]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "id": st.one_of(st.integers(1, 40), st.text(max_size=3)),
    "slug": st.one_of(st.sampled_from(["a", "b", ""]), st.none(), st.integers()),
    "title": _VALUE, "start_date": _VALUE, "end_date": _VALUE, "venue": st.one_of(
        st.none(), st.fixed_dictionaries({"id": st.integers(1, 3)})),
    "cost": _VALUE}), max_size=12))
def test_hostile_listings_lose_no_event(items: list[dict]) -> None:
    """Whatever the items, nothing raises, and every item with an id is a record of
    its own or a date of a series."""
    batch = Batch("stub")
    _add_events(batch, items)
    events = [r for r in batch.records if r.collection == "events"]
    dates = sum(1 + len(r.fields["recurrence"].get("rdate", []))
                if "rdate" in r.fields.get("recurrence", {}) else
                int(r.fields["recurrence"]["rrule"].rsplit("=", 1)[1])
                if "recurrence" in r.fields else 1 for r in events)
    with_id = [i for i in items if isinstance(i["id"], int)]
    same_start = len(with_id) - len({(i["slug"], i["start_date"]) if isinstance(
        i["slug"], str) and i["slug"] else ("id", n) for n, i in enumerate(with_id)})
    assert dates >= len(with_id) - same_start
    assert len(batch.problems) >= len(items) - len(with_id)
