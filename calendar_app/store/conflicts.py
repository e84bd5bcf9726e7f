"""Conflict records: our side of what a sync's merge replaced, kept in the tree under
`.calendar/conflicts/` until someone decides (written by `sync`, reported by `check` and
`sync status`). Reading them needs neither git nor the network."""

from __future__ import annotations

from pathlib import Path

from ..model.findings import WARNING, Finding
from . import yamlfile

CONFLICTS_DIR = ".calendar/conflicts"


def conflict_records(content: Path) -> dict[str, dict]:
    """Conflict records in a content tree: relpath -> its mapping (unreadable: {})."""
    folder = Path(content) / CONFLICTS_DIR
    found: dict[str, dict] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        try:
            found[f"{CONFLICTS_DIR}/{path.name}"] = yamlfile.load(path.read_bytes())
        except (OSError, yamlfile.YamlError):
            found[f"{CONFLICTS_DIR}/{path.name}"] = {}
    return found


def conflict_findings(content: Path) -> list[Finding]:
    """What `check` reports: one warning per conflict record left to decide."""
    findings = []
    for relpath, record in conflict_records(content).items():
        what = ", ".join(record.get("keys") or {}) or (
            "the whole file (deleted on our side)" if record.get("ours_deleted")
            else "the whole file")
        findings.append(Finding(
            relpath, 0, 0, WARNING, "sync-conflict",
            f"{record.get('record', '?')}: the remote's {what} replaced ours; our values "
            "are in this file: apply what should stay, then delete it"))
    return findings


def conflict_record(entry: dict, record: str, recorded_at: str, remote_commit: str) -> dict:
    """The conflict record a sync writes for one file it resolved the remote's way:
    `entry` says what of ours was replaced (sync.py), `record` is the file's path."""
    found = {"record": record, "recorded_at": recorded_at, "remote_commit": remote_commit,
             "resolution": "the remote's version was kept; ours is below"}
    if entry.get("rewritten"):
        found["resolution"] = ("the remote branch was rewritten (force-pushed) and "
                               "this change of ours, never pushed, was not made on "
                               "it: the remote's version was kept; ours is below")
    if "invalid" in entry:  # both sides' keys together would not load
        found["resolution"] = ("the remote's version was kept: merged with ours it "
                               f"would not load ({entry['invalid']}); ours is below")
    if "keys" in entry:
        found["keys"] = entry["keys"]
    elif "ours_blob" in entry:
        found["ours_blob"] = entry["ours_blob"]  # git cat-file blob SHA
    elif entry["ours_file"] is None:
        found["ours_deleted"] = True
    else:
        found["ours_file"] = entry["ours_file"]
    return found
