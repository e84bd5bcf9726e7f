"""JSON snapshots of the interface's read side, byte for byte the live responses.

Layout: the request's path plus `.json` (a static host serves `<path>.json` for
`<path>` when told to, see docs/static-site.md); no folder per record, as 20,000 of
them at 10,000 events cost more to make than the files in them:

    wp-json/tribe/events/v1/<collection>.json                  default list page
    wp-json/tribe/events/v1/<collection>/<id>.json             single record
    wp-json/tribe/events/v1/<collection>/by-slug/<slug>.json   (events, venues, organizers)

and for the `<calendar-events>` component (embed.js), which filters by a category or a
venue and shows up to 50 events, the answers of the queries it sends to a live
interface, so that on a static host its filters cover every upcoming event and not
only the default list's first page:

    wp-json/tribe/events/v1/events/embed/all.json              events?per_page=50
    wp-json/tribe/events/v1/events/embed/category/<slug>.json  ...&categories=<id>
    wp-json/tribe/events/v1/events/embed/venue/<slug>.json     ...&venue=<id>

(`category-id/<id>.json` and `venue-id/<id>.json`: the same files by id), and where a
venue has more upcoming events than its list holds, for a category and that venue
(`plan_embeds`; each of the two by id or slug, the same file):

    wp-json/tribe/events/v1/events/embed/pair/<category>/<venue>.json  ...&categories=<id>&venue=<id>
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from ..catalog import lists, query
from ..catalog.occurrences import split_id
from ..catalog.reader import Reader
from ..catalog.represent import dumps
from ..catalog.version import CatalogVersion
from ..model.errors import ApiError
from ..model.records import Record
from ..model.resources import RESOURCES
from ..store.locations import DEFAULT_BASE_PATH
from . import paths
from .memo import BuildRepresenter
from .model import PUBLISHED, SiteModel
from .pages import event_deps, media_stamp
from .plan import Output, ids


def single_paths(record: Record) -> list[str]:
    base = f"{paths.REST_DIR}{record.collection}/"
    out = [f"{base}{record.id}.json"]
    if RESOURCES[record.collection].by_slug:
        out.append(f"{base}by-slug/{record.slug}.json")
    return out


def single_outputs(model: SiteModel) -> Iterator[Output]:
    catalog = model.catalog
    for event in model.events:
        record = event.record
        # Embedded terms carry their event counts: a count is part of the response.
        counts = [catalog.term_count(t) for t in (*event.categories, *event.tags)]
        shape = f"json {counts} {media_stamp(model, record.get('image'))}"
        deps = event_deps(model, event)
        by_id, *by_slug = single_paths(record)
        yield Output(by_id, deps, shape, _body(model, record), kind="json")
        for path in by_slug:  # the same bytes: a hard link to the file by id
            yield Output(path, deps, shape, _body(model, record), kind="json",
                         same_as=by_id)
    for record in (*model.venues, *model.organizers):
        for path in single_paths(record):
            yield Output(path, (record.id,), f"json {media_stamp(model, record.get('image'))}",
                         _body(model, record), kind="json")
    for record in (*model.categories, *model.tags):
        parent = catalog.by_slug("categories", record.get("parent") or "") if (
            record.collection == "categories") else None
        chain = model.parents(record) if record.collection == "categories" else []
        shape = f"json {catalog.term_count(record)}"
        for path in single_paths(record):
            yield Output(path, (record.id, *ids((parent, *chain))), shape,
                         _body(model, record), kind="json")


def _body(model: SiteModel, record: Record):
    # Exactly what api._single sends for an anonymous GET: the single representation
    # through `dumps`.
    assert record.status == PUBLISHED or record.resource.is_term
    record_id = record.id

    def render() -> bytes:
        # By id: an incremental build may have swapped the record (model.refresh_event).
        found = model.snapshots.get(record_id)
        if found is None:
            current = model.catalog.records[record_id]
            found = model.snapshots[record_id] = dumps(
                model.snapshot_body(current)).encode("utf-8")
        return found
    return render


EMBED_COUNT = 50  # the most events a <calendar-events> element shows


class ListSnapshotError(RuntimeError):
    pass


class ListSnapshots:
    """Default list pages, answered by the code that answers them live
    (`lists.answer`), from the builder's reader, for an anonymous reader of the
    interface at the site's address."""

    def __init__(self, site_url: str) -> None:
        self.site_url = site_url
        self._last: tuple[object, tuple, bytes] | None = None  # _embed_list's
        self._rep: tuple[object, BuildRepresenter] | None = None  # _context's

    def outputs(self, reader: Reader, catalog_digest: str, now_key: str) -> Iterator[Output]:
        shape = f"list {catalog_digest} {now_key}"
        self._last = None  # a new plan: "now" may have moved since
        for collection in RESOURCES:
            path = f"{paths.REST_DIR}{collection}.json"
            yield Output(path, (), shape, lambda c=collection: self._get(reader, c),
                         kind="json-list")
        yield from self._embed_outputs(reader)

    def _embed_outputs(self, reader: Reader) -> Iterator[Output]:
        """The component's queries (module note), planned by `plan_embeds`. Each is
        signed by what it holds (the events chosen, how many there are, the records
        they show), not by the whole catalog: a write renders again only the lists it
        changes (231 of them at 10,000 events cost 2.7 s of CPU to render)."""
        ctx = self._context(reader)
        # Per catalog version: a build that follows no write finds every event's part.
        memo: dict = ctx.view.derive("embed-shown-records", dict)  # type: ignore[assignment]
        for embed in plan_embeds(ctx):
            shown = embed.found[:EMBED_COUNT]
            deps, counts = _shown_records(ctx.view, shown, memo)
            shape = f"embed {len(embed.found)} {shown} {counts}"
            first, *links = embed.paths
            for path in embed.paths:
                yield Output(path, deps, shape,
                             lambda q=embed.query: self._embed_list(reader, q),
                             kind="json-list", same_as=first if path in links else "")

    def _embed_list(self, reader: Reader, raw: dict) -> bytes:
        """The answer to the component's query `raw`. Its paths (by slug, by id) are
        rendered one after the other (the same records, so neighbours in the
        builder's order): the second takes the first's bytes, where it answered the
        whole query again before its hard link (457 of 632 lists at 10,000 events,
        8-20 ms each). One answer kept, for the catalog version it was made from."""
        view, key = reader.catalog.current, tuple(raw.items())
        last = self._last
        if last is not None and last[0] is view and last[1] == key:
            return last[2]
        data = self._get(reader, "events", raw)
        self._last = (view, key, data)
        return data

    def _context(self, reader: Reader) -> query.Context:
        catalog = reader.catalog
        view = catalog.current
        # One representer per catalog version, with the parts events share (venues,
        # organizers, terms) made once: a fresh one per list represented them again
        # for every event of 630 lists at 10,000 events. A new version, a new one.
        if self._rep is None or self._rep[0] is not view:
            # As `api.public_url` and `api.rest_root` with SITE_URL = the site's address.
            public = str(catalog.settings.get("url") or self.site_url)
            self._rep = (view, BuildRepresenter(
                catalog, public, self.site_url.rstrip("/") + DEFAULT_BASE_PATH))
        return query.Context(reader, view, self._rep[1], None)

    def _get(self, reader: Reader, collection: str, raw: dict | None = None) -> bytes:
        ctx = self._context(reader)
        try:
            answer = lists.answer(ctx, RESOURCES[collection], raw or {})
        except ApiError as exc:
            raise ListSnapshotError(f"list snapshot {collection} not written: "
                                    f"{exc.status} {exc.message}") from exc
        return answer.text.encode("utf-8")


