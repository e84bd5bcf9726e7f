"""Progress on long builds: a bar on a terminal, a plain line per 10% otherwise."""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled and total >= 200
        self.tty = self.stream.isatty()
        self.done = 0
        self._next_line = total // 10

    def step(self, count: int = 1) -> None:
        if not self.enabled:
            return
        self.done += count
        if self.tty:
            if self.done % 50 == 0 or self.done == self.total:
                width = 30
                filled = width * self.done // self.total
                self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] "
                                  f"{self.done}/{self.total}")
                self.stream.flush()
        elif self.done >= self._next_line:
            self.stream.write(f"rendered {self.done}/{self.total} outputs\n")
            self._next_line += max(1, self.total // 10)

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
