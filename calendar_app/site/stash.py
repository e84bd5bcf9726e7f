"""Dicts kept between builds as pickles in the cache folder (files we wrote ourselves)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any


class Stash:
    """Read on first use; written back only when something was added or dropped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: dict[Any, Any] | None = None
        self.dirty = False

    @property
    def data(self) -> dict[Any, Any]:
        if self._data is None:
            try:
                with open(self.path, "rb") as fh:
                    self._data = pickle.load(fh)
            except (OSError, pickle.PickleError, EOFError, ValueError, AttributeError):
                self._data = {}
        return self._data

    @property
    def loaded(self) -> bool:
        return self._data is not None

    def update(self, changes: dict[Any, Any]) -> None:
        if changes:
            self.data.update(changes)
            self.dirty = True

    def keep_only(self, keys: set[Any]) -> None:
        """Forget entries no longer needed (texts of edited or removed records); a
        stash no build read this session stays as it is (reading it costs more)."""
        if self._data is None:
            return
        stale = self.data.keys() - keys
        for key in stale:
            del self.data[key]
        self.dirty = self.dirty or bool(stale)

    def save(self) -> None:
        if not self.dirty:
            return  # megabytes at 10,000 events: not rewritten unchanged
        self.dirty = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(self._data, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(self.path)
