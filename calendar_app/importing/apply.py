"""Applying a `Batch` to the tree: one commit by one user, or none.

Every record of a batch is matched with what an earlier import of the same source made
(the `source` and `source_id` keys of its file), so a re-import updates and never
duplicates. Records are staged through `Service.batch` (the write lock, ids, the
one commit); the readers fetched and parsed their input before, outside the lock.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from ..linking import Write
from ..model import dates, slugs
from ..model.fieldbase import RecordError
from ..model.records import Record, from_file, to_file
from ..model.resources import EVENTS, RESOURCES, Resource, yaml_fields
from ..service import Service
from ..store import yamlfile
from ..store.users import User
from .batch import Batch, Incoming, Problem, Ref

RULES = ("overwrite", "keep-edits", "new-only")
GONE = ("cancel", "report")
# Targets of links first, so the records linking to them find their slugs.
ORDER = ("categories", "tags", "venues", "organizers", "events")
MERGES_FILE = "sources/merges.yaml"
# Ours, never the source's: a re-import does not touch them.
LOCAL_FIELDS = frozenset({"id", "slug", "author", "date", "modified", "source", "source_id"})
CANCELLED = "canceled"  # the value of `event_status` (schema.org's spelling) when it exists
TITLE_LIKENESS = 0.9  # difflib ratio above which two titles name the same event


@dataclass
class Options:
    source: str  # kept in each record's `source`: a source's name, or the URL/file imported
    rule: str = "overwrite"  # RULES
    status: str | None = None  # status of new records (None: the source's, else publish)
    gone: str = "cancel"  # GONE: what happens to a record the source no longer has
    complete: bool = True  # the batch is all the source has: the missing ones are gone
    defaults: dict = field(default_factory=dict)  # venue / organizer / categories of new events
    merge_duplicates: bool = False
    dry_run: bool = False
    # Per record ("events/<source id>"), a fingerprint of each field as last imported
    # (sources' state): keep-edits keeps a field whose value no longer matches it.
    fingerprints: dict = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # images written for it (media.py)


@dataclass
class Outcome:
    source: str
    created: list[Record] = field(default_factory=list)
    changed: list[Record] = field(default_factory=list)
    cancelled: list[Record] = field(default_factory=list)
    unchanged: int = 0
    gone: list[Record] = field(default_factory=list)  # reported, not cancelled
    duplicates: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    committed: bool = False
    fingerprints: dict = field(default_factory=dict)

    def summary(self) -> str:
        """"3 new, 2 changed, 1 cancelled from city-arts"."""
        parts = [f"{len(self.created)} new", f"{len(self.changed)} changed"]
        if self.cancelled:
            parts.append(f"{len(self.cancelled)} cancelled")
        return f"{', '.join(parts)} from {self.source}"

    def message(self, origin: str) -> str:
        lines = [self.summary(), "", f"Imported from {origin}."]
        for verb, records in (("new", self.created), ("changed", self.changed),
                              ("cancelled", self.cancelled)):
            lines += [f'{verb}: {r.collection} "{r.name}" (#{r.id})' for r in records[:200]]
            if len(records) > 200:
                lines.append(f"{verb}: ... and {len(records) - 200} more")
        lines += [f"merged: {m}" for m in self.merged[:200]]
        return "\n".join(lines)

    @property
    def changes(self) -> bool:
        return bool(self.created or self.changed or self.cancelled or self.merged)


class _Skip(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# One encoder for every fingerprint: json.dumps with options makes a new one each call.
_FINGERPRINT_JSON = json.JSONEncoder(default=str, sort_keys=True, ensure_ascii=False)


def fingerprint(value: object) -> str:
    text = _FINGERPRINT_JSON.encode(value)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def apply_batch(service: Service, batch: Batch, options: Options,
                user: User | None) -> Outcome:
    """Apply `batch` as one commit by `user` (none when nothing changes, or dry run).

    The plan (ids, slugs, files) is made before the write lock is taken, against the
    latest catalog version; under the lock it is committed as made when no write came
    in between, else made again there. Ids leased from a shared remote are only
    handed out under the lock, so with leases the plan is made there."""
    if options.rule not in RULES:
        raise ValueError(f"unknown update rule {options.rule!r}: one of {', '.join(RULES)}")
    catalog = service.catalog
    planned: tuple[int, Write, Outcome] | None = None
    if catalog.leases is None:
        version = catalog.version
        outcome = Outcome(options.source, problems=list(batch.problems))
        plan = Write("")
        _Applier(service, options, plan, outcome, user).run(batch)
        planned = (version, plan, outcome)
    with service.batch(user) as write:
        if planned is not None and catalog.version == planned[0]:
            outcome = planned[2]
            vars(write).update(vars(planned[1]))
        else:
            outcome = Outcome(options.source, problems=list(batch.problems))
            _Applier(service, options, write, outcome, user).run(batch)
        if options.dry_run or not outcome.changes:
            write.texts.clear()
            write.renames.clear()
        else:
            write.message = outcome.message(batch.origin)
            write.files += options.files
        outcome.committed = bool(write.texts)
    return outcome


class _Applier:
    def __init__(self, service: Service, options: Options, write: Write, outcome: Outcome,
                 user: User | None) -> None:
        self.service, self.options, self.write, self.outcome = service, options, write, outcome
        self.catalog = service.catalog
        self.author = user.id if user is not None else 0
        self.now = service.site_now()
        self.index: dict[tuple[str, str], Record] = {}  # (collection, source id) -> record
        for name in ("events", "venues", "organizers"):
            for record in self.catalog.all(name):
                if record.get("source") == options.source and record.get("source_id"):
                    self.index[(name, str(record.data["source_id"]))] = record
        self.resolved: dict[tuple[str, str], str] = {}  # (collection, source id) -> slug
        self.pending: dict[str, set[str]] = defaultdict(set)  # slugs taken by this write
        self.seen: set[tuple[str, str]] = set()
        self.merges = _read_merges(service)
        self.merges_changed = False
        outcome.fingerprints = dict(options.fingerprints)  # what this run imported
        self._buckets: dict[tuple, list[Record]] | None = None

    def run(self, batch: Batch) -> None:
        grouped: dict[str, list[Incoming]] = defaultdict(list)
        for incoming in batch.records:
            if incoming.collection not in ORDER:
                self._problem(incoming, f"unknown kind of record {incoming.collection!r}")
                continue
            grouped[incoming.collection].append(incoming)
        self._reserve(grouped)
        for name in ORDER:
            for incoming in grouped[name]:
                try:
                    self._one(incoming)
                except _Skip as skip:
                    self.outcome.problems.append(skip.problem)
        if self.options.complete:
            self._gone()
        if self.merges_changed:
            self.write.texts[MERGES_FILE] = _merges_text(self.merges)

    def _reserve(self, grouped: dict[str, list[Incoming]]) -> None:
        """The ids new events, venues and organizers wish, when free, before terms take
        any: a site's terms and posts count ids apart, ours share them, and a post's id
        is in its address."""
        self.reserved: set[int] = set()
        for name in ("events", "venues", "organizers"):
            for incoming in grouped[name]:
                wished = _wished_id(incoming)
                key = (name, incoming.source_id)
                if wished is None or key in self.index or wished in self.write.allocated:
                    continue
                got = self.service.allocate_id(self.write, wished)
                if got == wished:
                    self.reserved.add(wished)
                else:
                    del self.write.allocated[got]

    def _problem(self, incoming: Incoming, message: str) -> None:
        self.outcome.problems.append(Problem(
            f"{incoming.collection} {incoming.source_id}: {message}", incoming.line,
            incoming.source_id))

    # -- one record ----------------------------------------------------------------
    def _one(self, incoming: Incoming) -> None:
        resource = RESOURCES[incoming.collection]
        key = (incoming.collection, incoming.source_id)
        if key in self.seen:
            self._problem(incoming, "appears twice in the source; the first one is kept")
            return
        self.seen.add(key)
        values = self._values(resource, incoming)
        if resource.is_term:
            self.resolved[key] = self._term(resource, incoming, values).slug
            return
        existing = self.index.get(key)
        merged_into = self.merges.get(self.options.source, {}).get(incoming.source_id)
        if existing is None and merged_into is not None:
            target = self.catalog.get(int(merged_into), incoming.collection)
            if target is not None:
                self.resolved[key] = target.slug
                return
        if existing is None and set(values) == {resource.title_field}:
            named = self._named(resource, str(values[resource.title_field]))
            if named is not None:  # a mere mention by name (CSV, iCalendar LOCATION)
                self.resolved[key] = named.slug
                return
        if existing is None and resource is EVENTS and self._duplicate(incoming, values):
            return
        if existing is None:
            record = self._create(resource, incoming, values)
        else:
            record = self._update(existing, incoming, values)
        self.resolved[key] = record.slug

    def _named(self, resource: Resource, name: str) -> Record | None:
        wanted = name.strip().casefold()
        for record in self.catalog.all(resource.name) + [
                r for r in self.write.put if r.collection == resource.name]:
            if record.name.strip().casefold() == wanted and record.status != "trash":
                return record
        return None

    def _values(self, resource: Resource, incoming: Incoming) -> dict:
        """The incoming fields by field name, links turned into our slugs."""
        by_key = {f.yaml_key: f for f in yaml_fields(resource)}
        values: dict = {}
        for key, value in incoming.fields.items():
            f = resource.field(key) or by_key.get(key)
            if f is None or f.name in ("source", "source_id"):
                self._problem(incoming, f"field {key!r} is not kept")
                continue
            if value is None:
                continue
            values[f.name] = self._link(incoming, f.name, value) if f.link else value
        if resource is EVENTS:
            for name, default in self.options.defaults.items():
                if name == "categories":
                    values[name] = list(dict.fromkeys([*values.get(name, []), *default]))
                elif not values.get(name):
                    values[name] = default
        return {k: v for k, v in values.items() if v not in (None, [], "")}

    def _link(self, incoming: Incoming, name: str, value: object) -> object:
        single = not isinstance(value, list)
        slugs_out = []
        for item in [value] if single else value:
            slug = None
            if isinstance(item, Ref):
                key = (item.collection, item.source_id)
                slug = self.resolved.get(key) or (
                    self.index[key].slug if key in self.index else None)
                if slug is None:
                    self._problem(incoming, f"{name}: {item.collection} {item.source_id} "
                                  "is not in the source; the link is left out")
            elif isinstance(item, str) and item:
                slug = item
            if slug and slug not in slugs_out:
                slugs_out.append(slug)
        if single:
            return slugs_out[0] if slugs_out else None
        return slugs_out

    def _check(self, record: Record, incoming: Incoming) -> Record:
        """The record as the loader would read its file back; else the problem."""
        try:
            for name in ("start_date", "end_date", "date"):
                value = record.data.get(name)
                if isinstance(value, dt.datetime) and not dates.representable(value):
                    raise RecordError(f"{name} must be within {dates.KEPT_RANGE}", name)
            return from_file(record.collection, to_file(record), record.path)
        except (RecordError, TypeError, ValueError, AttributeError) as exc:
            raise _Skip(Problem(f"{incoming.collection} {incoming.source_id}: {exc}",
                                incoming.line, incoming.source_id)) from None

    def _stage(self, incoming: Incoming, stage: Callable[[], None]) -> None:
        """Stage a checked record; a value no file can hold (an object a reader left in
        a nested block) is that record's problem, not the whole import's."""
        try:
            stage()
        except (yaml.YAMLError, TypeError, ValueError) as exc:
            raise _Skip(Problem(f"{incoming.collection} {incoming.source_id}: a value "
                                f"cannot be written ({exc})", incoming.line,
                                incoming.source_id)) from None

    # -- new records ---------------------------------------------------------------
    def _slug(self, resource: Resource, wished: object, data: dict) -> str:
        base = slugs.sanitize_title(wished) if isinstance(wished, str) else ""
        base = base or slugs.sanitize_title(str(data.get(resource.title_field) or "")) or (
            f"{resource.singular}-{data['id']}")
        taken_here = self.pending[resource.name]
        folder = _folder(resource, data)

        def taken(slug: str) -> bool:
            return (slug in taken_here or self.catalog.by_slug(resource.name, slug) is not None
                    or self.catalog.tree.exists(f"{folder}/{slug}.yaml"))

        slug = slugs.unique_slug(base[:200], taken)
        taken_here.add(slug)
        return slug

    def _create(self, resource: Resource, incoming: Incoming, values: dict) -> Record:
        wished = _wished_id(incoming)
        data = {k: v for k, v in values.items() if k not in LOCAL_FIELDS}
        if wished in self.reserved and not resource.is_term:
            self.reserved.discard(wished)  # allocated for this record by _reserve
            data["id"] = wished
        else:
            data["id"] = self.service.allocate_id(
                self.write, None if wished in self.reserved else wished)
        if not resource.is_term:
            data["status"] = self.options.status or values.get("status") or "publish"
            author = values.get("author")
            known = isinstance(author, int) and self.service.users.get(author) is not None
            data["author"] = author if known else self.author  # the same user here
            data["date"] = values.get("date") or self.now
            data["modified"] = values.get("modified") or self.now
            data["source"] = self.options.source
            data["source_id"] = incoming.source_id
        data["slug"] = self._slug(resource, values.get("slug"), data)
        data = {f.name: data[f.name] for f in resource.fields if data.get(f.name) is not None}
        record = Record(resource.name, data, f"{_folder(resource, data)}/{data['slug']}.yaml")
        record = self._check(record, incoming)
        self._stage(incoming, lambda: self.service.stage_new(record, self.write))
        self.outcome.created.append(record)
        if not resource.is_term:
            self._remember(resource.name, incoming.source_id, values)
        if resource is EVENTS and self._buckets is not None:
            self._buckets[_bucket_key(record.data)].append(record)
        return record

    def _term(self, resource: Resource, incoming: Incoming, values: dict) -> Record:
        """Terms are shared words: one of the same slug or name is reused."""
        name = str(values.get("name") or "").strip()
        wished = values.get("slug")
        for term in self.catalog.all(resource.name) + [
                r for r in self.write.put if r.collection == resource.name]:
            if term.slug == wished or term.name.strip().casefold() == name.casefold():
                return term
        return self._create(resource, incoming, values)

    # -- records imported before ---------------------------------------------------
    def _update(self, current: Record, incoming: Incoming, values: dict) -> Record:
        if self.options.rule == "new-only":
            self.outcome.unchanged += 1
            return current
        key = f"{current.collection}/{incoming.source_id}"
        last = self.options.fingerprints.get(key)
        prints = self._remember(current.collection, incoming.source_id, values)
        if prints == last and all(fingerprint(current.data.get(name)) == last[name]
                                  for name in last):
            self.outcome.unchanged += 1  # neither side changed since the last import
            return current
        data = dict(current.data)
        names = {*values, *(last or {})} - LOCAL_FIELDS
        if self.options.status:
            names.discard("status")
        for name in names:
            if self.options.rule == "keep-edits" and _edited(data.get(name), name, last):
                continue
            if values.get(name) is None:
                data.pop(name, None)
            else:
                data[name] = values[name]
        # Compared as the file would read back: defaults and spellings settle there.
        record = self._check(Record(current.collection, data, current.path), incoming)
        if record.data == current.data:
            self.outcome.unchanged += 1
            return current
        record.data["modified"] = values.get("modified") or self.now
        self._stage(incoming, lambda: self.service.stage_edit(current, record, self.write))
        self.outcome.changed.append(record)
        return record

    def _remember(self, collection: str, source_id: str, values: dict) -> dict:
        prints = {name: fingerprint(value) for name, value in values.items()
                  if name not in LOCAL_FIELDS}
        self.outcome.fingerprints[f"{collection}/{source_id}"] = prints
        return prints

    def _gone(self) -> None:
        """Events of this source it no longer has: cancelled when the calendar has an
        `event_status` field and the source says so, else reported; never deleted."""
        can_cancel = self.options.gone == "cancel" and EVENTS.field("event_status") is not None
        for (collection, source_id), record in sorted(self.index.items()):
            if collection != "events" or (collection, source_id) in self.seen:
                continue
            if record.status == "trash" or record.get("event_status") == CANCELLED:
                continue
            if not can_cancel:
                self.outcome.gone.append(record)
                continue
            new = Record(record.collection, {**record.data, "event_status": CANCELLED,
                                             "modified": self.now}, record.path)
            self.service.stage_edit(record, new, self.write)
            self.outcome.cancelled.append(new)

    # -- duplicates across sources -------------------------------------------------
    def _duplicate(self, incoming: Incoming, values: dict) -> bool:
        """Is the event already here from elsewhere? Reported; with --merge-duplicates
        it is not made, and the decision is kept in MERGES_FILE for the next runs."""
        if self._buckets is None:
            self._buckets = defaultdict(list)
            for record in self.catalog.all("events"):
                if record.get("source") != self.options.source:
                    self._buckets[_bucket_key(record.data)].append(record)
        title = _plain(str(values.get("title") or ""))
        for other in self._buckets.get(_bucket_key(values), []):
            if other.get("source") == self.options.source:
                continue
            theirs = _plain(other.name)
            if theirs == title or difflib.SequenceMatcher(
                    None, theirs, title).ratio() >= TITLE_LIKENESS:
                break
        else:
            return False
        where = f'"{other.name}" (#{other.id}, from {other.get("source") or "this calendar"})'
        if not self.options.merge_duplicates:
            self.outcome.duplicates.append(f"event {incoming.source_id} "
                                           f'"{values.get("title")}" looks like {where}')
            return False
        self.merges.setdefault(self.options.source, {})[incoming.source_id] = other.id
        self.merges_changed = True
        self.resolved[("events", incoming.source_id)] = other.slug
        self.outcome.merged.append(f"event {incoming.source_id} into {where}")
        return True


def _wished_id(incoming: Incoming) -> int | None:
    wished = incoming.fields.get("id")
    if isinstance(wished, str) and wished.isascii() and wished.isdigit():
        return int(wished)
    return wished if isinstance(wished, int) and not isinstance(wished, bool) else None


def _edited(value: object, name: str, last: dict | None) -> bool:
    """Was the field changed here since the last import? Without a record of that
    import, a value is taken as edited (keeping it is what keep-edits promises)."""
    if last is None:
        return value is not None
    if name not in last:
        return value is not None
    return fingerprint(value) != last[name]


def _folder(resource: Resource, data: dict) -> str:
    if resource is EVENTS and isinstance(data.get("start_date"), dt.datetime):
        return f"events/{data['start_date'].year}"
    return resource.name


def _bucket_key(data: dict) -> tuple:
    return str(data.get("start_date")), str(data.get("venue") or "")


def _plain(title: str) -> str:
    return re.sub(r"[\W_]+", " ", title.casefold()).strip()


def _read_merges(service: Service) -> dict:
    tree = service.catalog.tree
    if not tree.exists(MERGES_FILE):
        return {}
    try:
        loaded = yamlfile.load(tree.read_bytes(MERGES_FILE))
    except yamlfile.YamlError as exc:  # a broken decisions file must not merge wrongly
        raise ValueError(f"{MERGES_FILE}: {exc}") from exc
    return {str(k): {str(s): int(i) for s, i in (v or {}).items()}
            for k, v in (loaded or {}).items()}


def _merges_text(merges: dict) -> str:
    head = ("# Decisions of `--merge-duplicates`: per source, the source's event id and\n"
            "# the id of the event here it is the same as. The importer skips these.\n")
    return head + yamlfile.dump({k: dict(sorted(v.items())) for k, v in sorted(merges.items())})
