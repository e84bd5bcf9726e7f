"""The rules of the calendar, independent of HTTP: validating request bodies against the
resource descriptions, defaults, slugs, ids, links between records (`linking.Linking`),
permissions, and turning each write into files plus one git commit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable, Iterator

from .bodycontext import BodyContext
from .catalog.catalog import Catalog
from .catalog.policy import may_read
from .linking import Linking, Write
from .model import dates, errors, recurrence, settings, slugs
from .model.clock import Clock
from .model.errors import ApiError
from .model.formats import digits
from .model.ids import MAX_ID
from .model.records import Record, to_file
from .model.resources import EVENTS, RESOURCES, Resource, yaml_fields
from .store import yamlfile
from .store.content import WritesBlocked
from .store.users import User, UserStore
from .store.writechecks import check_sizes, storage_advice
from .sync.idlease import LeaseUnavailable

log = logging.getLogger(__name__)
Precondition = Callable[[Record], None]


class Service(Linking):
    def __init__(self, catalog: Catalog, users: UserStore, clock: Clock) -> None:
        self.catalog = catalog
        self.users = users
        self.clock = clock
        # Called after each commit, the write lock still held (sync numbers it).
        self.committed: list[Callable[[], object]] = []
        # Called once a write let go of the write lock (sync waits for its push there,
        # so the writers waiting share pushes while others commit).
        self.settled: list[Callable[[], object]] = []

    # -- time --------------------------------------------------------------
    @property
    def site_zone_name(self) -> str:
        return settings.site_zone_name(self.catalog.settings)

    def site_now(self) -> dt.datetime:
        return settings.site_now(self.clock, self.catalog.settings)

    # -- permissions -------------------------------------------------------
    @staticmethod
    def require(user: User | None, capability: str) -> User:
        if user is None:
            raise errors.forbidden(False)
        if not user.can(capability):
            raise errors.forbidden(True)
        return user

    def may_edit(self, user: User, record: Record, verb: str = "edit") -> bool:
        if record.resource.is_term:
            return user.can(term_capability(record.resource))
        own = record.get("author", 0) == user.id
        published = record.status in ("publish", "future", "private")
        if not own and not user.can(f"{verb}_others"):
            return False
        return not published or user.can(f"{verb}_published")

    may_read = staticmethod(may_read)  # the read side's rule (policy.py), for write rules

    # -- writes --------------------------------------------------------------
    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """The tree's write lock (other threads and processes), then the catalog's;
        the rules are checked against the latest catalog version, not the one the
        request started with (ids and slugs taken meanwhile). The files are flushed
        together with other writers' once the lock is let go (group_synced), before
        the push and the answer."""
        # `_settle` runs after an error too: a commit made before it is still pushed.
        with self.catalog.tree.group_synced(self._settle), self.catalog.tree.locked(), \
                self.catalog.lock:
            self.catalog.pin_latest()
            yield

    def _settle(self) -> None:
        for hook in self.settled:
            hook()

    def create(self, collection: str, body: dict, user: User | None,
               reuse: bool = True) -> tuple[Record, bool]:
        """Create a record; returns it and whether it is new (False: duplicate reused).
        `reuse`: a venue or organizer like an existing one is that one (`tribe/events/v1`
        does so; `tec/v1` always creates)."""
        resource = RESOURCES[collection]
        missing = [n for n in resource.required_fields if body.get(n) is None]
        if missing:
            raise errors.missing(missing)
        values = self._validate(resource, body, None)
        self._check_write_permission(resource, user, None, "edit")
        with self._writing():
            write = Write("")
            if collection in ("venues", "organizers") and reuse:
                self._check_author(resource, user, values, "create")
                existing = self._reusable(resource, values, user, write)
                if existing is not None:  # answered as it is: nothing written
                    return existing, False
            record = self._new_record(resource, values, user, write)
            write.message = f'{collection}: create "{record.name}" (#{record.id})'
            self._commit(write, user)
        return record, True

    def update(self, record: Record, body: dict, user: User | None,
               precondition: Precondition | None = None) -> Record:
        resource = record.resource
        values = self._validate(resource, body, record)
        self._check_write_permission(resource, user, record, "edit")
        with self._writing():
            current = self._current(record, precondition)
            if current.data != record.data:
                values = self._validate(resource, body, current)
            write = Write(f'{resource.name}: update "{current.name}" (#{current.id})')
            updated = self._apply_update(current, values, user, write)
            if updated.name != current.name:
                write.message = (f'{resource.name}: update "{updated.name}" '
                                 f'(was "{current.name}") (#{current.id})')
            self._commit(write, user)
        return updated

    def preview(self, collection: str, body: dict, user: User | None,
                record: Record | None = None) -> tuple[Record, str, list[Record]]:
        """What `create` (record None) or `update` would write, without writing: the
        record, its file's text and the other records the write makes (an inline
        venue), so a form can be checked (`check`) before saving. Raises what the
        write would raise."""
        resource = RESOURCES[collection]
        missing = [n for n in resource.required_fields if body.get(n) is None]
        if record is None and missing:
            raise errors.missing(missing)
        values = self._validate(resource, body, record)
        self._check_write_permission(resource, user, record, "edit")
        with self._writing():
            write = Write("")
            if record is None:
                made = self._new_record(resource, values, user, write)
            else:
                current = self._current(record, None)
                if current.data != record.data:
                    values = self._validate(resource, body, current)
                made = self._apply_update(current, values, user, write)
        return made, write.texts[made.path] or "", [r for r in write.put if r.id != made.id]

    def delete(self, record: Record, user: User | None,
               precondition: Precondition | None = None, force: bool = False) -> Record:
        """Trash (events, venues, organizers) or remove (terms); returns the record as
        answered. `tribe/events/v1` has no permanent delete of the trashable types,
        whatever a `force` parameter says: its clients send force=true and read the
        record back in the trash. `tec/v1` removes for good with `force` (`force=True`
        here): the file goes and its id is retired, in one commit."""
        resource = record.resource
        self._check_write_permission(resource, user, record, "delete")
        with self._writing():
            current = self._current(record, precondition)
            write = Write("")
            if resource.trashable and not force:
                if current.status == "trash":
                    raise ApiError(410, f"{resource.singular}-is-in-trash",
                                   f"The {resource.singular} is already trashed")
                values = {"status": "trash"}
                result = self._apply_update(current, values, user, write, trashing=True)
                write.message = f'{resource.name}: trash "{current.name}" (#{current.id})'
            else:
                result = current
                self._stage_removal(current, write)
                write.message = f'{resource.name}: delete "{current.name}" (#{current.id})'
            self._commit(write, user)
        return result

    def change_together(self, changes: list[tuple[Record, dict]], user: User | None,
                        message: str, precondition: Precondition | None = None) -> list:
        """Updates of several records in one commit (a moderation decision); a body
        {"status": "trash"} trashes. `precondition` is checked on the first record."""
        checked = [(r, b, self._validate(r.resource, b, r)) for r, b in changes]  # 400 first
        for record, body in changes:
            self._check_write_permission(record.resource, user, record,
                                         "delete" if body.get("status") == "trash" else "edit")
        with self._writing():
            write, out = Write(message), []
            for i, (record, body, values) in enumerate(checked):
                current = self._current(record, precondition if i == 0 else None)
                if current.data != record.data:
                    values = self._validate(current.resource, body, current)
                current = next((r for r in write.put if r.id == current.id), current)
                out.append(self._apply_update(current, values, user, write,
                                              values.get("status") == "trash"))
            self._commit(write, user)
        return out

    def remove_for_good(self, records: list[Record],
                        describe: Callable[[list[Record]], str]) -> list[Record]:
        """Remove these records' files, retire their ids and unlink them from the events
        that point at them, all in one commit (its message is `describe(removed)`);
        returns the records removed: those unchanged since the caller chose them."""
        removed: list[Record] = []
        with self._writing():
            write = Write("")
            for record in records:
                try:
                    current = self._current(record, None)
                except ApiError:  # gone meanwhile
                    continue
                if current.data == record.data:  # else changed since chosen: keep it
                    self._stage_removal(current, write)
                    removed.append(current)
            if removed:
                write.message = describe(removed)
                self._commit(write, None)
        return removed

    # -- batch writes (importers) ---------------------------------------------------
    @contextlib.contextmanager
    def batch(self, user: User | None) -> Iterator[Write]:
        """One write of many records (an import): the caller stages records into the
        `Write` it is given, under the write lock, and sets its message; whatever was
        staged is committed as one commit by `user` when the block ends (nothing staged:
        no commit). Every rule of files, sizes and ids holds as in any other write."""
        with self._writing():
            write = Write("")
            yield write
            if write.texts or write.renames:
                self._commit(write, user)

    def allocate_id(self, write: Write, wished: int | None = None) -> int:
        """An id for a new record of `write`: `wished` when it is free (not with leased
        ids: a shared remote hands out blocks, another instance may own it)."""
        catalog = self.catalog
        if (wished is not None and catalog.leases is None and 0 < wished <= MAX_ID
                and catalog.get(wished) is None and wished not in write.allocated
                and wished not in catalog.tree.retired_ids()):
            write.allocated[wished] = None
            return wished
        try:
            record_id = catalog.next_id(write.allocated)
        except LeaseUnavailable as exc:
            raise ApiError(503, "calendar-ids-unavailable",
                           f"No new record can be made now: {exc}.") from exc
        write.allocated[record_id] = None
        return record_id

    def stage_new(self, record: Record, write: Write) -> None:
        write.texts[record.path] = yamlfile.dump(to_file(record))
        write.put.append(record)

    def stage_edit(self, old: Record, new: Record, write: Write) -> None:
        self._stage_edit(old, new, write)

    def _stage_removal(self, record: Record, write: Write) -> None:
        self._unlink_everywhere(record, write)
        write.texts[record.path] = None
        write.drop.append(record)
        write.retire.append(record.id)

    def _current(self, record: Record, precondition: Precondition | None) -> Record:
        """The record as it is now, with the write lock held.

        An editor (or another worker) may have changed the file since the request
        looked it up: that change is read first, and the write then applies only the
        fields it sends on top of it, so nothing is silently overwritten. A record that
        disappeared meanwhile is a 409; `precondition` (If-Match) is checked against
        the same current state, for clients that want a 412 instead.
        """
        stat = self.catalog.tree.stat(record.path)
        if stat is not None and self.catalog.stats.get(record.path) != stat:
            self.catalog.refresh([record.path])
        current = self.catalog.get(record.id)
        if current is None:
            raise ApiError(409, "rest_conflict", f"The {record.resource.singular} was removed "
                           "or renamed while this request was made; reload it and try again.")
        if precondition is not None:
            precondition(current)
        return current

    def _check_write_permission(self, resource: Resource, user: User | None,
                                record: Record | None, verb: str) -> None:
        if resource.is_term:
            self.require(user, "edit")
            self.require(user, term_capability(resource))
            return
        user = self.require(user, verb)
        if record is not None and not self.may_edit(user, record, verb):
            raise errors.forbidden(True)

    @staticmethod
    def _check_author(resource: Resource, user: User | None, values: dict, verb: str) -> None:
        """Writing a record as another user needs the right to edit others' records, as
        in WordPress: otherwise an author could hand records to (or plant them on)
        someone else."""
        author = values.get("author")
        if user is None or author is None or author == user.id or user.can("edit_others"):
            return
        raise ApiError(403, "rest_cannot_edit_others",
                       f"Sorry, you are not allowed to {verb} {resource.name} as this user.")

    # -- validation ----------------------------------------------------------
    def check_body(self, resource: Resource, body: dict, record: Record | None) -> None:
        """Raise the 400 a body deserves, before any permission check (as WordPress)."""
        self._validate(resource, body, record)

    def _validate(self, resource: Resource, body: dict, record: Record | None) -> dict:
        """Check every known field in the body; returns normalized values by field name.

        Several bad fields are reported together, as WordPress does.
        """
        bad: dict[str, str] = {}
        details: dict = {}
        values: dict = {}
        if resource.is_term and not resource.hierarchical and "parent" in body:
            raise ApiError(400, "rest_taxonomy_not_hierarchical",
                           "Can not set resource parent, taxonomy is not hierarchical.")
        ctx = BodyContext(self, resource, record)
        for f in resource.writable_fields:
            if f.name not in body:  # `date_utc` alone is read below
                continue
            try:
                values[f.name] = f.type.from_request(body[f.name], f.name, ctx)
            except errors.ApiError as exc:
                if exc.code != "rest_invalid_param":
                    raise
                bad.update(exc.data.get("params", {f.name: exc.message}))
                if isinstance(exc.data.get("details"), dict):
                    details.update(exc.data["details"])
        if "date_utc" in body and "date" not in body:
            try:
                utc = self._parse_date("date_utc", body["date_utc"], dates.zone("UTC"))
                values["date"] = _kept("date", dates.from_utc(
                    utc, dates.zone(self.site_zone_name)))
            except errors.ApiError as exc:
                bad.update(exc.data["params"])
        if bad:
            raise errors.invalid(bad, details)
        if resource is EVENTS:
            self._event_dates(values, body, record)
        return values

    def _parse_date(self, name: str, raw: object, zone: dt.tzinfo) -> dt.datetime:
        if not isinstance(raw, str):
            raise errors.wrong_type(name, "string")
        try:
            dates.refuse_epoch_text(raw, self.clock())
            return _kept(name, dates.parse_datetime(raw, zone, self.clock()))
        except dates.DateError as exc:
            raise errors.invalid_date(name, str(exc)) from None

    def _event_dates(self, values: dict, body: dict, record: Record | None) -> None:
        tzname = values.get("timezone") or (record.get("timezone") if record else None)
        zone = dates.zone(tzname or self.site_zone_name)
        bad, details = {}, {}
        for name in ("start_date", "end_date"):
            if name in values:
                try:
                    values[name] = self._parse_date(name, values[name], zone)
                except errors.ApiError as exc:
                    bad.update(exc.data["params"])
                    details.update(exc.data["details"] or {})
        if bad:
            raise errors.invalid(bad, details)
        start = values.get("start_date", record.get("start_date") if record else None)
        end = values.get("end_date", record.get("end_date") if record else None)
        all_day = values.get("all_day", record.get("all_day", False) if record else False)
        if all_day and start and end:
            start = start.replace(hour=0, minute=0, second=0)
            end = end.replace(hour=23, minute=59, second=59)
            values["start_date"], values["end_date"] = start, end
        if start and end and end < start:
            raise errors.invalid({"end_date": "The end date must not be before the start date."})
        block = values.get("recurrence", record.get("recurrence") if record else None)
        if block and start and ("recurrence" in values or "start_date" in values):
            try:
                recurrence.validate(block, start, zone)
            except recurrence.RecurrenceError as exc:
                raise errors.invalid({"recurrence": exc.message}) from None

    def _clean_slug(self, resource: Resource, value: str, record: Record | None) -> str:
        clean = slugs.sanitize_title(value)
        if not clean or not slugs.is_safe_slug(clean):
            raise errors.invalid({"slug": "Invalid parameter."})
        if record is not None and clean != record.slug:
            other = self.catalog.by_slug(resource.name, clean)
            if other is not None and other.id != record.id:
                if resource.is_term:
                    raise ApiError(400, "duplicate_term_slug",
                                   f'The slug "{clean}" is already in use by another term.')
                raise errors.invalid({"slug": "Invalid parameter."})
        return clean

    def _term_parent(self, raw: object, record: Record | None) -> str | None:
        if raw in (0, "0", "", None):
            return None
        if isinstance(raw, bool) or not (isinstance(raw, int) or
                                         isinstance(raw, str) and digits(raw)):
            raise errors.wrong_type("parent", "integer")
        parent = self.catalog.get(int(raw), "categories")
        if parent is None:
            raise errors.invalid({"parent": "Invalid parameter."})
        # A parent chain must not come back to the record itself.
        seen = parent
        while seen is not None and record is not None:
            if seen.id == record.id:
                raise errors.invalid({"parent": "Invalid parameter."})
            seen = self.catalog.by_slug("categories", seen.get("parent") or "")
        return parent.slug

    # -- building records --------------------------------------------------------
    def _new_record(self, resource: Resource, values: dict, user: User | None,
                    write: Write) -> Record:
        self._check_author(resource, user, values, "create")
        try:
            record_id = self.catalog.next_id(write.allocated)
        except LeaseUnavailable as exc:
            raise ApiError(503, "calendar-ids-unavailable",
                           f"No new record can be made now: {exc}. Records already "
                           "made can still be changed.") from exc
        write.allocated[record_id] = None
        data: dict = {"id": record_id}
        now = self.site_now()
        if not resource.is_term:
            data["status"] = self._status(values.get("status"), user, values.get("date"), now)
            data["author"] = values.get("author", user.id if user else 0)
            data["date"] = values.get("date") or now
            data["modified"] = now
            if data["status"] == "future" and data["date"] <= now:
                data["status"] = "publish"
        if resource.name == "venues":
            data["show_map"] = True
            data["show_map_link"] = True
        if resource is EVENTS:
            data["timezone"] = values.get("timezone") or self.site_zone_name
        for f in yaml_fields(resource):
            if f.name in values and f.name not in data or f.name in (
                    "show_map", "show_map_link") and f.name in values:
                data[f.name] = values[f.name]
        if resource.is_term and resource.hierarchical and values.get("parent"):
            data["parent"] = values["parent"]
        self._resolve_links(resource, data, values, user, write)
        if resource.is_term:
            self._check_term_name(resource, data, None)
        base = values.get("slug") or slugs.sanitize_title(data[resource.title_field]) or (
            f"{resource.singular}-{record_id}")
        data["slug"] = self._unique_slug(resource, base, None, write)
        data = {f.name: data[f.name] for f in resource.fields if data.get(f.name) is not None}
        folder = resource.name
        if resource is EVENTS:
            folder += f"/{data['start_date'].year}"
        record = Record(resource.name, data, f"{folder}/{data['slug']}.yaml")
        write.texts[record.path] = yamlfile.dump(to_file(record))
        write.put.append(record)
        return record

    def _apply_update(self, current: Record, values: dict, user: User | None, write: Write,
                      trashing: bool = False) -> Record:
        resource = current.resource
        self._check_author(resource, user, values, "update")
        data = dict(current.data)
        values = dict(values)
        new_slug = values.pop("slug", None)
        for name, value in values.items():
            f = resource.field(name)
            if f is None or f.link and not resource.is_term:
                continue
            data[name] = value
        self._resolve_links(resource, data, values, user, write)
        if resource is EVENTS and "timezone" in values and values["timezone"] is None:
            data["timezone"] = self.site_zone_name
        if not resource.is_term:
            now = self.site_now()
            if "status" in values and not trashing:
                data["status"] = self._status(values["status"], user, data.get("date"), now)
            data["modified"] = now
        else:
            self._check_term_name(resource, data, current)
        slug = current.slug
        if trashing:
            slug = self._unique_slug(resource, f"{current.slug}__trashed", current, write)
            self._unlink_everywhere(current, write)
        elif new_slug and new_slug != current.slug:
            slug = self._unique_slug(resource, new_slug, current, write)
        elif current.status == "trash" and data.get("status") != "trash":
            base = current.slug.removesuffix("__trashed")
            slug = self._unique_slug(resource, base, current, write)
        data["slug"] = slug
        data = {k: v for k, v in data.items() if v is not None}
        path = current.path
        if slug != current.slug:
            path = current.path.rsplit("/", 1)[0] + f"/{slug}.yaml"
            write.renames.append((current.path, path))
            if not trashing:
                self._rewrite_link(current, slug, write)
        record = Record(resource.name, data, path)
        self._stage_edit(current, record, write)
        return record

    def _stage_edit(self, old: Record, new: Record, write: Write) -> None:
        """Edit the file in place: only keys whose value changed are touched."""
        old_map, new_map = to_file(old), to_file(new)
        changes = {k: new_map.get(k) for k in {*old_map, *new_map}
                   if old_map.get(k) != new_map.get(k)}
        source = write.texts.get(old.path)
        if source is None:
            source = self.catalog.tree.read_text(old.path)
        order = [f.yaml_key for f in yaml_fields(new.resource)]
        text = yamlfile.edit(source, changes, order) if changes else source
        if new.path != old.path:
            write.texts.pop(old.path, None)
        write.texts[new.path] = text
        write.drop.append(old)
        write.put = [r for r in write.put if r.id != new.id] + [new]

    def _status(self, requested: str | None, user: User | None, date: dt.datetime | None,
                now: dt.datetime) -> str:
        publisher = user is None or user.can("publish")
        status = requested or ("publish" if publisher else "draft")
        if not publisher and status in ("publish", "future"):
            status = "pending"
        if status == "publish" and date and date > now + dt.timedelta(minutes=1):
            status = "future"
        if status == "future" and date and date <= now:
            status = "publish"
        return status

    def _check_term_name(self, resource: Resource, data: dict, current: Record | None) -> None:
        name = data["name"].strip().lower()
        for term in self.catalog.all(resource.name):
            if current is not None and term.id == current.id:
                continue
            if term.name.strip().lower() == name and term.get("parent") == data.get("parent"):
                raise ApiError(400, "term_exists",
                               "A term with the name provided already exists with this "
                               "parent." if resource.hierarchical else "A term with the name "
                               "provided already exists in this taxonomy.", term_id=term.id)

    def _unique_slug(self, resource: Resource, base: str, current: Record | None,
                     write: Write) -> str:
        pending = {r.slug for r in write.put if r.collection == resource.name
                   and (current is None or r.id != current.id)}

        def taken(slug: str) -> bool:
            other = self.catalog.by_slug(resource.name, slug)
            return slug in pending or (other is not None and (
                current is None or other.id != current.id))

        return slugs.unique_slug(base[:200], taken)

    # -- committing ------------------------------------------------------------
    def _commit(self, write: Write, user: User | None) -> None:
        check_sizes(write)
        changes: dict[str, str | None] = {old: None for old, _new in write.renames}
        changes.update(write.texts)
        author = user.git_author if user else "calendar-app <calendar-app@localhost>"
        try:
            self.catalog.tree.apply(changes, write.message, author, write.retire, write.files)
        except WritesBlocked as exc:
            raise ApiError(409, "rest_conflict", f"The calendar's repository takes no writes "
                           f"now: {exc}. Try again once it is over.") from exc
        except Exception as exc:
            # The client learns what to do; the log keeps git's stderr and the traceback.
            log.exception("could not save %r", write.message.splitlines()[0])
            raise ApiError(503, "calendar-storage-unavailable",
                           "The change could not be saved; nothing was changed: "
                           f"{storage_advice(exc)}.") from exc
        with self.catalog.changing():  # one new version for the whole write
            for record in write.drop:
                self.catalog.remove(record)
            for record in write.put:
                self.catalog.add(record)
        for hook in self.committed:
            hook()


def term_capability(resource: Resource) -> str:
    """Categories need the right to publish events; tags the right to manage terms."""
    return "publish" if resource.hierarchical else "manage_terms"


def _kept(name: str, local: dt.datetime) -> dt.datetime:
    """`local`, if the calendar can keep it (else files it could not read back)."""
    if not dates.representable(local):
        raise errors.invalid({name: f"{name} must be within {dates.KEPT_RANGE}."})
    return local
