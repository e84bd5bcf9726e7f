"""What the last build wrote: per output, its dependency signature and content hash.

Kept inside the output folder (`.build-manifest`) so it always describes the files
next to it: wiping the folder wipes the manifest, and the next build is full. One
line per output, `path<TAB>signature<TAB>hash`: at 100,000 events it has 460,000
lines, written after every --watch rebuild, and JSON took 3 s to write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

NAME = ".build-manifest"
HEADER = "calendar_app build manifest 2\n"
# Output paths come from slugs and file names; these few characters are %-escaped.
_SPECIAL = re.compile(r"[%\t\n\r]")
_ESCAPED = re.compile(r"%(25|09|0A|0D)")


def load(out: Path) -> dict[str, list[str]]:
    try:
        text = (out / NAME).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    if not text.startswith(HEADER):
        return {}  # another version: the next build is a full one
    outputs: dict[str, list[str]] = {}
    for line in text[len(HEADER):].splitlines():
        path, _, rest = line.partition("\t")
        sig, _, digest = rest.partition("\t")
        if "%" in path:
            path = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), path)
        outputs[path] = [sig, digest]
    return outputs


def save(out: Path, outputs: dict[str, list[str]]) -> None:
    lines = [HEADER]
    for path, (sig, digest) in outputs.items():
        if _SPECIAL.search(path):
            path = _SPECIAL.sub(lambda m: f"%{ord(m.group(0)):02X}", path)
        lines.append(f"{path}\t{sig}\t{digest}\n")
    tmp = out / (NAME + ".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    os.replace(tmp, out / NAME)
    (out / ".build-manifest.json").unlink(missing_ok=True)  # the JSON one, until 2026-11
