"""The build: plan every output, render and write only what changed, remove the rest."""

from __future__ import annotations

import datetime as dt
import hashlib
import inspect
import logging
import pickle
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from ..app import BUNDLED_CONTENT, DEFAULT_BASE_PATH, Calendar, default_cache_dir, open_calendar
from ..catalog import Catalog, Problem
from ..records import Record
from ..represent import Representer
from . import feeds, ical, manifest, paths, writer
from .model import EventView, SiteModel
from .pages import Pages, event_deps
from .plan import Output, fingerprint, signature
from .progress import Progress
from .render import make_environment, templates_digest
from .snapshots import ListSnapshotError, ListSnapshots, single_outputs

BUILDER_VERSION = "1"
DEFAULT_OUT = BUNDLED_CONTENT.parent / "public"


@dataclass
class Options:
    content: Path = BUNDLED_CONTENT
    out: Path = DEFAULT_OUT
    templates: Path | None = None
    base_url: str | None = None
    now: dt.datetime | None = None  # fixed "now" (tests); default the system clock
    cache_dir: Path | None = None
    progress: bool = True
    stream: TextIO | None = None


@dataclass
class Report:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0  # rendered, same bytes as on disk
    skipped: int = 0  # dependencies unchanged: not even rendered
    removed: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{len(self.written)} written, {self.skipped + self.unchanged} skipped "
                f"({self.unchanged} re-rendered unchanged), {len(self.removed)} removed, "
                f"{len(self.problems)} problem(s) in {self.seconds:.2f} s")


