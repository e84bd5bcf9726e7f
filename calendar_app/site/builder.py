"""The build: plan every output, render and write only what changed, remove the rest."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import TextIO

from ..catalog.catalog import Catalog, Problem, paused_gc
from ..catalog.reader import Reader, open_reader
from ..model import dates, markup
from ..model.findings import key_line
from ..model.records import Record
from ..model.settings import DEFAULT_SETTINGS, setting_number
from ..model.settings import setting_problems as settings_problems
from ..store import parallel
from ..store.content import SETTINGS_FILE
from ..store.locations import DEFAULT_BASE_PATH, default_cache_dir
from ..store.starter import BUNDLED_CONTENT
from . import ahead, embeds, feeds, ical, manifest, paths, placement, safety, search, views, writer
from .memo import BuildRepresenter, CountingCatalog
from .model import EventView, SiteModel
from .outstore import OutputStore
from .pages import Pages, event_deps
from .plan import Output, catalog_digest, fingerprint, signature
from .progress import Progress
from .render import make_environment, templates_digest
from .snapshots import ListSnapshotError, ListSnapshots, single_outputs, single_paths
from .stash import Stash
from .vevents import Vevents

BUILDER_VERSION = "4"  # a new version rebuilds everything, caches included
PARALLEL_MIN = 2000  # outputs to render before forking is worth it (~20 ms a fork)
DEFAULT_OUT = Path("public")
LOCALHOST_URL = "http://localhost/"  # where links point when calendar.yaml has no url


@dataclass
class Options:
    content: Path = BUNDLED_CONTENT
    out: Path = DEFAULT_OUT
    templates: Path | None = None
    base_url: str | None = None
    locale: str | None = None  # --locale: instead of calendar.yaml's (docs/i18n.md)
    now: dt.datetime | None = None  # fixed "now" (tests); default the system clock
    cache_dir: Path | None = None
    # Compiled templates (render.CompiledTemplates); builds may share one (the tests do).
    compiled_templates: Path | None = None
    progress: bool = True
    stream: TextIO | None = None
    # A record file that fails to parse or validate stops the build before anything is
    # written, unless this is set: then it is reported and left out (--keep-going; a
    # running builder, --watch, also keeps the last good outputs of a file it saw work).
    keep_going: bool = False
    # Write into a folder that no build made, or remove more files of the last build
    # than this one makes (safety.py); without it such a build writes nothing.
    force: bool = False


@dataclass
class Report:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0  # rendered, same bytes as on disk
    skipped: int = 0  # dependencies unchanged: not even rendered
    removed: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # outputs outside the output folder
    kept: list[str] = field(default_factory=list)  # last good outputs of broken files
    stopped: bool = False  # problems and no keep_going: nothing was written
    declined: str = ""  # why the build wrote nothing although records were fine (safety)
    seconds: float = 0.0

    def summary(self) -> str:
        if self.declined:
            return f"stopped: {self.declined}; nothing written"
        if self.stopped:
            return (f"stopped: {len(self.problems)} problem(s), nothing written "
                    f"(--keep-going builds the rest)")
        kept = f", {len(self.kept)} kept from before" if self.kept else ""
        refused = f", {len(self.refused)} refused" if self.refused else ""
        return (f"{len(self.written)} written, {self.skipped + self.unchanged} skipped "
                f"({self.unchanged} re-rendered unchanged), {len(self.removed)} removed"
                f"{refused}{kept}, {len(self.problems)} problem(s) in {self.seconds:.2f} s")


# Fields whose change shows in an event's own outputs and the lists that carry it,
# but never moves the event (dates, links, slug, status) nor changes which outputs
# exist: an edit limited to these takes the incremental path below.
CONTENT_FIELDS = frozenset({"title", "description", "excerpt", "cost", "currency_symbol",
                            "currency_position", "website", "modified", "show_map_link",
                            "online_url", "performer"})


@dataclass
class _Last:
    """The last full plan, kept by --watch: outputs and which of them show each record."""
    model: SiteModel
    pages: Pages
    outputs: list[Output]
    common: bytes
    fingerprints: dict[int, bytes]

    @cached_property
    def shown_by(self) -> dict[int, list[int]]:
        """Record id -> indexes of the outputs that show it (made at the first edit)."""
        found: dict[int, list[int]] = {}
        for index, output in enumerate(self.outputs):
            for record_id in set(output.deps):
                found.setdefault(record_id, []).append(index)
        return found


class Builder:
    """One output folder from one calendar; keep it around to rebuild (--watch)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.out = Path(options.out).resolve()
        safety.check_content(Path(options.content))  # before the cache folder is made
        self.cache_dir = Path(options.cache_dir or default_cache_dir(Path(options.content)))
        # The records and the clock; no index, journal or users: nothing here serves.
        self.reader: Reader = open_reader(Path(options.content), self.cache_dir, options.now)
        self.env = make_environment(options.templates, Path(
            options.compiled_templates or self.cache_dir / "site-templates"))
        self._templates_seen = ""
        # VEVENT bytes by event id (with the signature they were made for: base URL,
        # templates and records), and Markdown renderings: kept between runs in the
        # cache folder, whatever the output folder.
        self.vevents = Stash(self.cache_dir / "site-vevents.pickle")
        self.renderings = Stash(self.cache_dir / f"site-markup-{markup.fingerprint()}.pickle")
        # Outputs by signature: a build into an empty folder links them, no rendering.
        self.store = OutputStore(self.cache_dir / "site-outputs")
        self.lists = None
        self.workers = parallel.default_workers()
        self._fps: dict[int, tuple[Record, bytes]] = {}
        self._last: _Last | None = None
        self._vevents_of: Vevents | None = None  # the last full plan's
        self._ahead: Callable[[], None] | None = None  # items, VEVENTs made while planning
        self._sig_inputs: tuple[dict[int, bytes], bytes] = ({}, b"")
        self._manifest: tuple[tuple[int, int] | None, dict[str, list[str]]] = (None, {})
        self._previous: dict[str, list[str]] = {}
        self._on_disk: dict[str, str] = {}  # output -> digest, written or checked this build
        self._vevents_before: dict[int, tuple[str, bytes]] = {}
        # Broken record file -> the outputs its last good version had (keep_going).
        self._last_good: dict[str, set[str]] = {}

    def base_url(self) -> str:
        url = self.options.base_url or str(self.reader.catalog.settings.get("url") or "")
        return (url or LOCALHOST_URL).rstrip("/") + "/"

    # -- the build -----------------------------------------------------------------
    def build(self) -> Report:
        started = time.perf_counter()
        report = Report()
        catalog = self.reader.catalog
        with catalog.lock:
            report.problems = sorted([*catalog.problems.values(), *setting_problems(catalog)],
                                     key=lambda p: p.path)
            if report.problems and not self.options.keep_going:
                report.stopped = True
            else:
                try:
                    if not self.options.force:
                        safety.check_output(self.out)
                    self._build(report)
                except safety.BuildRefused as exc:
                    report.declined = str(exc)
                    self._last = None  # the plan was not written: plan in full next time
                finally:
                    self._take_ahead()  # reaps the child if the build stopped first
        report.seconds = time.perf_counter() - started
        return report

    def _build(self, report: Report) -> None:
        catalog = self.reader.catalog
        base_url = self.base_url()
        now = self.reader.clock()
        fingerprints = self._fingerprints(catalog)
        common = self._common_digest(catalog, base_url, now)
        # What VEVENT signatures are made of, when _ical's closures need one.
        self._sig_inputs = (fingerprints, common)
        self._previous = previous = self._load_manifest()
        self._on_disk = {}
        outputs = self._fast_plan(catalog, fingerprints, common, now)
        full = outputs is None
        keep: set[str] = set()
        if outputs is None:
            keep = self._keep_last_good(catalog)
            outputs = self._full_plan(catalog, base_url, now, fingerprints, common)
        current, todo = self._outputs_to_render(outputs, full, fingerprints, common, report)
        if full and not self.options.force:
            safety.check_removals(self.out, len(set(previous) - set(current) - keep),
                                  len(current))
        self._render_and_write(todo, current, report)
        if full:
            self._remove_unmade(current, keep, report)
        self.out.mkdir(parents=True, exist_ok=True)
        if current != previous or not (self.out / manifest.NAME).exists():
            manifest.save(self.out, current)
        self._manifest = (self._manifest_stamp(), current)
        if full and self._last is not None:  # every record is in the model: forget others
            self.vevents.keep_only({e.id for e in self._last.model.events})
            self.renderings.keep_only(_texts(self._last.model))
            self.store.keep_only({sig for sig, _ in current.values()})
        # The caches (megabytes) are written by close(), once per session: not after
        # each --watch rebuild.

    def _common_digest(self, catalog: Catalog, base_url: str, now: dt.datetime) -> bytes:
        """What every output's signature includes besides its records."""
        site_tz = dates.zone(str(catalog.settings.get("timezone") or "UTC"))
        today = dates.from_utc(now.astimezone(dt.UTC).replace(tzinfo=None), site_tz).date()
        settings = repr((sorted(catalog.settings.items()), self.options.locale))
        return hashlib.blake2b(
            # The header's "Month" link is on every page: a new month rebuilds all.
            f"{BUILDER_VERSION}\0{base_url}\0{self._templates()}\0"
            f"{paths.month(today)}\0{settings}".encode(), digest_size=16).digest()

    def _full_plan(self, catalog: Catalog, base_url: str, now: dt.datetime,
                   fingerprints: dict[int, bytes], common: bytes) -> list[Output]:
        """Every output of the site, planned from all records; kept as _last (--watch)."""
        self._last = None
        rep = BuildRepresenter(CountingCatalog(catalog),  # type: ignore[arg-type]
                               base_url, base_url.rstrip("/") + DEFAULT_BASE_PATH)
        model = SiteModel(rep.catalog, rep, now, self.options.locale)  # type: ignore[arg-type]
        model.api_rep = BuildRepresenter(rep.catalog, _api_public_url(catalog, base_url),
                                         rep.rest_root)
        pages = Pages(model, self.env, base_url)
        self._vevents_of = Vevents(self.vevents, model, base_url, lambda: self._sig_inputs)
        if self.workers > 1 and not self._previous and self.store.empty():  # a cold build
            self._ahead = ahead.start(pages, self._vevents_of)
        with paused_gc():  # 47,000 outputs kept: collections would find nothing
            outputs = list(self._plan(model, pages, fingerprints))
        outputs.append(feeds.sitemap(pages, outputs))
        self._last = _Last(model, pages, outputs, common, fingerprints)
        return outputs

    def _outputs_to_render(self, outputs: list[Output], full: bool,
                           fingerprints: dict[int, bytes], common: bytes, report: Report,
                           ) -> tuple[dict[str, list[str]], list[tuple[Output, str]]]:
        """The new manifest so far (path -> [signature, digest]) and the outputs whose
        signature changed, each with its new signature; refused and skipped ones counted.
        A cold build (no manifest, nothing stored) does all: signed where rendered, ""."""
        previous = self._previous
        # An incremental plan checks only some outputs: the others stay as they were.
        current: dict[str, list[str]] = {} if full else dict(previous)
        todo: list[tuple[Output, str]] = []
        seen: set[str] = set()
        # 51,000 signatures at 10,000 events: half a second of the serial start.
        deferred = not previous and self.store.empty()
        for output in outputs:
            if output.path in seen:
                log.warning("two outputs at %s; keeping the first", output.path)
                continue
            try:
                paths.contained(output.path)
            except paths.OutsideOutput as exc:  # the writer would refuse it too
                report.refused.append(str(exc))
                continue
            seen.add(output.path)
            sig = "" if deferred else signature(output, fingerprints, common)
            old = previous.get(output.path)
            if old is not None and old[0] == sig:
                current[output.path] = old
                report.skipped += 1
            else:
                current[output.path] = [sig, old[1] if old else ""]
                todo.append((output, sig))
        return current, todo

    def _render_and_write(self, todo: list[tuple[Output, str]],
                          current: dict[str, list[str]], report: Report) -> None:
        """Render the outputs to do (over the processes), write those whose bytes changed
        and note each one's digest in current."""
        previous = self._previous
        progress = Progress(len(todo), self.options.stream, self.options.progress)
        # Stored outputs are linked: Markdown renderings and VEVENTs are read only when
        # something is left to render (here, before the processes fork).
        if any(self.store.digest(sig) is None for _, sig in todo):
            markup.remember(self.renderings.data)
            self.vevents.data  # noqa: B018 (read now)
            self._take_ahead()
        # Feeds concatenate the VEVENTs made with each event's .ics: once those are merged
        # here, dealt out by size. An event's page, .ics and JSON sit together: its
        # Markdown is converted once (markup's cache holds < 10,000 texts), not per output.
        early = sorted((item for item in todo if item[0].kind != "ics-feed"),
                       key=lambda item: item[0].deps[0] if item[0].deps else -1)
        after = [item for item in todo if item[0].kind == "ics-feed"]
        workers = self.workers if len(early) >= PARALLEL_MIN else 1
        results = []
        for share, place in ((early, None), (after, placement.balanced(after, workers))):
            self._vevents_before = dict(self.vevents.data) if self.vevents.loaded else {}
            if place is None:  # taken as each process is free: they end together
                results += parallel.run_pulled(share, self._render_one, workers,
                                               self._made_here, self._merge_made,
                                               progress.step)
            else:
                results += parallel.run(share, self._render_one, place, workers=workers,
                                        collect=self._made_here, merge=self._merge_made,
                                        step=progress.step)
        self.renderings.update(markup.learned())
        stored = {}
        for (output, _), (sig, digest, written, warning, kept) in zip(early + after, results):
            if warning is not None:
                # The live list code is someone else's and may be mid-change: the
                # site is still worth having; say so and retry on the next build.
                report.warnings.append(warning)
                current.pop(output.path, None)
                if previous.get(output.path):
                    current[output.path] = previous[output.path]
                continue
            if written:
                report.written.append(output.path)
            else:
                report.unchanged += 1
            current[output.path] = [sig, digest]
            if kept:
                stored[sig] = digest
        self.store.add(stored)
        progress.close()

    def _remove_unmade(self, current: dict[str, list[str]], keep: set[str],
                       report: Report) -> None:
        """After a full plan: remove the last build's outputs that no record makes now,
        but keep those of broken record files (keep_going)."""
        previous = self._previous
        for path in sorted(set(previous) - set(current)):
            if path in keep:  # its record's file is broken: the last good page stays up
                current[path] = previous[path]
                report.kept.append(path)
                continue
            try:
                writer.remove(self.out, path)
            except paths.OutsideOutput as exc:  # a manifest edited by hand
                report.refused.append(str(exc))
                continue
            report.removed.append(path)

    def _keep_last_good(self, catalog: Catalog) -> set[str]:
        """The outputs to keep although no record makes them now: those of record files
        that worked in an earlier build of this builder and are broken now."""
        broken = catalog.problems.keys()
        self._last_good = {p: kept for p, kept in self._last_good.items() if p in broken}
        last = self._last
        if broken and last is not None:
            model = last.model
            for record in (*(e.record for e in model.events), *model.venues,
                           *model.organizers, *model.categories, *model.tags):
                if record.path in broken:
                    self._last_good[record.path] = _own_outputs(last, record)
        return set().union(*self._last_good.values())

    def _templates(self) -> str:
        """The templates' digest; compiled templates are dropped when it changes (the
        environment does not stat each template file at every render)."""
        digest = templates_digest(self.env)
        if digest != self._templates_seen:
            self.env.cache.clear()  # type: ignore[union-attr]
            self._templates_seen = digest
        return digest

    def _fast_plan(self, catalog: Catalog, fingerprints: dict[int, bytes], common: bytes,
                   now: dt.datetime) -> list[Output] | None:
        """After an edit of a few events' text (--watch): the outputs showing them, with
        the last plan's views updated in place. None when a full plan is needed."""
        last = self._last
        if last is None or last.common != common or set(fingerprints) != set(last.fingerprints):
            return None
        changed = [i for i, fp in fingerprints.items() if last.fingerprints[i] != fp]
        model = last.model
        views = {e.id: e for e in model.events}
        if not changed or len(changed) > 50:
            return None
        for record_id in changed:
            view, record = views.get(record_id), catalog.records[record_id]
            if view is None or record.status != view.record.status:
                return None
            if record_id in model.occurrences:  # its occurrences' views hold copies
                return None
            old, new = view.record.data, record.data
            if any(old.get(k) != new.get(k) for k in old.keys() | new.keys()
                   if k not in CONTENT_FIELDS):
                return None
        now_utc = now.astimezone(dt.UTC).replace(tzinfo=None)
        low, high = sorted((model.now_utc, now_utc))
        past = feed_past(catalog.settings)
        if any(low <= e.end_utc < high or low - past <= e.end_utc < high - past
               for e in model.listed):
            return None  # an event moved from upcoming to past, or out of the feeds
        model.now_utc = now_utc
        for record_id in changed:
            model.refresh_event(views[record_id], catalog.records[record_id])
            if self._vevents_of is not None:
                self._vevents_of.sigs.pop(record_id, None)
        last.fingerprints = fingerprints
        wanted = sorted({i for record_id in changed for i in last.shown_by.get(record_id, ())})
        # List snapshots are planned again below (the component's are signed by what
        # they hold, so they are among the changed records' outputs too).
        outputs = [last.outputs[i] for i in wanted if last.outputs[i].kind != "json-list"]
        # Lists snapshots answer from the whole catalog, the sitemap has every `modified`.
        if self.lists is not None:
            outputs += self.lists.outputs(self.reader, catalog_digest(fingerprints),
                                          now_utc.isoformat())
        last.outputs[-1] = feeds.sitemap(last.pages, last.outputs[:-1])
        outputs.append(last.outputs[-1])
        return outputs

    def _fingerprints(self, catalog: Catalog) -> dict[int, bytes]:
        # The catalog replaces a Record when its file changes (never edits one in
        # place): an unchanged object keeps its fingerprint from the last build.
        known = self._fps
        fresh: dict[int, tuple[Record, bytes]] = {}
        for record in catalog.records.values():
            old = known.get(record.id)
            fresh[record.id] = old if old is not None and old[0] is record else (
                record, fingerprint(record))
        self._fps = fresh
        return {i: fp for i, (_, fp) in fresh.items()}

    def _manifest_stamp(self) -> tuple[int, int] | None:
        try:
            stat = (self.out / manifest.NAME).stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _load_manifest(self) -> dict[str, list[str]]:
        """The last build's manifest: from memory when the file is still ours (--watch)."""
        stamp, outputs = self._manifest
        if stamp is not None and stamp == self._manifest_stamp():
            return outputs
        self._last = None  # the folder changed under us: plan everything again
        return manifest.load(self.out)

    def _render_one(self, item: tuple[Output, str]) -> tuple[str, str, bool, str | None, bool]:
        """Render (or link from the store) and write one output: (signature, content
        hash, written?, warning, stored now?)."""
        output, sig = item
        if not sig:  # not signed when planned (_outputs_to_render)
            sig = signature(output, *self._sig_inputs)
        old = self._previous.get(output.path)
        digest = self.store.digest(sig)
        if digest is not None:
            if old is not None and old[1] == digest and (self.out / output.path).exists():
                self._on_disk[output.path] = digest
                return sig, digest, False, None, False
            if self.store.link_out(sig, self.out, output.path):
                self._on_disk[output.path] = digest
                return sig, digest, True, None, False
        try:
            data = output.render()
        except ListSnapshotError as exc:
            return sig, "", False, str(exc), False
        # SHA-256 has CPU instructions on most machines: twice BLAKE2b's speed here
        # (500 MB of outputs at 10k events).
        digest = hashlib.sha256(data).hexdigest()[:32]
        written = False
        if old is None or old[1] != digest or not (self.out / output.path).exists():
            source = output.same_as
            if not (source and self._on_disk.get(source) == digest
                    and writer.link(self.out, source, output.path)):
                writer.write(self.out, output.path, data)
            written = True
        self._on_disk[output.path] = digest
        return sig, digest, written, None, self.store.keep(self.out, output.path, sig)

    def _take_ahead(self) -> None:
        if self._ahead is not None:
            self._ahead()
            self._ahead = None

    def _made_here(self) -> tuple[dict, dict]:
        """What a worker process added to the caches: VEVENTs (the parent's feeds need
        them) and Markdown renderings."""
        before = self._vevents_before
        made = self.vevents.data.items() if self.vevents.loaded else ()
        return ({i: v for i, v in made if before.get(i) is not v}, markup.learned())

    def _merge_made(self, made: tuple[dict, dict]) -> None:
        vevents, renderings = made
        self.vevents.update(vevents)
        self.renderings.update(renderings)

    def _plan(self, model: SiteModel, pages: Pages,
              fingerprints: dict[int, bytes]) -> Iterator[Output]:
        yield from chain(pages.outputs(), views.outputs(pages), embeds.outputs(pages))
        yield from search.outputs(pages)
        yield from feeds.assets(pages)
        yield from feeds.media(model)
        yield feeds.atom(pages)
        yield feeds.robots(pages)
        yield from self._ical(model, pages)
        yield from single_outputs(model)
        if self.lists is None:
            self.lists = ListSnapshots(pages.base_url)
        yield from self.lists.outputs(self.reader, catalog_digest(fingerprints),
                                      model.now_utc.isoformat())

    # -- iCalendar ---------------------------------------------------------------------
    def _ical(self, model: SiteModel, pages: Pages) -> Iterator[Output]:
        host = ical.uid_host(model.settings, pages.base_url)
        title = str(model.settings.get("title") or "Events")
        refresh = setting_number(model.settings, "feed_refresh_minutes")[0]
        since = model.now_utc - feed_past(model.settings)
        vevent: Vevents = self._vevents_of  # type: ignore[assignment] (_full_plan's)

        def deps(events: list[EventView]) -> tuple[int, ...]:
            return tuple(chain.from_iterable(event_deps(model, e) for e in events))

        def output(path: str, events: list[EventView], name: str) -> Output:
            # The events' ids are the shape: the day moves the window, this list shows it.
            # A series is one VEVENT with its rule, there while any of its dates is.
            events = feeds.series_once([e for e in events if e.end_utc >= since])
            return Output(path, deps(events), f"ics {host} {name} {[e.id for e in events]}",
                          lambda: ical.feed(events, name, vevent, model.site_tz, refresh,
                                            model.horizon_year), kind="ics-feed")

        def own(event: EventView) -> Output:
            # Named after the event: its title is read when rendering (the view may have
            # been updated since, Builder._fast_plan); the event is among the deps.
            return Output(event.ics_path, event_deps(model, event), f"ics {host} {title}",
                          lambda: ical.feed([event], f"{title}: {event.title_text}", vevent,
                                            model.site_tz, None, model.horizon_year), kind="ics")

        for event in model.events:
            yield own(event)
        yield from feeds.date_ics(pages, host, title)
        yield from feeds.period_ics(pages, host, title, vevent)
        # Every feed keeps the events of its last feed_past_days days: a subscriber's
        # calendar app drops what a feed no longer holds, yesterday's concert included.
        yield output(paths.ALL_ICS, model.listed, title)
        for record in (*model.venues, *model.organizers, *model.categories, *model.tags):
            folder = paths.folder(model.page_of(record))
            yield output(folder + "calendar.ics", model.events_of(record),
                         f"{title}: {record.name}")

    def close(self) -> None:
        self.vevents.save()
        self.renderings.save()
        self.store.save()


