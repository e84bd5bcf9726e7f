"""Repairing collisions with a base branch: renumber our new records, rename our slugs
that the base took, and rewrite our files that link to a renamed slug.

Every change is a minimal round-trip edit (`yamlfile.edit`), so the repair reads as a
few changed lines in the pull request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..model import slugs
from ..model.linktypes import Links
from ..model.resources import RESOURCES, yaml_fields
from ..store import yamlfile
from ..sync.idlease import Lease
from .check import ParseCache, TreeResult
from .collisions import Against, against


@dataclass
class Repair:
    renumbered: list[tuple[str, int, int]] = field(default_factory=list)  # path, old, new
    renamed: list[tuple[str, str, str]] = field(default_factory=list)  # collection, old, new
    moved: list[tuple[str, str]] = field(default_factory=list)  # old path, new path
    relinked: list[str] = field(default_factory=list)  # paths whose links were rewritten


def next_free_id(*trees: TreeResult, leases: list[Lease] = ()) -> int:
    """Above every id of these trees, every retired id and every server's leased block."""
    used = {0, *(lease.last for lease in leases)}
    for tree in trees:
        used |= tree.ids() | tree.snapshot.retired_ids()
    return max(used) + 1


def fix(content_dir: Path, base_ref: str, dry_run: bool = False) -> tuple[Repair, Against]:
    cache = ParseCache()
    result = against(content_dir, base_ref, cache=cache)
    root = Path(content_dir)
    repair = Repair()
    texts: dict[str, str] = {}  # path -> new text (by final path)
    moves: dict[str, str] = {}
    ours = result.ours

    def text_of(path: str) -> str:
        return texts.get(path) or ours.snapshot.records[path].decode("utf-8")

    next_id = next_free_id(result.base, ours, leases=result.leases)
    for c in result.collisions:
        if c.kind != "id":
            continue
        order = _order(c.path)
        texts[c.path] = yamlfile.edit(text_of(c.path), {"id": next_id}, order)
        repair.renumbered.append((c.path, int(c.value), next_id))
        next_id += 1

    taken: dict[str, set[str]] = {name: set() for name in RESOURCES}
    for tree in (ours, result.base):
        for path, fr in tree.files.items():
            if fr.raw_slug:
                taken[path.split("/", 1)[0]].add(fr.raw_slug)
    for c in result.collisions:
        if c.kind != "slug":
            continue
        collection = c.path.split("/", 1)[0]
        new_slug = slugs.unique_slug(str(c.value), lambda s, col=collection: s in taken[col])
        taken[collection].add(new_slug)
        text = text_of(c.path)
        if _has_key(text, "slug"):
            text = yamlfile.edit(text, {"slug": new_slug}, _order(c.path))
        folder = c.path.rsplit("/", 1)[0]
        new_path = f"{folder}/{new_slug}.yaml"
        texts[c.path] = text
        moves[c.path] = new_path
        repair.renamed.append((collection, str(c.value), new_slug))
        repair.moved.append((c.path, new_path))
        for path in _our_links(result, collection, str(c.value)):
            linking = _relink(text_of(path), path, collection, str(c.value), new_slug)
            if linking is not None:
                texts[path] = linking
                repair.relinked.append(moves.get(path, path))

    if not dry_run:
        for path, text in texts.items():
            target = root / moves.get(path, path)
            (root / path).write_text(text, encoding="utf-8")
            if target != root / path:
                (root / path).rename(target)
    return repair, result


def _order(path: str) -> list[str]:
    return [f.yaml_key for f in yaml_fields(RESOURCES[path.split("/", 1)[0]])]


def _has_key(text: str, key: str) -> bool:
    return any(line.startswith(f"{key}:") for line in text.split("\n"))


def _link_fields(linking: str, target: str) -> list[tuple[str, bool]]:
    """(YAML key, is a list) of the fields through which `linking` points at `target`."""
    return [(f.yaml_key, isinstance(f.type, Links)) for f in yaml_fields(RESOURCES[linking])
            if f.link == target]


def _our_links(result: Against, collection: str, slug: str) -> list[str]:
    """Our files that link to `slug` and did not get that link from the base branch.

    A file identical on the base branch (or whose base version links there too) means
    the base's record, which keeps the slug.
    """
    out = []
    base = result.base
    for path, fr in sorted(result.ours.files.items()):
        record = fr.record
        if record is None:
            continue
        for key, _ in _link_fields(record.collection, collection):
            name = record.resource.field(key) or next(
                f for f in record.resource.fields if f.yaml_key == key)
            value = record.data.get(name.name)
            if slug not in (value if isinstance(value, list) else [value]):
                continue
            theirs = base.files.get(path)
            theirs_value = theirs.record.data.get(name.name) if theirs and theirs.record else None
            if slug in (theirs_value if isinstance(theirs_value, list) else [theirs_value]):
                continue
            out.append(path)
            break
    return out


def _relink(text: str, path: str, collection: str, old: str, new: str) -> str | None:
    raw = yamlfile.load(text.encode("utf-8"))
    changes: dict = {}
    for key, many in _link_fields(path.split("/", 1)[0], collection):
        value = raw.get(key)
        if many and isinstance(value, list) and old in value:
            changes[key] = [new if v == old else v for v in value]
        elif many and value == old:
            changes[key] = [new]
        elif not many and value == old:
            changes[key] = new
    return yamlfile.edit(text, changes, _order(path)) if changes else None
