"""Records of ours whose slug the remote gave another new record meanwhile: before a
`git rebase` (sync.py), our unpushed commits are rewritten so that ours moves to a free
slug. Split from sync.py; these run with the push lock and the write lock held."""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from ..model import slugs
from ..store import yamlfile
from . import fieldmerge

log = logging.getLogger("calendar_app.sync.sync")  # where these warnings always went


class Clone(Protocol):
    """What these need of sync.RemoteSync: its clone's git, names and state folder."""
    remote: str
    branch: str
    state_path: Path

    def git(self, *args: str, check: bool = True, env: Mapping[str, str] | None = None,
            timeout: float | None = None, input: str | None = None
            ) -> subprocess.CompletedProcess: ...


def move_displaced(sync: Clone, target: str) -> None:
    """Records made here whose file name (their slug) the remote gave another new
    record meanwhile (an id of its own): before the rebase, our unpushed commits are
    rewritten so that ours has a slug nobody has from its first commit on, its id
    unchanged. Each later commit of ours then changes our record at its new path,
    never the remote's; authors and messages stay. Links are not rewritten: a
    record of ours that linked to that slug now links to the remote's record."""
    base = sync.git("merge-base", "HEAD", target).stdout.strip()
    theirs = set(_paths(sync, "log", "--diff-filter=A", f"{base}..{target}"))
    moves: dict[str, tuple[str, object, str]] = {}  # old path: new path, our id, slug
    taken: set[str] = set()
    for path in _paths(sync, "log", "--diff-filter=A", "--reverse", f"{base}..HEAD"):
        if path not in theirs or path in moves:
            continue
        first = sync.git("log", "--diff-filter=A", "--format=%H", "--reverse",
                         f"{base}..HEAD", "--", path).stdout.split()
        ours, remote = _record_id(sync, f"{first[0]}:{path}"), _record_id(sync, 
            f"{target}:{path}")
        if None in (ours, remote) or ours == remote:
            continue
        parts = Path(path).parts
        top = "/".join(parts[:parts.index(fieldmerge.collection_of(path) or parts[0]) + 1])
        taken |= {Path(p).stem for tree in (target, "HEAD")
                  for p in _paths(sync, "ls-tree", "-r", tree, "--", top)}
        slug = slugs.unique_slug(Path(path).stem, taken.__contains__)
        taken.add(slug)
        moves[path] = (f"{path.rsplit('/', 1)[0]}/{slug}.yaml", ours, slug)
    if not moves:
        return
    mapping: dict[str, str] = {}
    for sha in sync.git("rev-list", "--reverse", "--topo-order", f"{base}..HEAD"
                        ).stdout.split():
        mapping[sha] = _rewrite_commit(sync, sha, moves, mapping)
    sync.git("reset", "-q", "--keep", mapping[sha])
    log.warning("%s/%s: record(s) made here renamed, the remote gave their slug to "
                "another new record meanwhile: %s", sync.remote, sync.branch,
                ", ".join(f"{old} -> {new}" for old, (new, _, _) in moves.items()))

def _paths(sync: Clone, command: str, *args: str) -> list[str]:
    """File paths a `git log` or `git ls-tree` lists (names only)."""
    out = sync.git(command, "--name-only", "-z",
                   *(["--format="] if command == "log" else []), *args)
    return [p for p in out.stdout.replace("\n", "\0").split("\0") if p]

def _record_id(sync: Clone, blob: str) -> object:
    text = sync.git("cat-file", "-p", blob, check=False).stdout
    try:
        return yamlfile.load(text.encode("utf-8")).get("id")
    except (yamlfile.YamlError, ValueError, AttributeError):
        return None

def _rewrite_commit(sync: Clone, sha: str, moves: dict[str, tuple[str, object, str]],
                    mapping: dict[str, str]) -> str:
    """`sha` again on its rewritten parents, our displaced records at their new
    paths: the same author, dates and message."""
    index = sync.state_path.with_name(f"rewrite-index-{os.getpid()}")
    env = {"GIT_INDEX_FILE": str(index)}
    sync.git("read-tree", sha, env=env)
    for old, (new, record_id, slug) in moves.items():
        listed = sync.git("ls-tree", sha, "--", old).stdout.split()
        if not listed or _record_id(sync, listed[2]) != record_id:
            continue
        text = sync.git("cat-file", "blob", listed[2]).stdout
        if re.search(r"^slug[ \t]*:", text, re.MULTILINE):
            text = yamlfile.edit(text, {"slug": slug}, fieldmerge.field_order(new))
        blob = sync.git("hash-object", "-w", "--stdin", input=text).stdout.strip()
        sync.git("update-index", "--force-remove", "--", old, env=env)
        sync.git("update-index", "--add", "--cacheinfo", f"{listed[0]},{blob},{new}",
                 env=env)
    tree = sync.git("write-tree", env=env).stdout.strip()
    index.unlink(missing_ok=True)
    fields = sync.git("log", "-1", "--date=raw",
                      "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B", sha).stdout
    an, ae, ad, cn, ce, cd, message = fields.split("\0", 6)
    parents = sync.git("rev-list", "--parents", "-n1", sha).stdout.split()[1:]
    who = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
           "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
    args = [arg for p in parents for arg in ("-p", mapping.get(p, p))]
    return sync.git("commit-tree", tree, *args, "-F", "-", env=who,
                    input=message).stdout.strip()
