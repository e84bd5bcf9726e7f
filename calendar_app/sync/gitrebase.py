"""Integrating with `git rebase` where the in-process replay cannot (replay.py): a
record both sides changed is merged key by key by our merge driver (fieldmerge.py); a
file git stops on is resolved as the remote has it, ours kept for a conflict record.
Split from sync.py; runs with the push lock and the write lock held."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Protocol

from ..store.content import ContentTree
from . import fieldmerge
from .clone import git_reason, ours_entry
from .displaced import Clone as _GitClone
from .settings import SyncError


class Clone(_GitClone, Protocol):
    """What these need of sync.RemoteSync besides its git: where the merge driver's
    reports and attributes go, the content tree, the remote-tracking branch."""
    spool: Path
    attributes: Path
    tree: ContentTree

    @property
    def upstream(self) -> str: ...

    def unpushed(self) -> list[str]: ...


def rebase(sync: Clone) -> list[dict]:
    """Rebase local commits on the remote branch; returns the conflicts resolved
    (the remote's side kept): key-level from the driver, whole files from stops."""
    sync.spool.parent.mkdir(parents=True, exist_ok=True)
    sync.spool.write_text("")
    # .retired-ids is a set of lines: both sides' additions are kept.
    sync.attributes.write_text("*.yaml merge=calendar\n.retired-ids merge=union\n")
    driver = (f"{shlex.quote(sys.executable)} -m calendar_app.sync.fieldmerge "
              "%O %A %B %P")
    config = ["-c", f"core.attributesFile={sync.attributes}",
              "-c", f"merge.calendar.driver={driver}",
              "-c", "merge.calendar.name=calendar records, key by key"]
    env = {fieldmerge.SPOOL_ENV: str(sync.spool)}
    stops: list[dict] = []
    proc = sync.git(*config, "rebase", "-q", "--no-autostash", "--empty=drop",
                    sync.upstream, check=False, env=env)
    for _ in range(len(sync.unpushed()) + 2):
        if not _rebasing(sync):
            break
        unmerged = _unmerged(sync)
        for path, stages in unmerged.items():
            lost = _take_remote(sync, path, stages)
            if lost is not None:
                stops.append(lost)
        proc = sync.git(*config, "rebase", "--continue", check=False, env=env)
        if _rebasing(sync) and not _unmerged(sync) and proc.returncode:
            proc = sync.git(*config, "rebase", "--skip", check=False, env=env)
    if _rebasing(sync):
        sync.git("rebase", "--abort", check=False)
        raise SyncError(f"rebase on {sync.remote}/{sync.branch} did not finish: "
                        f"{git_reason(proc.stderr or proc.stdout)}")
    if proc.returncode:
        raise SyncError(f"git rebase failed: {git_reason(proc.stderr or proc.stdout)}")
    with open(sync.spool, encoding="utf-8") as fh:
        keyed = [json.loads(line) for line in fh if line.strip()]
    return keyed + stops


def _rebasing(sync: Clone) -> bool:
    git_dir = sync.tree.git_dir
    return git_dir is not None and any(
        (git_dir / name).exists() for name in ("rebase-merge", "rebase-apply"))


def _unmerged(sync: Clone) -> dict[str, dict[int, str]]:
    """path -> {stage: blob}: 1 base, 2 the remote's side, 3 our commit's."""
    found: dict[str, dict[int, str]] = {}
    for entry in sync.git("ls-files", "-u", "-z").stdout.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            _mode, blob, stage = meta.split()
            found.setdefault(path, {})[int(stage)] = blob
    return found


def _take_remote(sync: Clone, path: str, stages: dict[int, str]) -> dict | None:
    """Resolve a stopped file as the remote has it (during a rebase git's "ours"
    is the upstream); our side goes to a conflict record. None: nothing of ours
    was lost (both sides deleted it)."""
    root = sync.tree.git_root
    assert root is not None
    if 2 in stages:
        sync.git("checkout", "--ours", "--", path)  # bytes and mode as they are
        sync.git("add", "--", path)
    else:
        sync.git("rm", "-q", "--cached", "--ignore-unmatch", "--", path)
        Path(root, path).unlink(missing_ok=True)
    if 3 not in stages:
        return None if 2 not in stages else {"path": path, "ours_file": None}
    return ours_entry(sync.tree.git_root, path, stages[3])
