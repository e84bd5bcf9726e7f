"""Links between records as a write stages them: the `Write` one commit is made of; link
values of request bodies turned into plans (slugs, inline bodies), inline venues, organizers
and terms created or reused by name (the plugin's duplicate detection), and the records that
link to one rewritten when it is renamed or removed. `Service` inherits `Linking`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .catalog.catalog import EVENT_LINKS, Catalog
from .model import errors
from .model.errors import ApiError
from .model.formats import digits
from .model.records import Record
from .model.resources import EVENTS, RESOURCES, Resource
from .store.users import User


@dataclass
class Write:
    """Files to change in one commit; records to put into (or take out of) the catalog."""

    message: str
    texts: dict[str, str | None] = field(default_factory=dict)  # path -> text, None = remove
    renames: list[tuple[str, str]] = field(default_factory=list)
    put: list[Record] = field(default_factory=list)
    drop: list[Record] = field(default_factory=list)
    retire: list[int] = field(default_factory=list)
    # Ids handed out in this write, in order (a dict: an import asks "given?" 10,000 times).
    allocated: dict[int, None] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # written already (images): commit them too


class Linking:
    """The linking half of `Service`: it uses the service's catalog, `may_read`,
    `_validate`, `_new_record` and `_stage_edit`."""

    catalog: Catalog

    # -- links -----------------------------------------------------------------
    def _link_plan(self, name: str, collection: str, raw: object, single: bool) -> list:
        """Normalize a link value into a list of slugs (str) and inline bodies (dict)."""
        target = RESOURCES[collection]
        if raw in (None, 0, "0", "") or raw == []:
            return []
        items: list = raw if isinstance(raw, list) else [raw]
        if isinstance(raw, str):
            items = [s.strip() for s in raw.split(",") if s.strip()]
        if single and len(items) > 1:
            raise ApiError(400, "could-not-create-venue",
                           "The venue could not be created from the provided data")
        plan = []
        for item in items:
            if isinstance(item, dict) and set(item) == {"id"}:
                item = item["id"]
            if isinstance(item, dict):
                title = item.get(target.title_field)
                if not isinstance(title, str) or not title.strip():
                    raise errors.invalid({name: "Invalid parameter."})
                try:
                    plan.append(self._validate(target, item, None))
                except ApiError:
                    raise errors.invalid({name: "Invalid parameter."}) from None
                continue
            linked = None
            if isinstance(item, int) and not isinstance(item, bool) or (
                    isinstance(item, str) and digits(item.strip())):
                linked = self.catalog.get(int(item), target.name)
            if linked is None:
                raise errors.invalid({name: "Invalid parameter."})
            plan.append(linked.slug)
        return plan

    def _term_plan(self, target: Resource, raw: object) -> list:
        """Terms by id (unknown ids skipped), slug or name (unknown names created)."""
        if raw is None or raw == "" or raw == []:
            return []
        if isinstance(raw, str):
            items: list = [s.strip() for s in raw.split(",") if s.strip()]
        elif isinstance(raw, list):
            items = raw
        elif isinstance(raw, int) and not isinstance(raw, bool):
            items = [raw]
        else:
            raise errors.invalid({target.name: "Invalid parameter."})
        plan: list = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int):
                raise errors.invalid({target.name: "Invalid parameter."})
            text = str(item).strip()
            if digits(text):
                term = self.catalog.get(int(text), target.name)
                if term is not None and term.slug not in plan:
                    plan.append(term.slug)
                continue
            term = self.catalog.by_slug(target.name, text) or next(
                (t for t in self.catalog.all(target.name) if t.name.lower() == text.lower()),
                None)
            if term is not None:
                if term.slug not in plan:
                    plan.append(term.slug)
            elif text:
                plan.append({"name": text})
        return plan

    def _realize_links(self, plan: list, collection: str, user: User | None,
                       write: Write) -> list[str]:
        """Create the inline records of a link plan; returns the slugs to write."""
        out: list[str] = []
        resource = RESOURCES[collection]
        for item in plan:
            if isinstance(item, str):
                slug = item
            else:
                existing = self._pending_or_existing(resource, item, user, write)
                if existing is not None:
                    slug = existing.slug
                else:
                    values = dict(item)
                    if user is not None and not user.can("publish"):
                        values["status"] = "draft"
                    slug = self._new_record(resource, values, user, write).slug
            if slug not in out:
                out.append(slug)
        return out

    def _pending_or_existing(self, resource: Resource, values: dict, user: User | None,
                             write: Write) -> Record | None:
        if not resource.is_term:
            return self._reusable(resource, values, user, write)
        name = str(values.get(resource.title_field, "")).lower()
        return next((r for r in write.put if r.collection == resource.name
                     and r.name.lower() == name), None)

    def _reusable(self, resource: Resource, values: dict, user: User | None,
                  write: Write) -> Record | None:
        """The venue or organizer a create may answer with instead of making one: the
        plugin's duplicate detection (same name), narrowed to records the caller may
        read whose every other field sent equals the record's own. Reuse never changes
        the record, so it can neither edit nor reveal one; anything else is created."""
        name = str(values.get(resource.title_field, "")).strip().lower()
        made_here = [r for r in write.put if r.collection == resource.name]
        for record in [*made_here, *self.catalog.all(resource.name)]:
            if (record.status != "trash" and record.name.strip().lower() == name
                    and self.may_read(user, record) and _same_fields(record, values)):
                return record
        return None

    def _resolve_links(self, resource: Resource, data: dict, values: dict,
                       user: User | None, write: Write) -> None:
        if resource is not EVENTS:
            return
        for name, collection in EVENT_LINKS.items():
            if name not in values:
                continue
            slugs_ = self._realize_links(values[name], collection, user, write)
            if name == "venue":
                data[name] = slugs_[0] if slugs_ else None
            else:
                data[name] = slugs_

    # -- rewriting the records that link to one --------------------------------
    def _linking_records(self, target: Record) -> list[tuple[Record, str]]:
        """(record, field name) pairs that point at `target` by slug."""
        out = []
        for record in self.catalog.linked(target.collection, target.slug):
            if record.collection == "events":
                for name, collection in EVENT_LINKS.items():
                    value = record.data.get(name)
                    values = value if isinstance(value, list) else [value]
                    if collection == target.collection and target.slug in values:
                        out.append((record, name))
            else:
                out.append((record, "parent"))
        return out

    def _rewrite_link(self, target: Record, new_slug: str | None, write: Write) -> None:
        removed = {r.id for r in write.drop} - {r.id for r in write.put}
        for record, name in self._linking_records(target):
            if record.id in removed:  # removed in this same write: nothing to rewrite
                continue
            current = next((r for r in write.put if r.id == record.id), record)
            value = current.data.get(name)
            if isinstance(value, list):
                replaced = [new_slug if v == target.slug else v for v in value]
                new_value: object = [v for v in replaced if v]
            else:
                new_value = new_slug
            data = dict(current.data)
            data[name] = new_value
            data = {k: v for k, v in data.items() if v is not None}
            self._stage_edit(current, Record(current.collection, data, current.path), write)

    def _unlink_everywhere(self, target: Record, write: Write) -> None:
        self._rewrite_link(target, None, write)


def _same_fields(record: Record, values: dict) -> bool:
    """Whether every value sent, but the name, is the record's own (empty ones alike)."""
    resource = record.resource
    for name, value in values.items():
        f = resource.field(name)
        if name == resource.title_field or f is None:
            continue
        have = record.get(name, f.default)
        if value != have and not (value in (None, "", []) and have in (None, "", [])):
            return False
    return True