log = logging.getLogger(__name__)


def feed_past(settings: dict) -> dt.timedelta:
    """How long after its end an event stays in the iCalendar feeds."""
    return dt.timedelta(days=setting_number(settings, "feed_past_days")[0])


def setting_problems(catalog: Catalog) -> list[Problem]:
    """calendar.yaml's settings that are not allowed (the build uses their defaults)."""
    found = settings_problems(catalog.settings)
    if not found:
        return []
    path = catalog.tree.root / SETTINGS_FILE
    text = path.read_text("utf-8", "replace") if path.exists() else ""
    return [Problem(SETTINGS_FILE, key_line(text, key), f"{problem}; using "
                    f"{DEFAULT_SETTINGS.get(key, 'the locale’s')}") for key, problem in found]


def _own_outputs(last: _Last, record: Record) -> set[str]:
    """The outputs of a record alone, in the last plan: its page (and the list pages
    after the first), its .ics, its JSON snapshots and its image."""
    folder = paths.folder(last.model.page_of(record))
    own = {folder + "index.html", folder + "event.ics", folder + "calendar.ics",
           *single_paths(record)}
    own.update(o.path for o in last.outputs if o.path.startswith(folder + "page/"))
    own.update(o.path for o in last.model.occurrences.get(record.id, ()))
    image = record.get("image")
    if image and "://" not in str(image):
        own.add(str(image))
    return own


def _texts(model: SiteModel) -> set[str]:
    """Descriptions and excerpts of the records a build shows (renderings worth keeping)."""
    records = [*(e.record for e in model.events), *model.venues, *model.organizers]
    return {text for r in records for name in ("description", "excerpt")
            if isinstance(text := r.get(name), str)}


def _api_public_url(catalog: Catalog, base_url: str) -> str:
    """The permalink base the live API uses with SITE_URL = base_url (api.public_url)."""
    return str(catalog.settings.get("url") or base_url)


def build(options: Options) -> Report:
    builder = Builder(options)
    try:
        return builder.build()
    finally:
        builder.close()
