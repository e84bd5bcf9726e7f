"""A content tree as a set of files: the work tree on disk or a git revision.

Checks, diffs and collision repair all work on snapshots, so the same code judges
the files an editor is about to commit and the files of any branch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..model.ids import valid_id
from ..model.resources import RESOURCES
from ..store.content import RETIRED_IDS_FILE, SETTINGS_FILE
from . import gitrev


@dataclass
class Snapshot:
    label: str  # "work tree" or the revision as given
    records: dict[str, bytes] = field(default_factory=dict)  # record files: path -> bytes
    strays: list[str] = field(default_factory=list)  # non-.yaml files in collection folders
    symlinks: list[str] = field(default_factory=list)  # anywhere in the work tree
    settings: bytes | None = None
    retired: bytes | None = None
    shas: dict[str, str] = field(default_factory=dict)  # path -> git blob sha

    def collection_of(self, relpath: str) -> str:
        return relpath.split("/", 1)[0]

    def retired_ids(self) -> set[int]:
        if not self.retired:
            return set()
        # Ids a record could have: '¹' passes isdigit() but not int(), and an id out of
        # range must not push `new` and `fix-ids` beyond ids.MAX_ID.
        return {int(t) for t in self.retired.decode("utf-8", "replace").split()
                if t.isascii() and t.isdigit() and valid_id(int(t))}


def _classify(snap: Snapshot, relpath: str) -> str:
    """'record', 'stray' or '' (not part of the record collections)."""
    parts = relpath.split("/")
    if len(parts) < 2 or parts[0] not in RESOURCES:
        return ""
    if any(p.startswith(".") for p in parts):
        return ""  # hidden files and the interface's temp files
    return "record" if relpath.endswith(".yaml") else "stray"


def _symlinks(root: Path) -> list[str]:
    """Every symbolic link in the tree, media included: the app neither reads nor serves
    them (one could lead anywhere, `media/logo.png -> /etc/...`), so they are errors."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root).as_posix()
        for name in sorted(dirs + files):
            if os.path.islink(os.path.join(folder, name)):
                found.append(name if rel_folder == "." else f"{rel_folder}/{name}")
        dirs[:] = sorted(d for d in dirs if d != ".git")  # os.walk does not follow links
    return found


def from_worktree(content_dir: Path, with_shas: bool = False) -> Snapshot:
    root = Path(content_dir)
    snap = Snapshot("work tree")
    snap.symlinks = _symlinks(root)
    links = set(snap.symlinks)
    for collection in RESOURCES:
        base = root / collection
        if not base.is_dir():
            continue
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            rel_folder = Path(folder).relative_to(root).as_posix()
            for name in sorted(files):
                relpath = f"{rel_folder}/{name}"
                kind = _classify(snap, relpath) if relpath not in links else ""
                if kind == "stray":
                    snap.strays.append(relpath)
                elif kind == "record":
                    with open(os.path.join(folder, name), "rb") as fh:
                        snap.records[relpath] = fh.read()
    for name, attr in ((SETTINGS_FILE, "settings"), (RETIRED_IDS_FILE, "retired")):
        path = root / name
        if path.is_file():
            setattr(snap, attr, path.read_bytes())
    if with_shas:
        snap.shas = {p: gitrev.blob_sha(d) for p, d in snap.records.items()}
    return snap


def from_git(content_dir: Path, rev: str) -> Snapshot:
    repo, prefix = gitrev.prefix_of(Path(content_dir))
    tree = gitrev.ls_tree(repo, rev, prefix)
    snap = Snapshot(rev)
    wanted: dict[str, str] = {}
    for relpath, sha in sorted(tree.items()):
        kind = _classify(snap, relpath)
        if kind == "stray":
            snap.strays.append(relpath)
        elif kind == "record" or relpath in (SETTINGS_FILE, RETIRED_IDS_FILE):
            wanted[relpath] = sha
    blobs = gitrev.read_blobs(repo, list(wanted.values()))
    for relpath, sha in wanted.items():
        data = blobs.get(sha, b"")
        if relpath == SETTINGS_FILE:
            snap.settings = data
        elif relpath == RETIRED_IDS_FILE:
            snap.retired = data
        else:
            snap.records[relpath] = data
            snap.shas[relpath] = sha
    return snap


def load(content_dir: Path, rev: str | None, with_shas: bool = False) -> Snapshot:
    """The work tree when `rev` is None, else that revision of the same content tree."""
    return from_worktree(content_dir, with_shas) if rev is None else from_git(content_dir, rev)
