"""The commands `import tec|csv|ics`, `export csv|ics` and `sources run`.

Imports read their input first (network, parsing), then apply it as one commit by the
`import` user (sources: the `sources` user), or none. In a clone of a shared
repository the commit is pushed like a server write before the command exits
(docs/importing.md, "Shared remote"). Exit codes: 0 done, 1 the input could not be
read, some records were not imported (each named with its line) or the commit could
not be pushed (it stays in the clone), 2 a wrong option.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..store import sourcestate
from ..store.locations import command_tree, default_users_file
from ..store.users import User
from .apply import GONE, RULES, Options, Outcome, apply_batch
from .batch import Batch
from .media import discard

if TYPE_CHECKING:
    from ..catalog.reader import Reader
    from ..sync.settings import SyncSettings
    from ..wiring import Calendar

IMPORT_USER = User(0, "import", "editor", "import@calendar.invalid")


def _open(args: argparse.Namespace) -> Calendar:
    from ..sync.settings import SyncError
    from ..wiring import open_calendar  # the server's parts: only when a command runs

    content, cache_dir = command_tree(args.content, args.cache_dir)
    try:
        return open_calendar(content, default_users_file(), cache_dir,
                             index_in_background=False, sync=_shared(args, cache_dir))
    except SyncError as exc:
        raise SystemExit(f"error: {exc}") from None


def _shared(args: argparse.Namespace, cache_dir: Path) -> SyncSettings | None:
    """The shared remote a write command pushes to, as the server does (push "wait"):
    --remote, else $CALENDAR_REMOTE, else the one this clone is served with (its sync
    state); none for a dry run, --no-push, or a clone never served with a remote."""
    from ..sync.settings import SyncSettings
    from ..sync.state import STATE_FILE, read_state

    if not hasattr(args, "no_push") or args.dry_run or args.no_push:
        return None
    state = read_state(cache_dir / STATE_FILE)
    remote = args.remote or state.get("remote")
    if not remote:
        return None
    same = remote in (state.get("remote"), state.get("url"))
    branch = args.branch or (state.get("branch") if same else None) or "main"
    return SyncSettings(remote, branch, push="wait")


def _bring_in(calendar: Calendar) -> None:
    """Before a write command plans: the remote's commits integrated (and what an
    earlier run left unpushed pushed), so ids, slugs and records are the latest."""
    sync = calendar.remote_sync
    if sync is not None:
        result = sync.exchange()
        if result.state != "pushed":
            print(f"warning: {sync.remote}/{sync.branch} not brought in first: "
                  f"{result.error}; working on this clone as it is", file=sys.stderr)


def _push(calendar: Calendar, committed: bool) -> int:
    """After a write command: each commit was pushed as it was made (refused: fetched,
    rebased, pushed again); what is still not on the remote is tried once more here.
    1 (and the reason) when it is not there: the commits stay in this clone, pushed
    by the next run or the server's next exchange (`sync status` lists them)."""
    sync = calendar.remote_sync
    if sync is None:
        return 0
    left = sync.unpushed()
    if left:
        result = sync.exchange()
        still = sync.unpushed()
        if still:
            print(f"error: {len(still)} commit(s) not pushed to {sync.remote}/{sync.branch}: "
                  f"{result.error or 'the remote branch lacks them'}; they stay in this "
                  "clone (sync status) for the next run or the server to push",
                  file=sys.stderr)
            return 1
    if committed or left:
        print(f"pushed to {sync.remote}/{sync.branch}")
    return 0


def _say(outcome: Outcome, dry_run: bool) -> None:
    out = sys.stdout
    for record in outcome.created:
        print(f"{'would create' if dry_run else 'created'} {record.path}", file=out)
    for record in outcome.changed:
        print(f"{'would change' if dry_run else 'changed'} {record.path}", file=out)
    for record in outcome.cancelled:
        print(f"{'would cancel' if dry_run else 'cancelled'} {record.path}", file=out)
    for record in outcome.gone:
        print(f"gone at the source: {record.path} (kept as it is)", file=out)
    for text in outcome.duplicates:
        print(f"duplicate? {text} (see --merge-duplicates)", file=out)
    for text in outcome.merged:
        print(f"merged {text}", file=out)
    for problem in outcome.problems:
        where = f"line {problem.line}: " if problem.line and "line" not in problem.message else ""
        print(f"not imported: {where}{problem.message}", file=sys.stderr)
    if dry_run:
        print(f"{outcome.summary()}: dry run, nothing written", file=out)
    else:
        commit = "one commit" if outcome.committed else "no commit"
        print(f"{outcome.summary()} ({commit}; {outcome.unchanged} unchanged)", file=out)


