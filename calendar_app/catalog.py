"""The catalog: every valid record of the content tree, in memory, with lookups by id,
slug and link. Files that fail to parse or validate are kept aside as problems (path,
line, reason) and left out; the rest keeps being served.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from . import yamlfile
from .content import ContentTree
from .records import Record, RecordError, from_file, line_of
from .resources import EVENTS, RESOURCES

log = logging.getLogger(__name__)

# Event fields that point at other records: field name -> collection.
EVENT_LINKS = {f.name: f.link for f in EVENTS.fields if f.link}


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else (
            f"{self.path}: {self.message}")


class Catalog:
    def __init__(self, tree: ContentTree) -> None:
        self.tree = tree
        self.lock = threading.RLock()
        self.records: dict[int, Record] = {}
        self.slugs: dict[str, dict[str, int]] = {name: {} for name in RESOURCES}
        self.paths: dict[str, int] = {}
        self.problems: dict[str, Problem] = {}
        # (collection, slug) -> ids of records linking to it (events, child categories)
        self.backlinks: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.version = 0  # bumped on every change; part of every ETag
        self.settings: dict = tree.settings()

    # -- loading -------------------------------------------------------------
    def load(self) -> None:
        with self.lock:
            for stat in self.tree.scan():
                self._load_file(stat.path)
            self.version += 1

    def refresh(self, relpaths: Iterable[str]) -> bool:
        """Re-read these files (changed, added or removed); True if anything changed."""
        changed = False
        with self.lock:
            for relpath in relpaths:
                if relpath == "calendar.yaml":
                    self.settings = self.tree.settings()
                    changed = True
                    continue
                if self.tree.collection_of(relpath) is None:
                    continue
                self._forget_path(relpath)
                if self.tree.exists(relpath):
                    self._load_file(relpath)
                changed = True
            if changed:
                self.version += 1
        return changed

    def _load_file(self, relpath: str) -> None:
        collection = self.tree.collection_of(relpath)
        if collection is None:
            return
        self.problems.pop(relpath, None)
        try:
            data = self.tree.read_bytes(relpath)
        except OSError as exc:
            self._problem(relpath, 0, f"cannot read: {exc.strerror}")
            return
        try:
            raw = yamlfile.load(data)
            record = from_file(collection, raw, relpath)
        except yamlfile.YamlError as exc:
            self._problem(relpath, exc.line, exc.message)
            return
        except RecordError as exc:
            text = data.decode("utf-8", "replace")
            self._problem(relpath, line_of(text, exc.key), exc.message)
            return
        clash = self.records.get(record.id)
        if clash is not None and clash.path != relpath:
            self._problem(relpath, line_of(data.decode(), "id"),
                          f"id {record.id} is already used by {clash.path}")
            return
        other = self.slugs[collection].get(record.slug)
        if other is not None and other != record.id:
            self._problem(relpath, line_of(data.decode(), "slug"),
                          f"slug {record.slug!r} is already used by {self.records[other].path}")
            return
        self.add(record)

    def _problem(self, relpath: str, line: int, message: str) -> None:
        problem = Problem(relpath, line, message)
        self.problems[relpath] = problem
        log.warning("skipping %s", problem)

    def _forget_path(self, relpath: str) -> None:
        self.problems.pop(relpath, None)
        record_id = self.paths.get(relpath)
        if record_id is not None:
            self.remove(self.records[record_id])

    # -- changing --------------------------------------------------------------
    def add(self, record: Record) -> None:
        with self.lock:
            old = self.records.get(record.id)
            if old is not None:
                self.remove(old)
            self.records[record.id] = record
            self.slugs[record.collection][record.slug] = record.id
            self.paths[record.path] = record.id
            for key in self._link_keys(record):
                self.backlinks[key].add(record.id)
            self.version += 1

    def remove(self, record: Record) -> None:
        with self.lock:
            self.records.pop(record.id, None)
            if self.slugs[record.collection].get(record.slug) == record.id:
                del self.slugs[record.collection][record.slug]
            if self.paths.get(record.path) == record.id:
                del self.paths[record.path]
            for key in self._link_keys(record):
                ids = self.backlinks.get(key)
                if ids is not None:
                    ids.discard(record.id)
                    if not ids:
                        del self.backlinks[key]
            self.version += 1

    @staticmethod
    def _link_keys(record: Record) -> Iterator[tuple[str, str]]:
        if record.collection == "events":
            for name, collection in EVENT_LINKS.items():
                value = record.data.get(name)
                for slug in value if isinstance(value, list) else [value] if value else []:
                    yield collection, slug
        elif record.collection == "categories" and record.data.get("parent"):
            yield "categories", record.data["parent"]

    # -- lookups ---------------------------------------------------------------
    def get(self, record_id: int, collection: str | None = None) -> Record | None:
        record = self.records.get(record_id)
        if record is None or (collection and record.collection != collection):
            return None
        return record

    def by_slug(self, collection: str, slug: str) -> Record | None:
        record_id = self.slugs[collection].get(slug)
        return None if record_id is None else self.records.get(record_id)

    def all(self, collection: str) -> list[Record]:
        return [self.records[i] for i in self.slugs[collection].values()]

    def linked(self, collection: str, slug: str) -> list[Record]:
        """Records (events, or child categories) that link to this record."""
        return [self.records[i] for i in sorted(self.backlinks.get((collection, slug), ()))
                if i in self.records]

    def resolve(self, collection: str, slugs: object) -> list[Record]:
        """The existing records named by a slug or list of slugs, in the given order."""
        items = slugs if isinstance(slugs, list) else [slugs] if slugs else []
        found = (self.by_slug(collection, s) for s in items)
        return [r for r in found if r is not None]

    def term_count(self, record: Record) -> int:
        """Published events carrying a term (the plugin's `count`)."""
        return sum(1 for r in self.linked(record.collection, record.slug)
                   if r.collection == "events" and r.status == "publish")

    def next_id(self) -> int:
        used = max(self.records, default=0)
        retired = max(self.tree.retired_ids(), default=0)
        # Problem files may still hold ids: never hand those out either.
        return max(used, retired, self._problem_ids()) + 1

    def _problem_ids(self) -> int:
        best = 0
        for relpath in self.problems:
            try:
                raw = yamlfile.load(self.tree.read_bytes(relpath))
            except (OSError, yamlfile.YamlError):
                continue
            if isinstance(raw.get("id"), int):
                best = max(best, raw["id"])
        return best
