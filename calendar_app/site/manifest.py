"""What the last build wrote: per output, its dependency signature and content hash.

Kept inside the output folder (`.build-manifest.json`) so it always describes the
files next to it: wiping the folder wipes the manifest, and the next build is full.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

NAME = ".build-manifest.json"
VERSION = 1


def load(out: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((out / NAME).read_text())
    except (OSError, ValueError):
        return {}
    if data.get("version") != VERSION:
        return {}
    return data.get("outputs", {})


def save(out: Path, outputs: dict[str, list[str]]) -> None:
    text = json.dumps({"version": VERSION, "outputs": dict(sorted(outputs.items()))},
                      separators=(",", ":"))
    tmp = out / (NAME + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, out / NAME)
