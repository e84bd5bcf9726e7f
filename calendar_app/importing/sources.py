"""Sources that stay in step: `sources/NAME.yaml` in the tree, run by hand
(`sources run`) or on their schedule while the server runs (`Scheduler`).

A source file:

    kind: tec                # tec | ics | csv
    url: https://arts.example.org/
    schedule: 1h             # how often: 15m at least; 30m, 2h, 1d, ...
    type: events             # csv only: events | venues | organizers
    update: keep-edits       # overwrite | keep-edits | new-only
    gone: cancel             # cancel | report
    status: draft            # status of new records (default: the source's)
    user: importer           # tec only: with the password in $CALENDAR_SOURCE_<NAME>_PASSWORD
    defaults: {venue: town-hall, organizer: [arts-council], categories: [arts]}
    map: {Start: start_date} # csv only: other column names

Each run is one commit by the `sources` user (or none), its state (last run, error,
ETag / Last-Modified, field fingerprints) kept in the cache folder
(`store/sourcestate.py`). Fetching and parsing happen before the write lock is taken.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..model.errors import ApiError
from ..model.records import line_of
from ..store import sourcestate, yamlfile
from ..store.users import User
from . import fetch
from .apply import GONE, RULES, Options, Outcome, apply_batch
from .batch import Batch

if TYPE_CHECKING:
    from ..wiring import Calendar

log = logging.getLogger(__name__)
FOLDER = "sources"
KINDS = ("tec", "ics", "csv")
MIN_SCHEDULE = dt.timedelta(minutes=15)
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
SOURCES_USER = User(0, "sources", "editor", "sources@calendar.invalid")
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400}
KEYS = ("kind", "url", "schedule", "type", "update", "gone", "status", "user", "defaults",
        "map", "enabled")


class SourceError(Exception):
    """A source file that cannot be used: the message names the file and line."""


@dataclass
class Source:
    name: str
    kind: str
    url: str
    schedule: dt.timedelta = dt.timedelta(hours=1)
    type: str = "events"
    update: str = "overwrite"
    gone: str = "cancel"
    status: str | None = None
    user: str = ""
    defaults: dict = field(default_factory=dict)
    map: dict = field(default_factory=dict)
    enabled: bool = True

    @property
    def password(self) -> str:
        env = "CALENDAR_SOURCE_" + re.sub(r"\W", "_", self.name).upper() + "_PASSWORD"
        return os.environ.get(env, "")


def parse_schedule(value: object) -> dt.timedelta:
    """"30m", "2h", "1d", or minutes as a number; at least MIN_SCHEDULE."""
    text = str(value).strip().lower()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(m|min|h|d)?", text)
    if not match:
        raise ValueError(f"schedule {value!r}: write it as 30m, 2h or 1d")
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "m"]
    if seconds < MIN_SCHEDULE.total_seconds():
        raise ValueError(f"schedule {value!r}: at least every 15 minutes")
    return dt.timedelta(seconds=min(seconds, 366 * 86400))


def load_source(content: Path, name: str) -> Source:
    relpath = f"{FOLDER}/{name}.yaml"
    path = Path(content) / relpath
    if not NAME.fullmatch(name) or not path.is_file():
        raise SourceError(f"{relpath}: no such source")
    text = path.read_bytes()
    try:
        raw = yamlfile.load(text)
    except yamlfile.YamlError as exc:
        raise SourceError(f"{relpath}: not readable YAML: {exc}") from None

    def fail(key: str, message: str) -> SourceError:
        line = line_of(text.decode("utf-8", "replace"), key) or 1
        return SourceError(f"{relpath}, line {line}: {message}")

    unknown = [k for k in raw if k not in KEYS]
    if unknown:
        raise fail(str(unknown[0]), f"unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    for key in ("kind", "url"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise fail(key, f"{key!r} is required")
    checks = (("kind", KINDS), ("update", RULES), ("gone", GONE),
              ("type", ("events", "venues", "organizers")),
              ("status", ("publish", "draft", "pending", "private")))
    for key, allowed in checks:
        if key in raw and raw[key] not in allowed:
            raise fail(key, f"{key}: {raw[key]!r} is not one of {', '.join(allowed)}")
    for key in ("defaults", "map"):
        if key in raw and not isinstance(raw[key], dict):
            raise fail(key, f"{key}: expected a mapping")
    try:
        schedule = parse_schedule(raw.get("schedule", "1h"))
    except ValueError as exc:
        raise fail("schedule", str(exc)) from None
    defaults = {}
    for key, value in (raw.get("defaults") or {}).items():
        target = {"category": "categories", "categories": "categories", "venue": "venue",
                  "organizer": "organizer", "organizers": "organizer"}.get(str(key))
        if target is None:
            raise fail("defaults", f"defaults: {key!r} is not venue, organizer or categories")
        listed = [str(v) for v in (value if isinstance(value, list) else [value])]
        defaults[target] = listed[0] if target == "venue" else listed
    return Source(name, raw["kind"], raw["url"].strip(), schedule, raw.get("type", "events"),
                  raw.get("update", "overwrite"), raw.get("gone", "cancel"),
                  raw.get("status"), str(raw.get("user") or ""), defaults,
                  {str(k): str(v) for k, v in (raw.get("map") or {}).items()},
                  raw.get("enabled", True) is not False)


def source_names(content: Path) -> list[str]:
    folder = Path(content) / FOLDER
    return sorted(p.stem for p in folder.glob("*.yaml") if NAME.fullmatch(p.stem)) if (
        folder.is_dir()) else []


# ------------------------------------------------------------------ reading
Reader = Callable[[bytes, str], Batch]


def read_source(source: Source, calendar: Calendar, state: dict) -> tuple[Batch | None, dict]:
    """The source's batch (None: not modified since the last run) and the validators of
    this answer. Network and parsing only: no lock is held."""
    if source.kind == "tec":
        from .tec import read_tec

        return read_tec(source.url, source.user, source.password), {}
    headers = fetch.conditional_headers(state.get("etag", ""), state.get("last_modified", ""))
    if fetch.is_url(source.url):
        answer = fetch.get(source.url, headers)
        if answer.status == 304:
            return None, {"etag": state.get("etag", ""),
                          "last_modified": state.get("last_modified", "")}
        data, validators = answer.body, {"etag": answer.etag,
                                         "last_modified": answer.last_modified}
    else:
        data, validators = fetch.read_file(Path(source.url)), {}
    return parse(source.kind, data, source.url, calendar, source.type, source.map), validators


def parse(kind: str, data: bytes, origin: str, calendar: Calendar, collection: str = "events",
          mapping: dict | None = None) -> Batch:
    """Bytes of an iCalendar or CSV source as a batch (raises ValueError when the whole
    input cannot be read)."""
    zone = calendar.service.site_zone_name
    if kind == "csv":
        from .csvio import CsvError, parse_map, read_csv

        try:
            columns = parse_map([f"{k}={v}" for k, v in (mapping or {}).items()], collection)
            return read_csv(data, origin, collection, columns, zone)
        except CsvError as exc:
            raise ValueError(str(exc)) from None
    if kind == "ics":
        from .ics import read_ics  # icalendar: only for iCalendar sources

        return read_ics(data, origin, zone)
    raise ValueError(f"unknown kind {kind!r}")


# ------------------------------------------------------------------ running
def run_source(calendar: Calendar, source: Source, dry_run: bool = False,
               merge_duplicates: bool = False) -> Outcome | None:
    """One run: None when the source was not modified. Raises what failed (the failure
    is kept in the state, for `check` and the next run)."""
    state = sourcestate.read(calendar.cache_dir, source.name)
    now = calendar.clock().isoformat(timespec="seconds")
    try:
        batch, validators = read_source(source, calendar, state)
        outcome = None
        if batch is not None:
            options = Options(source.name, source.update, source.status, source.gone,
                              defaults=source.defaults, merge_duplicates=merge_duplicates,
                              dry_run=dry_run, fingerprints=dict(state.get("fingerprints", {})))
            outcome = apply_batch(calendar.service, batch, options, SOURCES_USER)
    except (fetch.FetchError, ValueError, ApiError, OSError) as exc:
        message = exc.message if isinstance(exc, ApiError) else str(exc)
        if not dry_run:
            sourcestate.write(calendar.cache_dir, source.name,
                              {**state, "last_run": now, "error": message})
        raise SourceError(f"{source.name}: {message}") from exc
    if not dry_run:
        new_state = {**state, "last_run": now, "error": "", **validators}
        if outcome is not None:
            new_state["fingerprints"] = outcome.fingerprints
            new_state["last_summary"] = outcome.summary()
        sourcestate.write(calendar.cache_dir, source.name, new_state)
    return outcome


def due(calendar: Calendar, source: Source) -> bool:
    last = sourcestate.read(calendar.cache_dir, source.name).get("last_run")
    if not last:
        return True
    try:
        then = dt.datetime.fromisoformat(last)
    except ValueError:
        return True
    return calendar.clock() - then >= source.schedule


class Scheduler:
    """Runs due sources while the server runs: one thread, a look every `tick` seconds.
    A run holds the write lock only for its one commit."""

    def __init__(self, calendar: Calendar, tick: float = 60.0) -> None:
        self.calendar = calendar
        self.tick = tick
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_due(self) -> list[str]:
        """Run every enabled source that is due; returns their names. One process at a
        time (gunicorn's workers each have a scheduler): the others skip this look."""
        folder = self.calendar.cache_dir / sourcestate.FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".run.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return []
            return self._run_due()

    def _run_due(self) -> list[str]:
        ran = []
        content = self.calendar.tree.root
        for name in source_names(content):
            try:
                source = load_source(content, name)
            except SourceError as exc:
                log.warning("%s", exc)
                continue
            if not source.enabled or not due(self.calendar, source):
                continue
            ran.append(name)
            try:
                outcome = run_source(self.calendar, source)
            except SourceError as exc:
                log.warning("source run failed: %s", exc)
                continue
            if outcome is not None and outcome.committed:
                log.info("%s", outcome.summary())
        return ran

    def _loop(self) -> None:
        while not self._stop.wait(self.tick):
            try:
                self.run_due()
            except Exception:  # one bad run must not end the schedule
                log.exception("scheduled source run")

    def start(self) -> None:
        if self._thread is None and source_names(self.calendar.tree.root):
            self._thread = threading.Thread(target=self._loop, name="sources", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