class EmbedList(NamedTuple):
    paths: tuple[str, ...]  # the file, then hard links to it (the same list by id)
    query: dict[str, str]  # the live query it answers
    found: list[int]  # what `lists.select_ids` selects for that query


def plan_embeds(ctx: query.Context) -> list[EmbedList]:
    """The component's lists and what each selects, exactly as `lists.select_ids` would
    for its query, from one selection: the upcoming events, split by the events'
    categories (children included) and venues the way `selection` filters them. One
    query per category and venue cost 0.6 s at 10,000 events on every build, this
    split a few ms.

    A (category, venue) pair gets a list of its own only where the venue's list, which
    the component filters on the category, misses some of the pair's first 50 events
    (a venue with more than 50 upcoming events): elsewhere that filter is complete, and
    all pairs would be thousands of files."""
    events = RESOURCES["events"]
    wanted = {"per_page": str(EMBED_COUNT)}
    try:
        base = lists.select_ids(ctx, events, wanted)
    except ApiError:
        base = []  # the render says why (ListSnapshotError)
    view = ctx.view
    table = ctx.reader.table(view)
    ids = np.asarray(base, np.int64)
    rows = table.positions(ids)

    def members(collection: str, records: list[Record]) -> np.ndarray:
        linked: set[int] = set()
        for record in records:
            linked.update(view.backlinks.get((collection, record.slug), ()))
        return table.mask_of(linked)[rows]

    base_path = f"{paths.REST_DIR}events/embed/"
    out = [EmbedList((f"{base_path}all.json",), wanted, base)]
    children: dict[str | None, list[Record]] = {}
    for record in view.all("categories"):
        parent = record.data.get("parent")  # as selection._with_children compares it
        children.setdefault(parent if isinstance(parent, str) else None, []).append(record)
    by_category = []
    for record in view.all("categories"):
        mask = members("categories", _with_children(record, children))
        by_category.append((record, mask))
        out.append(EmbedList((f"{base_path}category/{record.slug}.json",
                              f"{base_path}category-id/{record.id}.json"),
                             {**wanted, "categories": str(record.id)}, ids[mask].tolist()))
    for venue in view.all("venues"):
        if venue.status != PUBLISHED:
            continue
        mask = members("venues", [venue])
        out.append(EmbedList((f"{base_path}venue/{venue.slug}.json",
                              f"{base_path}venue-id/{venue.id}.json"),
                             {**wanted, "venue": str(venue.id)}, ids[mask].tolist()))
        if np.count_nonzero(mask) > EMBED_COUNT:
            out += _pairs(base_path, wanted, ids, mask, venue, by_category)
    return out


