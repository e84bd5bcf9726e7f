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

(`category-id/<id>.json` and `venue-id/<id>.json`: the same files by id.)
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog import lists, query
from ..catalog.occurrences import split_id
from ..catalog.reader import Reader
from ..catalog.represent import Representer, dumps
from ..model.errors import ApiError
from ..model.records import Record
from ..model.resources import RESOURCES
from ..store.locations import DEFAULT_BASE_PATH
from . import paths
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

    def outputs(self, reader: Reader, catalog_digest: str, now_key: str) -> Iterator[Output]:
        shape = f"list {catalog_digest} {now_key}"
        for collection in RESOURCES:
            path = f"{paths.REST_DIR}{collection}.json"
            yield Output(path, (), shape, lambda c=collection: self._get(reader, c),
                         kind="json-list")
        yield from self._embed_outputs(reader)

    def _embed_outputs(self, reader: Reader) -> Iterator[Output]:
        """The component's queries (module note): one for all upcoming events, one per
        category and per published venue, each also under its record's id. Each is
        signed by what it holds (the events chosen, how many there are, the records
        they show), not by the whole catalog: a write renders again only the lists it
        changes (231 of them at 10,000 events cost 2.7 s of CPU to render)."""
        base = f"{paths.REST_DIR}events/embed/"
        wanted = {"per_page": str(EMBED_COUNT)}
        catalog = reader.catalog
        ctx = self._context(reader)
        chosen = [("", "", None)] + [
            ("category", "categories", r) for r in catalog.all("categories")] + [
            ("venue", "venue", r) for r in catalog.all("venues") if r.status == PUBLISHED]
        for folder, parameter, record in chosen:
            query = {**wanted, parameter: str(record.id)} if record is not None else wanted
            try:
                found = lists.select_ids(ctx, RESOURCES["events"], query)
            except ApiError:
                found = []  # the render says why (ListSnapshotError)
            shown = found[:EMBED_COUNT]
            deps, counts = _shown_records(catalog, shown)
            shape = f"embed {len(found)} {shown} {counts}"
            path = f"{base}{folder}/{record.slug}.json" if record is not None else \
                f"{base}all.json"
            yield Output(path, deps, shape, lambda q=query: self._get(reader, "events", q),
                         kind="json-list")
            if record is not None:
                yield Output(f"{base}{folder}-id/{record.id}.json", deps, shape,
                             lambda q=query: self._get(reader, "events", q),
                             kind="json-list", same_as=path)

    def _context(self, reader: Reader) -> query.Context:
        catalog = reader.catalog
        # As `api.public_url` and `api.rest_root` with SITE_URL = the site's address.
        public = str(catalog.settings.get("url") or self.site_url)
        rep = Representer(catalog, public, self.site_url.rstrip("/") + DEFAULT_BASE_PATH)
        return query.Context(reader, catalog.current, rep, None)

    def _get(self, reader: Reader, collection: str, raw: dict | None = None) -> bytes:
        ctx = self._context(reader)
        try:
            answer = lists.answer(ctx, RESOURCES[collection], raw or {})
        except ApiError as exc:
            raise ListSnapshotError(f"list snapshot {collection} not written: "
                                    f"{exc.status} {exc.message}") from exc
        return answer.text.encode("utf-8")


def _shown_records(catalog, shown: list[int]) -> tuple[tuple[int, ...], list[int]]:
    """The records a list of events shows: each event (a date of a series: the series),
    the venue, organizers and terms it embeds, the categories' parents; and the terms'
    event counts, which their embedded form carries."""
    found: dict[int, None] = {}
    counts: list[int] = []
    for record_id in shown:
        parts = split_id(record_id)
        record = catalog.records.get(parts[0] if parts else record_id)
        if record is None:
            continue
        found[record.id] = None
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
