"""Records added on this branch whose id or slug the base branch has meanwhile taken.

Who owns an id is decided with the merge base: an id that already existed there
belongs to that record wherever it moved; an id both sides created since is the base
branch's, and our record with it is the one to renumber. An id new on this branch that
falls in a block leased to a server (`idlease`, read from the local copy of the leases
ref) is also renumbered: that server may hand it out at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..model.findings import ERROR, Finding, key_line
from ..sync.idlease import Lease, read_leases
from . import gitrev, snapshot
from .check import ParseCache, TreeResult, check_tree


@dataclass(frozen=True)
class Collision:
    path: str  # our file
    kind: str  # "id" or "slug"
    value: object  # the id or slug
    base_path: str  # the base branch's record holding it ("" for a retired or leased id)
    lease: Lease | None = None  # the server's block the id falls in


@dataclass
class Against:
    base: TreeResult
    ours: TreeResult
    collisions: list[Collision]
    leases: list[Lease] = field(default_factory=list)  # the servers' id blocks

    def findings(self) -> list[Finding]:
        out = []
        for c in self.collisions:
            text = self.ours.snapshot.records[c.path].decode("utf-8", "replace")
            ref = self.base.snapshot.label
            if c.lease is not None:
                message = (f"id {c.value} is leased to the server {c.lease.instance} "
                           f"(ids {c.lease.first}-{c.lease.last}), which may hand it out")
            elif c.kind == "id" and not c.base_path:
                message = f"id {c.value} is retired on {ref}"
            elif c.kind == "id":
                message = f"id {c.value} is already taken on {ref} by {c.base_path}"
            else:
                message = f"slug {c.value!r} is already taken on {ref} by {c.base_path}"
            message += " (run `fix-ids --against " + ref + "`)"
            out.append(Finding(c.path, key_line(text, c.kind) or 1, 0, ERROR,
                               f"{c.kind}-collision", message))
        return out


def against(content_dir: Path, base_ref: str, ours: TreeResult | None = None,
            cache: ParseCache | None = None) -> Against:
    cache = cache or ParseCache()
    repo, _ = gitrev.prefix_of(Path(content_dir))
    base_sha = gitrev.resolve(repo, base_ref)
    ours = ours or check_tree(snapshot.from_worktree(content_dir), cache)
    base_snap = snapshot.from_git(content_dir, base_sha)
    base_snap.label = base_ref
    base = check_tree(base_snap, cache)
    mb = gitrev.merge_base(repo, base_sha, "HEAD")
    mb_tree = check_tree(snapshot.from_git(content_dir, mb), cache) if mb else None
    leases = read_leases(repo)
    return Against(base, ours, find(base, ours, mb_tree, leases), leases)


def find(base: TreeResult, ours: TreeResult, mb: TreeResult | None,
         leases: list[Lease] = ()) -> list[Collision]:
    """Our records whose id or slug `base` holds for another record, or whose new id
    falls in a server's leased block."""
    mb_slugs = {r.raw_id: r.raw_slug for r in mb.files.values()} if mb else {}
    mb_ids = set(mb_slugs)
    base_by_id: dict[int, str] = {}
    base_by_slug: dict[tuple[str, str], tuple[int | None, str]] = {}
    for path, result in base.files.items():
        if result.raw_id is not None:
            base_by_id.setdefault(result.raw_id, path)
        if result.raw_slug is not None:
            base_by_slug.setdefault((path.split("/", 1)[0], result.raw_slug),
                                    (result.raw_id, path))
    ours_by_id: dict[int, list[str]] = {}
    for path, result in sorted(ours.files.items()):
        if result.raw_id is not None:
            ours_by_id.setdefault(result.raw_id, []).append(path)
    retired = base.snapshot.retired_ids()
    out: list[Collision] = []
    renumbered: set[str] = set()
    for record_id, paths in ours_by_id.items():
        base_path = base_by_id.get(record_id)
        if base_path is None:
            lease = next((x for x in leases if record_id in x), None)
            if record_id in retired and record_id not in ours.snapshot.retired_ids():
                out += [Collision(p, "id", record_id, "") for p in paths]
                renumbered.update(paths)
            elif lease is not None and record_id not in mb_ids:
                out += [Collision(p, "id", record_id, "", lease) for p in paths]
                renumbered.update(paths)
            continue
        owner = _owner(base_path, paths, record_id in mb_ids, ours)
        for path in paths:
            if path != owner:
                out.append(Collision(path, "id", record_id, base_path))
                renumbered.add(path)
    our_ids = set(ours_by_id)
    for path, result in sorted(ours.files.items()):
        if result.raw_slug is None:
            continue
        holder = base_by_slug.get((path.split("/", 1)[0], result.raw_slug))
        if holder is None or holder[0] == result.raw_id and path not in renumbered:
            continue
        holder_id, holder_path = holder
        if holder_path == path and path not in renumbered:
            continue  # the same file on both sides
        # The base's holder was renamed or deleted on our branch: the slug is ours now.
        gone_here = mb_slugs.get(holder_id) == result.raw_slug and (
            holder_id not in our_ids or all(
            ours.files[p].raw_slug != result.raw_slug for p in ours_by_id[holder_id]))
        if not gone_here:
            out.append(Collision(path, "slug", result.raw_slug, holder_path))
    return out


def _owner(base_path: str, paths: list[str], existed_before: bool,
           ours: TreeResult) -> str | None:
    """Which of our files with this id is the base branch's record (None: none is)."""
    if base_path in paths:
        return base_path
    if existed_before:
        # An old record moved (renamed) on one side: the one in the same collection.
        same = [p for p in paths if p.split("/", 1)[0] == base_path.split("/", 1)[0]]
        return (same or paths)[0]
    return None
