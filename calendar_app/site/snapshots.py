"""JSON snapshots of the interface's read side, byte for byte the live responses.

Layout: the request's path plus `.json` (a static host serves `<path>.json` for
`<path>` when told to, see docs/static-site.md); no folder per record, as 20,000 of
them at 10,000 events cost more to make than the files in them:

    wp-json/tribe/events/v1/<collection>.json                  default list page
    wp-json/tribe/events/v1/<collection>/<id>.json             single record
    wp-json/tribe/events/v1/<collection>/by-slug/<slug>.json   (events, venues, organizers)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from ..app import DEFAULT_BASE_PATH
from ..records import Record
from ..represent import dumps
from ..resources import RESOURCES
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


class ListSnapshotError(RuntimeError):
    pass


class ListSnapshots:
    """Default list pages, asked of the Flask app itself: the code that answers them
    live, over the same content tree, site URL and "now"."""

    def __init__(self, content: Path, cache_dir: Path, site_url: str,
                 now: dt.datetime | None) -> None:
        self.config = {"CONTENT_DIR": str(content), "CACHE_DIR": str(cache_dir),
                       "USERS_FILE": str(cache_dir / "no-users.yaml"),
                       "SITE_URL": site_url, "NOW": now,
                       # No watcher or background indexer for a few requests.
                       "TESTING": True, "WATCH": False, "INDEX_IN_BACKGROUND": False}
        self._app = None

    def available(self) -> bool:
        try:
            from .. import lists  # noqa: F401  (written separately; may not exist yet)
        except ImportError:
            return False
        return True

    def client(self):
        if self._app is None:
            from ..app import create_app

            self._app = create_app(self.config)
        return self._app.test_client()

    def refresh(self, relpaths: list[str]) -> None:
        """Files changed on disk since the app read them (--watch): it has no watcher."""
        if self._app is None or not relpaths:
            return
        # Only the catalog: default list pages never search, and writing the text index
        # here rebuilt all of it (4 s at 10,000 events) when none had been made yet.
        self._app.extensions["calendar"].catalog.refresh(relpaths)

    def outputs(self, catalog_digest: str, now_key: str) -> Iterator[Output]:
        if not self.available():
            return
        for collection in RESOURCES:
            path = f"{paths.REST_DIR}{collection}.json"
            url = f"{DEFAULT_BASE_PATH}/{collection}"
            yield Output(path, (), f"list {catalog_digest} {now_key}",
                         lambda url=url: self._get(url), kind="json-list")

    def _get(self, url: str) -> bytes:
        try:
            response = self.client().get(url)
        except Exception as exc:  # any failure of the app: report it, keep building
            raise ListSnapshotError(f"list snapshot {url} not written: {exc!r}") from exc
        if response.status_code != 200:
            raise ListSnapshotError(f"list snapshot {url} not written: the app answered "
                                    f"{response.status_code} {response.get_data()[:200]!r}")
        return response.get_data()

    def close(self) -> None:
        if self._app is not None:
            close = getattr(self._app.extensions["calendar"], "close", None)
            if close is not None:
                close()
            self._app = None