def _with_children(category: Record, children: dict[str | None, list[Record]]) -> list[Record]:
    out, todo, seen = [], [category], set()
    while todo:
        record = todo.pop()
        if record.id not in seen:
            seen.add(record.id)
            out.append(record)
            todo += children.get(record.slug, [])
    return out


def _pairs(base_path: str, wanted: dict, ids: np.ndarray, at_venue: np.ndarray,
           venue: Record, by_category: list) -> Iterator[EmbedList]:
    """The lists of `categories=<id>&venue=<id>` the venue's own list cannot stand in
    for; by slug and id in any mix (`pair/<category>/<venue>.json`: a number is an id,
    so a slug that is a number, which the component would take for an id, is left
    out)."""
    first = np.flatnonzero(at_venue)[:EMBED_COUNT]
    for category, in_category in by_category:
        both = at_venue & in_category
        total = int(np.count_nonzero(both))
        seen = int(np.count_nonzero(in_category[first]))
        if total == seen or seen >= EMBED_COUNT:
            continue
        names = [(c, v) for c in _names(category) for v in _names(venue)]
        yield EmbedList(tuple(f"{base_path}pair/{c}/{v}.json" for c, v in names),
                        {**wanted, "categories": str(category.id), "venue": str(venue.id)},
                        ids[both].tolist())


def _names(record: Record) -> list[str]:
    numeric = record.slug.isascii() and record.slug.isdigit()
    return [str(record.id)] + ([] if numeric else [record.slug])


def _shown_records(catalog: CatalogVersion, shown: list[int], memo: dict
                   ) -> tuple[tuple[int, ...], list[int]]:
    """The records a list of events shows: each event (a date of a series: the series),
    the venue, organizers and terms it embeds, the categories' parents; and the terms'
    event counts, which their embedded form carries. `memo` keeps each event's part
    (an event is in three or four lists: all, its categories', its venue's)."""
    found: dict[int, None] = {}
    counts: list[int] = []
    for record_id in shown:
        part = memo.get(record_id)
        if part is None:
            part = memo[record_id] = _event_records(catalog, record_id)
        found.update(dict.fromkeys(part[0]))
        counts += part[1]
    return tuple(found), counts


def _event_records(catalog: CatalogVersion, record_id: int) -> tuple[tuple[int, ...], list[int]]:
    parts = split_id(record_id)
    record = catalog.records.get(parts[0] if parts else record_id)
    if record is None:
        return (), []
    found: dict[int, None] = {record.id: None}
    counts: list[int] = []
    for collection, key in (("venues", "venue"), ("organizers", "organizer"),
                            ("categories", "categories"), ("tags", "tags")):
        for linked in catalog.resolve(collection, record.get(key)):
            found[linked.id] = None
            if linked.resource.is_term:
                counts.append(catalog.term_count(linked))
            parent = linked.get("parent") if collection == "categories" else None
            seen = {linked.id}
            while parent:  # term URLs name their parents
                up = catalog.by_slug("categories", str(parent))
                if up is None or up.id in seen:
                    break
                seen.add(up.id)
                found[up.id] = None
                parent = up.get("parent")
    return tuple(found), counts