def _apply(args: argparse.Namespace, calendar: Calendar, batch: Batch, source: str,
           files: list[str]) -> int:
    """Apply a batch read by a command; the state of the import is kept in the cache
    folder, like a source's, so keep-edits and re-imports work the same."""
    from ..model.errors import ApiError

    state = sourcestate.read(calendar.cache_dir, source)
    options = Options(source, args.update, args.status, args.gone,
                      merge_duplicates=args.merge_duplicates, dry_run=args.dry_run,
                      fingerprints=dict(state.get("fingerprints", {})), files=files)
    try:
        outcome = apply_batch(calendar.service, batch, options, IMPORT_USER)
    except (ApiError, ValueError) as exc:
        discard(calendar.tree.root, files)
        print(f"error: {source}: {getattr(exc, 'message', exc)}; nothing was written",
              file=sys.stderr)
        return 1
    if not outcome.committed:
        discard(calendar.tree.root, files)
    if not args.dry_run:
        sourcestate.write(calendar.cache_dir, source,
                          {**state, "last_run": calendar.clock().isoformat(), "error": "",
                           "fingerprints": outcome.fingerprints,
                           "last_summary": outcome.summary()})
    _say(outcome, args.dry_run)
    return max(1 if outcome.problems else 0, _push(calendar, outcome.committed))


def cmd_import(args: argparse.Namespace) -> int:
    from . import fetch
    from .sources import parse

    calendar = _open(args)
    _bring_in(calendar)
    try:
        if args.kind == "tec":
            from .tec import read_tec

            batch = read_tec(args.location, args.user or "", args.password or "",
                             progress=True)
            source = batch.origin
        else:
            location = args.location
            data = (fetch.get(location).body if fetch.is_url(location)
                    else fetch.read_file(Path(location)))
            source = location if fetch.is_url(location) else Path(location).name
            pairs = getattr(args, "map", None) or []
            bad = [m for m in pairs if "=" not in m]
            if bad:
                raise ValueError(f"--map {bad[0]}: write it as COLUMN=field")
            mapping = dict(m.split("=", 1) for m in pairs)
            batch = parse(args.kind, data, source, calendar, getattr(args, "type", "events"),
                          mapping)
    except (fetch.FetchError, ValueError) as exc:
        print(f"error: {exc}; nothing was written", file=sys.stderr)
        calendar.close()
        return 1
    files: list[str] = []
    try:
        if getattr(args, "media", False):
            from .media import download_images

            files = download_images(batch, calendar.tree.root)
        return _apply(args, calendar, batch, source, files)
    finally:
        calendar.close()


def cmd_export(args: argparse.Namespace) -> int:
    calendar = _open(args)
    try:
        if args.kind == "csv":
            from .csvio import export_csv

            catalog = calendar.catalog
            records = sorted(catalog.all(args.type), key=lambda r: r.id)
            names = {c: {r.slug: r.name for r in catalog.all(c)}
                     for c in ("venues", "organizers", "categories", "tags")}
            text = export_csv(records, args.type, names)
        else:  # the site's feed writer, handed down by cli.py (site is no layer below)
            text = args.render(calendar.reader)
    finally:
        calendar.close()
    if args.out:
        Path(args.out).write_text(text, "utf-8", newline="")
    elif hasattr(sys.stdout, "buffer"):  # UTF-8 whatever the terminal's locale says
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(text)
    return 0


def cmd_sources_run(args: argparse.Namespace) -> int:
    from .sources import SourceError, load_source, run_source, source_names

    calendar = _open(args)
    _bring_in(calendar)
    failed = 0
    committed = False
    try:
        names = [args.name] if args.name else source_names(calendar.tree.root)
        if not names:
            print(f"no sources in {calendar.tree.root / 'sources'}")
        for name in names:
            try:
                outcome = run_source(calendar, load_source(calendar.tree.root, name),
                                     args.dry_run, args.merge_duplicates)
            except SourceError as exc:
                print(f"error: {exc}; nothing was written", file=sys.stderr)
                failed += 1
                continue
            if outcome is None:
                print(f"{name}: not modified since the last run")
            else:
                _say(outcome, args.dry_run)
                failed += bool(outcome.problems)
                committed |= outcome.committed
        failed += _push(calendar, committed)
    finally:
        calendar.close()
    return 1 if failed else 0


