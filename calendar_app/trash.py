"""`python -m calendar_app empty-trash`: remove trashed records for good.

Over HTTP, events, venues and organizers only ever go to the trash (as in the plugin).
This command deletes the files of those trashed long enough, in one git commit that
also retires their ids (`.retired-ids`) and unlinks them from the events that still
point at them.

A record's time in the trash counts from its file's last commit (the commit that
trashed it, through the interface or by hand), not from its `modified` key: hand edits
do not update `modified`, so a record trashed by hand yesterday could look years old.
A file with uncommitted changes is being worked on and is kept. Outside git, `modified`
is all there is.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from .model import dates
from .model.records import Record
from .model.resources import RESOURCES
from .store.locations import command_tree, default_users_file

if TYPE_CHECKING:
    from .wiring import Calendar


def last_change(calendar: Calendar, record: Record) -> dt.datetime | None:
    """When the record last changed (aware, UTC); None when it is changing now."""
    if calendar.tree.git_root is not None:
        return calendar.tree.committed_at(record.path)
    modified = record.get("modified")
    if not isinstance(modified, dt.datetime):
        return None
    zone = dates.zone(calendar.service.site_zone_name)
    return dates.to_utc(modified, zone).replace(tzinfo=dt.UTC)


def expired_trash(calendar: Calendar, older_than: dt.timedelta) -> list[Record]:
    """Trashed records whose last change is older than `older_than`."""
    cutoff = calendar.clock() - older_than
    out = []
    for resource in RESOURCES.values():
        if not resource.trashable:
            continue
        for record in calendar.catalog.all(resource.name):
            changed = last_change(calendar, record) if record.status == "trash" else None
            if changed is not None and changed < cutoff:
                out.append(record)
    return out


def empty_trash(calendar: Calendar, older_than: dt.timedelta) -> list[Record]:
    """Remove the expired trash in one commit; returns the records removed."""
    expired = sorted(expired_trash(calendar, older_than), key=lambda r: r.id)
    if not expired:
        return []

    def describe(removed: list[Record]) -> str:
        lines = "\n".join(f'{r.collection}: "{r.name}" (#{r.id})' for r in removed)
        return (f"trash: remove {len(removed)} records for good\n\n"
                f"In the trash for more than {older_than.days} days:\n{lines}")

    return calendar.service.remove_for_good(expired, describe)


def cmd_empty_trash(args: argparse.Namespace) -> int:
    from .wiring import open_calendar  # the server's parts: only when this command runs

    content, cache_dir = command_tree(args.content, args.cache_dir)
    calendar = open_calendar(content, default_users_file(), cache_dir,
                             index_in_background=False)
    try:
        removed = empty_trash(calendar, dt.timedelta(days=args.older_than))
    finally:
        calendar.close()
    if not removed:
        print(f"Nothing in the trash for more than {args.older_than} days.")
        return 0
    print(f"Removed {len(removed)} records for good (one commit): "
          + ", ".join(f"{r.collection} #{r.id}" for r in removed))
    return 0


def _days(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `empty-trash` to the `python -m calendar_app` command line."""
    parser = subparsers.add_parser(
        "empty-trash", help="remove trashed records for good",
        description="Delete the files of the events, venues and organizers that have been "
                    "in the trash for more than DAYS days (counted from the file's last "
                    "commit; files with uncommitted changes are kept), in one git commit "
                    "that retires their ids and unlinks them from events.")
    parser.add_argument("--content", type=Path, default=None,
                        help="content tree (default: as serve picks it)")
    parser.add_argument("--older-than", type=_days, required=True, metavar="DAYS")
    parser.add_argument("--cache-dir", default=None,
                        help="cache folder (default: next to the content tree)")
    parser.set_defaults(func=cmd_empty_trash)
