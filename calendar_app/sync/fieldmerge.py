"""Three-way merge of one record file, key by key, as a git merge driver.

Records are YAML mappings, so two edits of the same record rarely touch the same key:
the merge keeps every key changed on one side only. When both sides changed one key
to different values, the remote's value wins and ours is written to the conflict
spool (a JSON line per key), from which `sync` makes a conflict record: never dropped.
A merge whose result the loader would refuse (each side valid alone: the remote moved
the start past our new end) is not made: the remote's file is kept whole and ours goes
to the spool whole, with the loader's reason.

git runs the driver during `git rebase <upstream>` (see sync.py), where the file git
calls "ours" (%A) is the upstream's side: the remote. %B is the local commit being
replayed. The driver writes the result into %A and exits 0; exit 1 leaves the file
to sync.py's own resolution of stopped rebases (remote wins, ours recorded whole).

    python -m calendar_app.sync.fieldmerge BASE REMOTE OURS PATH
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..model.resources import RESOURCES, yaml_fields
from ..store import parsing, yamlfile

SPOOL_ENV = "CALENDAR_SYNC_SPOOL"
# Keys that record when the file last changed: both sides changing them is no conflict,
# the later time is the merged file's.
_LATEST_WINS = ("modified",)
_ABSENT = object()  # a key missing on one side (deleted, or never there)


class Merged:
    """The merged text and the keys where the remote's value replaced ours."""

    def __init__(self, text: str, lost: dict[str, tuple[object, object]]) -> None:
        self.text = text
        self.lost = lost  # key -> (our value, remote value); None: the key was absent


def merge_texts(base: str, remote: str, ours: str, path: str) -> Merged:
    """Merge three versions of a record file. Raises yamlfile.YamlError when a side
    is not a readable mapping (the caller falls back to keeping the remote's file)."""
    old = yamlfile.load(base.encode("utf-8")) if base.strip() else {}
    theirs = yamlfile.load(remote.encode("utf-8"))
    mine = yamlfile.load(ours.encode("utf-8"))
    changes: dict[str, object] = {}
    lost: dict[str, tuple[object, object]] = {}
    for key in [*theirs, *(k for k in mine if k not in theirs)]:
        o, t, m = old.get(key, _ABSENT), theirs.get(key, _ABSENT), mine.get(key, _ABSENT)
        if m == t or m == o:
            continue  # same on both sides, or changed on the remote's side only
        if t == o:
            changes[key] = None if m is _ABSENT else m  # changed on our side only
        elif key in _LATEST_WINS and _ABSENT not in (m, t):
            if str(m) > str(t):  # one format: "YYYY-MM-DD HH:MM:SS"
                changes[key] = m
        else:
            lost[key] = (None if m is _ABSENT else m, None if t is _ABSENT else t)
    for key in old:  # deleted on our side, untouched on the remote's
        if key not in mine and key in theirs and theirs[key] == old[key]:
            changes[key] = None
    if not changes:
        return Merged(remote, lost)
    return Merged(yamlfile.edit(remote, changes, field_order(path)), lost)


def collection_of(path: str) -> str | None:
    """The collection a repository path belongs to (the content tree may be a folder)."""
    return next((part for part in Path(path).parts if part in RESOURCES), None)


def field_order(path: str) -> list[str]:
    """The canonical key order of the collection a path belongs to (new keys go where
    `fmt` would put them)."""
    collection = collection_of(path)
    return [f.yaml_key for f in yaml_fields(RESOURCES[collection])] if collection else []


def refusal(text: str, path: str) -> str:
    """Why the catalog's loader would leave this record file out ("" if it loads)."""
    collection = collection_of(path)
    if collection is None:
        return ""
    outcome = parsing.parse_data(text.encode("utf-8"), path, collection)
    return f"line {outcome[1]}: {outcome[2]}" if outcome[0] == "problem" else ""


def main(argv: list[str]) -> int:
    """git's merge driver entry: BASE REMOTE OURS PATH (%O %A %B %P)."""
    base_file, remote_file, ours_file, path = argv
    read = lambda p: Path(p).read_text(encoding="utf-8")
    spool = os.environ.get(SPOOL_ENV)
    try:
        merged = merge_texts(read(base_file), read(remote_file), read(ours_file), path)
    except (yamlfile.YamlError, UnicodeDecodeError, ValueError) as exc:
        print(f"{path}: no key-by-key merge: {exc}", file=sys.stderr)
        return 1
    invalid = refusal(merged.text, path) if merged.text != read(remote_file) else ""
    if invalid:  # the remote's file stays as it is; ours is kept whole
        if spool:
            with open(spool, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"path": path, "ours_file": read(ours_file),
                                     "invalid": invalid}) + "\n")
        return 0
    Path(remote_file).write_text(merged.text, encoding="utf-8")
    if merged.lost and spool:
        entry = {"path": path, "keys": {k: {"ours": o, "remote": t}
                                        for k, (o, t) in merged.lost.items()}}
        with open(spool, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
