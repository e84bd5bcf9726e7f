"""What a build refuses before it writes anything (docs/static-site.md, the options).

A wrong `--content` or `--out` must not cost a published site: a content folder that
is missing or holds no calendar is an error, and a build neither writes into a folder
it did not make nor removes more than it writes, unless told to (`force`).
"""

from __future__ import annotations

from pathlib import Path

from ..model.resources import RESOURCES
from ..store.content import SETTINGS_FILE
from . import manifest

# Manifests a build leaves in its output folder: today's and the JSON one (until 2026-11).
_MANIFESTS = (manifest.NAME, manifest.NAME + ".json")


class BuildRefused(Exception):
    """A build that would lose or overwrite what it should not: nothing was written."""


def check_content(content: Path) -> None:
    """Refuse a content folder that is missing or has neither settings nor records."""
    if not content.is_dir():
        raise BuildRefused(f"no content folder at {content}")
    if (content / SETTINGS_FILE).is_file() or any(_has_records(content / c) for c in RESOURCES):
        return
    raise BuildRefused(f"{content} holds no calendar: neither {SETTINGS_FILE} nor records "
                       f"in {', '.join(f'{c}/' for c in RESOURCES)}")


def _has_records(folder: Path) -> bool:
    return folder.is_dir() and any(
        not any(part.startswith(".") for part in found.relative_to(folder).parts)
        for found in folder.rglob("*.yaml"))


def check_output(out: Path) -> None:
    """Refuse to write into a folder holding files of its own but no build's manifest
    (hidden entries such as `.git` aside: a fresh clone of a pages branch is fine)."""
    if not out.is_dir() or any((out / name).is_file() for name in _MANIFESTS):
        return
    if any(not entry.name.startswith(".") for entry in out.iterdir()):
        raise BuildRefused(f"{out} is not the output of an earlier build (no {manifest.NAME}) "
                           "and is not empty: give an empty or new folder, or --force to "
                           "write over its files")


def check_removals(out: Path, removing: int, keeping: int) -> None:
    """Refuse a build that would remove more files of the last build than it makes."""
    if removing > keeping:
        raise BuildRefused(
            f"this build would remove {removing} files of the last build in {out} and make "
            f"only {keeping}: is --content the right calendar? --force removes them")
