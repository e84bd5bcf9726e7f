"""What a check finds: one problem at a place in a file, with a severity and a code."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Finding:
    path: str  # relative to the content root
    line: int  # 1-based, 0 = the whole file
    column: int  # 1-based, 0 = unknown
    severity: str  # error | warning
    code: str  # stable machine name: unknown-key, dangling-link, ...
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def key_line(text: str, key: str) -> int:
    """1-based line of a top-level key (0 when absent)."""
    match = re.search(rf"^{re.escape(key)}[ \t]*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 0


def value_line(text: str, key: str, value: str) -> int:
    """Line of `value` inside a top-level key's entry (a list item), else the key's line."""
    start = key_line(text, key)
    if not start:
        return 0
    lines = text.split("\n")
    pattern = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")
    for offset, line in enumerate(lines[start - 1:], start=start):
        if offset > start and line[:1] not in (" ", "\t", "-", ""):
            break  # the next top-level key
        body = line.split(":", 1)[1] if offset == start and ":" in line else line
        if pattern.search(body):
            return offset
    return start