class _CountingCatalog:
    """The catalog with term counts memoized for one build: the representation asks
    for them once per embedded term per event, and each answer scans the term's
    events, which made full builds quadratic."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._counts: dict[int, int] = {}

    def __getattr__(self, name: str):
        return getattr(self._catalog, name)

    def term_count(self, record: Record) -> int:
        count = self._counts.get(record.id)
        if count is None:
            count = self._counts[record.id] = self._catalog.term_count(record)
        return count


class Builder:
    """One output folder from one calendar; keep it around to rebuild (--watch)."""

    def __init__(self, options: Options, calendar: Calendar | None = None) -> None:
        self.options = options
        self.out = Path(options.out).resolve()
        cache = options.cache_dir or default_cache_dir(Path(options.content))
        self.calendar = calendar or _open(Path(options.content), cache, options.now)
        self.cache_dir = Path(self.calendar.cache_dir)
        self.env = make_environment(options.templates)
        self.vevents: dict[int, tuple[str, bytes]] = {}
        self._vevents_loaded = False
        self._vevents_dirty = False
        self.lists = None

    @property
    def vevent_cache(self) -> Path:
        digest = hashlib.blake2b(str(self.out).encode(), digest_size=6).hexdigest()
        return self.cache_dir / f"site-vevents-{digest}.pickle"

    def base_url(self) -> str:
        url = self.options.base_url or str(self.calendar.catalog.settings.get("url") or "")
        url = url or "http://localhost/"
        return url.rstrip("/") + "/"

    # -- the build -----------------------------------------------------------------
    def build(self) -> Report:
        started = time.perf_counter()
        report = Report()
        catalog = self.calendar.catalog
        with catalog.lock:
            report.problems = sorted(catalog.problems.values(), key=lambda p: p.path)
            self._build(report)
        report.seconds = time.perf_counter() - started
        return report

    def _build(self, report: Report) -> None:
        catalog = self.calendar.catalog
        base_url = self.base_url()
        rep = Representer(_CountingCatalog(catalog),  # type: ignore[arg-type]
                          base_url, base_url.rstrip("/") + DEFAULT_BASE_PATH)
        now = self.calendar.clock()
        model = SiteModel(rep.catalog, rep, now)  # type: ignore[arg-type]
        model.api_rep = Representer(rep.catalog, _api_public_url(catalog, base_url),
                                    rep.rest_root)
        fingerprints = {r.id: fingerprint(r) for r in catalog.records.values()}
        common = hashlib.blake2b(
            # The header's "Month" link is on every page: a new month rebuilds all.
            f"{BUILDER_VERSION}\0{base_url}\0{templates_digest(self.env)}\0"
            f"{paths.month(model.today)}\0"
            f"{sorted(catalog.settings.items())!r}".encode(), digest_size=16).digest()
        pages = Pages(model, self.env, base_url)
        outputs = list(self._plan(model, pages, fingerprints, common))
        outputs.append(feeds.sitemap(pages, outputs))

        previous = manifest.load(self.out)
        current: dict[str, list[str]] = {}
        todo: list[tuple[Output, str]] = []
        for output in outputs:
            if output.path in current:
                log.warning("two outputs at %s; keeping the first", output.path)
                continue
            sig = signature(output, fingerprints, common)
            old = previous.get(output.path)
            if old is not None and old[0] == sig:
                current[output.path] = old
                report.skipped += 1
            else:
                current[output.path] = [sig, old[1] if old else ""]
                todo.append((output, sig))
        progress = Progress(len(todo), self.options.stream, self.options.progress)
        for output, sig in todo:
            try:
                data = output.render()
            except ListSnapshotError as exc:
                # The live list code is someone else's and may be mid-change: the
                # site is still worth having; say so and retry on the next build.
                report.warnings.append(str(exc))
                current.pop(output.path, None)
                if previous.get(output.path):
                    current[output.path] = previous[output.path]
                continue
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            old = previous.get(output.path)
            if old is not None and old[1] == digest and (self.out / output.path).exists():
                report.unchanged += 1
            else:
                writer.write(self.out, output.path, data)
                report.written.append(output.path)
            current[output.path] = [sig, digest]
            progress.step()
        progress.close()
        for path in sorted(set(previous) - set(current)):
            writer.remove(self.out, path)
            report.removed.append(path)
        self.out.mkdir(parents=True, exist_ok=True)
        manifest.save(self.out, current)
        self._save_vevents()

    def _plan(self, model: SiteModel, pages: Pages, fingerprints: dict[int, bytes],
              common: bytes) -> Iterator[Output]:
        yield from pages.outputs()
        yield from feeds.assets(pages)
        yield from feeds.media(model)
        yield feeds.atom(pages)
        yield feeds.robots(pages)
        yield from self._ical(model, pages, fingerprints, common)
        yield from single_outputs(model)
        if self.lists is None:
            self.lists = ListSnapshots(self.calendar.tree.root, self.cache_dir,
                                       pages.base_url, self.options.now)
        catalog_digest = hashlib.blake2b(b"".join(
            fingerprints[i] for i in sorted(fingerprints)), digest_size=16).hexdigest()
        yield from self.lists.outputs(catalog_digest, model.now_utc.isoformat())

    # -- iCalendar ---------------------------------------------------------------------
    def _ical(self, model: SiteModel, pages: Pages, fingerprints: dict[int, bytes],
              common: bytes) -> Iterator[Output]:
        host = urlsplit(pages.base_url).hostname or "localhost"
        title = str(model.settings.get("title") or "Events")
        self._load_vevents()
        signatures: dict[int, str] = {}

        def vevent(event: EventView) -> bytes:
            sig = signatures[event.id]
            cached = self.vevents.get(event.id)
            if cached is None or cached[0] != sig:
                data = ical.vevent(event, model, host,
                                   pages.base_url + paths.folder(event.path))
                cached = self.vevents[event.id] = (sig, data)
                self._vevents_dirty = True
            return cached[1]

        def deps(events: list[EventView]) -> tuple[int, ...]:
            return tuple(i for e in events for i in event_deps(model, e))

        def output(path: str, events: list[EventView], name: str, kind: str) -> Output:
            return Output(path, deps(events), f"ics {host} {name} {[e.id for e in events]}",
                          lambda: ical.feed(events, name, vevent, model.site_tz), kind=kind)

        for event in model.events:
            probe = Output(event.ics_path, event_deps(model, event), f"vevent {host}",
                           lambda: b"")
            signatures[event.id] = signature(probe, fingerprints, common)
            yield output(event.ics_path, [event], f"{title}: {event.title_text}", "ics")
        yield output(paths.ALL_ICS, model.upcoming, title, "ics-feed")
        for record in (*model.venues, *model.organizers, *model.categories, *model.tags):
            folder = paths.folder(model.page_of(record))
            yield output(folder + "calendar.ics", model.upcoming_of(record),
                         f"{title}: {record.name}", "ics-feed")

    def _load_vevents(self) -> None:
        if self._vevents_loaded:
            return
        self._vevents_loaded = True
        try:
            with open(self.vevent_cache, "rb") as fh:
                self.vevents = pickle.load(fh)  # our own cache file, under our cache dir
        except (OSError, pickle.PickleError, EOFError, ValueError):
            self.vevents = {}

    def _save_vevents(self) -> None:
        if not self._vevents_dirty:
            return  # ~1 KB per event: rewriting it unchanged cost 10k-event rebuilds
        self._vevents_dirty = False
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.vevent_cache.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(self.vevents, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(self.vevent_cache)

    def close(self) -> None:
        if self.lists is not None:
            self.lists.close()
        close = getattr(self.calendar, "close", None)
        if close is not None:
            close()


log = logging.getLogger(__name__)


def _api_public_url(catalog: Catalog, base_url: str) -> str:
    """The permalink base the live API uses with SITE_URL = base_url: newer api.py
    takes it from calendar.yaml's `url` (public_url()), older from SITE_URL."""
    from .. import api

    if hasattr(api, "public_url"):
        return str(catalog.settings.get("url") or base_url)
    return base_url


def _open(content: Path, cache: Path, now: dt.datetime | None) -> Calendar:
    # A build needs neither a watcher nor a background search indexer; older
    # open_calendar() signatures have neither option.
    wanted = {"watch": False, "index_in_background": False}
    accepted = inspect.signature(open_calendar).parameters
    extra = {k: v for k, v in wanted.items() if k in accepted}
    return open_calendar(content, cache / "no-users.yaml", cache, now, **extra)


def build(options: Options) -> Report:
    builder = Builder(options)
    try:
        return builder.build()
    finally:
        builder.close()


def print_problems(report: Report, content: Path, stream: TextIO = sys.stderr) -> None:
    stream.writelines(f"warning: {w}\n" for w in report.warnings)
    stream.writelines(f"{content / problem.path}:{problem.line}: {problem.message}\n"
                     if problem.line else f"{content / problem.path}: {problem.message}\n" for problem in report.problems)
