"""`new`: a valid, canonical record file with the next free id, written exactly as the
interface would write it."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from ..model import dates, records, slugs
from ..model.clock import system_now
from ..model.records import RecordError
from ..model.resources import RESOURCES
from ..store import yamlfile
from ..sync.idlease import read_leases
from . import snapshot
from .check import check_tree
from .validate import suggest

_COLLECTIONS = {r.singular: r.name for r in RESOURCES.values()}


class ScaffoldError(ValueError):
    pass


def scaffold(content_dir: Path, args: argparse.Namespace,
             now: dt.datetime | None = None) -> Path:
    """Write the new record's file; returns its path."""
    root = Path(content_dir)
    collection = _COLLECTIONS[args.type]
    resource = RESOURCES[collection]
    tree = check_tree(snapshot.from_worktree(root))
    # 1 + max(every id in the tree, retired ids, the servers' leased blocks when the
    # leases ref was fetched): ids of invalid files count too.
    leased = [lease.last for lease in read_leases(root)]
    record_id = max({0, *tree.ids(), *tree.snapshot.retired_ids(), *leased}) + 1
    slugs_taken = {fr.raw_slug for p, fr in tree.files.items() if p.startswith(collection + "/")}
    base = args.slug or slugs.sanitize_title(args.title) or f"{resource.singular}-{record_id}"
    if not slugs.is_safe_slug(base):
        raise ScaffoldError(f"{base!r} is not a usable slug")
    slug = slugs.unique_slug(base, lambda s: s in slugs_taken)
    site_zone = tree.site_zone
    now = now or system_now()
    local_now = dates.from_utc(now.astimezone(dt.UTC).replace(tzinfo=None),
                               dates.zone(site_zone))
    data: dict = {"id": record_id, resource.field(resource.title_field).yaml_key: args.title,
                  "slug": slug}
    if resource.trashable:
        data.update(status=args.status, date=local_now, modified=local_now)
    index = {c: {r.slug for r in tree.records if r.collection == c} for c in RESOURCES}
    if collection == "events":
        data.update(_event_fields(args, site_zone, now, index))
    elif collection == "categories" and args.parent:
        _require(index, "categories", [args.parent])
        data["parent"] = args.parent
    folder = collection
    if collection == "events" and _uses_year_folders(root):
        folder += f"/{data['start_date'].year}"
    path = f"{folder}/{slug}.yaml"
    try:
        record = records.from_file(collection, data, path)
    except RecordError as exc:
        raise ScaffoldError(exc.message) from None
    target = root / path
    if target.exists():
        raise ScaffoldError(f"{target} already exists")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yamlfile.dump(records.to_file(record)), encoding="utf-8")
    return target


def _event_fields(args: argparse.Namespace, site_zone: str, now: dt.datetime,
                  index: dict[str, set[str]]) -> dict:
    if not args.start:
        raise ScaffoldError("an event needs --start")
    zone_name = args.timezone or site_zone
    try:
        tz = dates.zone(zone_name)
        start = dates.parse_datetime(args.start, tz, now)
        if args.end:
            end = dates.parse_datetime(args.end, tz, now)
        elif args.all_day:
            end = start.replace(hour=23, minute=59, second=59)
        else:
            end = start + dt.timedelta(hours=2)
    except dates.DateError as exc:
        raise ScaffoldError(str(exc)) from None
    if args.all_day:
        start = start.replace(hour=0, minute=0, second=0)
    if end < start:
        raise ScaffoldError("--end is before --start")
    for moment in (start, end):
        if not args.all_day and dates.in_dst_gap(moment, tz):
            raise ScaffoldError(f"{dates.fmt(moment)} does not exist in {zone_name} "
                                "(daylight saving time gap)")
    out: dict = {"start_date": start, "end_date": end, "all_day": args.all_day,
                 "timezone": zone_name}
    for key, collection, value in (("venue", "venues", [args.venue] if args.venue else []),
                                   ("organizers", "organizers", args.organizer),
                                   ("categories", "categories", args.category),
                                   ("tags", "tags", args.tag)):
        _require(index, collection, value)
        if value:
            out[key] = value[0] if key == "venue" else value
    if args.cost:
        out["cost"] = args.cost
    return out


def _require(index: dict[str, set[str]], collection: str, wanted: list[str]) -> None:
    for slug in wanted:
        if slug not in index[collection]:
            meant = suggest(slug, sorted(index[collection]))
            raise ScaffoldError(f"no {RESOURCES[collection].singular} with slug {slug!r}"
                                + (f" (did you mean {meant}?)" if meant else ""))


def _uses_year_folders(root: Path) -> bool:
    """Follow the tree's layout: events/<year>/ when it already has such folders."""
    folder = root / "events"
    return not folder.is_dir() or any(p.is_dir() and p.name.isdigit() for p in folder.iterdir())