def _common(parser: argparse.ArgumentParser, writes: bool = True) -> None:
    parser.add_argument("--content", type=Path, default=None,
                        help="content tree (default: as serve picks it)")
    parser.add_argument("--cache-dir", default=None,
                        help="cache folder (default: next to the content tree)")
    if not writes:
        return
    parser.add_argument("--dry-run", action="store_true",
                        help="print what would change and every row or record that cannot "
                             "be read; write nothing")
    parser.add_argument("--merge-duplicates", action="store_true",
                        help="an event already here from another source is not made again; "
                             "the decision is kept in sources/merges.yaml")
    env = os.environ.get
    parser.add_argument("--remote", default=env("CALENDAR_REMOTE"), metavar="URL_OR_NAME",
                        help="push the commit to this shared repository, as the server "
                             "pushes a write (default: $CALENDAR_REMOTE, else the remote "
                             "the clone is served with)")
    parser.add_argument("--branch", default=env("CALENDAR_BRANCH"),
                        help="the remote's branch (default: $CALENDAR_BRANCH, else the "
                             "served one, else main)")
    parser.add_argument("--no-push", action="store_true",
                        help="commit in this clone only, even with a shared remote")


def register(sub: argparse._SubParsersAction, export_ics: Callable[[Reader], str]) -> None:
    """`export_ics(reader)`: the calendar as iCalendar text (site/export.py)."""
    imp = sub.add_parser("import", help="import a plugin site, a CSV or iCalendar file",
                         description="Import records as one commit; again later, the same "
                                     "records are updated, never duplicated.")
    kinds = imp.add_subparsers(dest="kind", required=True)
    tec = kinds.add_parser("tec", help="a site running The Events Calendar (or this app)")
    tec.add_argument("location", metavar="URL")
    tec.add_argument("--user", help="with --password: drafts and private records too")
    tec.add_argument("--password", help="an application password of --user")
    tec.add_argument("--media", action="store_true",
                     help="download images into media/ (else they stay URLs)")
    csv_ = kinds.add_parser("csv", help="a CSV file in the plugin importer's columns")
    csv_.add_argument("location", metavar="FILE")
    csv_.add_argument("--type", choices=("events", "venues", "organizers"), default="events")
    csv_.add_argument("--map", action="append", metavar="COLUMN=field",
                      help="read another column name as this field (repeatable)")
    ics = kinds.add_parser("ics", help="an iCalendar file or URL (webcal:// too)")
    ics.add_argument("location", metavar="FILE_OR_URL")
    for parser in (tec, csv_, ics):
        _common(parser)
        parser.add_argument("--update", choices=RULES, default="overwrite",
                            help="records imported before: the source wins (overwrite), "
                                 "fields edited here stay (keep-edits), or untouched")
        parser.add_argument("--status", choices=("publish", "draft", "pending", "private"),
                            help="status of new records (default: the source's)")
        parser.add_argument("--gone", choices=GONE, default="cancel",
                            help="events the source no longer has: cancel or report")
        parser.set_defaults(func=cmd_import)
    exp = sub.add_parser("export", help="write the calendar as CSV or iCalendar")
    ekinds = exp.add_subparsers(dest="kind", required=True)
    ecsv = ekinds.add_parser("csv", help="in the plugin importer's columns")
    ecsv.add_argument("--type", choices=("events", "venues", "organizers"), default="events")
    eics = ekinds.add_parser("ics", help="one VEVENT per event, a series as one")
    eics.set_defaults(render=export_ics)
    for parser in (ecsv, eics):
        _common(parser, writes=False)
        parser.add_argument("--out", help="file to write (default: standard output)")
        parser.set_defaults(func=cmd_export)
    src = sub.add_parser("sources", help="import sources kept in sources/NAME.yaml")
    actions = src.add_subparsers(dest="action", required=True)
    run = actions.add_parser("run", help="run one source, or all, now")
    run.add_argument("name", nargs="?")
    _common(run)
    run.set_defaults(func=cmd_sources_run)
