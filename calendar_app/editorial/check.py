"""Checks of a whole content tree: every file on its own, then what only the tree as a
whole can show (duplicate ids and slugs, dangling links, category loops)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..catalog.catalog import EVENT_LINKS
from ..model import dates
from ..model.findings import ERROR, WARNING, Finding, finding, key_line, value_line
from ..model.ids import valid_id
from ..model.records import Record
from ..model.settings import setting_problems
from ..store import yamlfile
from .snapshot import Snapshot
from .validate import FileResult, check_file, suggest


@dataclass
class TreeResult:
    snapshot: Snapshot
    files: dict[str, FileResult] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    site_zone: str = "UTC"

    @property
    def records(self) -> list[Record]:
        return [r.record for r in self.files.values() if r.record is not None]

    def ids(self) -> set[int]:
        """Every id written in the tree, valid records or not (never hand these out);
        ids out of range are left out, as no new id can ever take them."""
        return {r.raw_id for r in self.files.values() if valid_id(r.raw_id)}


class ParseCache:
    """Per-file results keyed by (path, blob content): a diff parses shared files once."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, bytes, str], FileResult] = {}

    def get(self, collection: str, path: str, data: bytes, zone: str) -> FileResult:
        key = (path, data, zone)
        found = self._results.get(key)
        if found is None:
            found = self._results[key] = check_file(collection, path, data, zone)
        return found


def check_tree(snap: Snapshot, cache: ParseCache | None = None) -> TreeResult:
    cache = cache or ParseCache()
    out = TreeResult(snap)
    out.site_zone = _settings(snap, out.findings)
    for path, data in snap.records.items():
        out.files[path] = cache.get(snap.collection_of(path), path, data, out.site_zone)
    for path in snap.strays:
        out.findings.append(finding(path, 0, 0, WARNING, "not-a-record"))
    for path in snap.symlinks:
        out.findings.append(finding(path, 0, 0, ERROR, "symlink"))
    texts = _Texts(snap)
    _duplicates(out, texts)
    _links(out, texts)
    _parent_loops(out, texts)
    out.findings.extend(f for r in out.files.values() for f in r.findings)
    out.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code))
    return out


class _Texts:
    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap

    def line(self, path: str, key: str, value: str | None = None) -> int:
        text = self.snap.records[path].decode("utf-8", "replace")
        return value_line(text, key, value) if value else key_line(text, key)


def _settings(snap: Snapshot, findings: list[Finding]) -> str:
    if snap.settings is None:
        return "UTC"
    try:
        settings = yamlfile.load(snap.settings)
    except yamlfile.YamlError as exc:
        findings.append(Finding("calendar.yaml", exc.line, exc.column, ERROR, "yaml-syntax",
                                exc.message))
        return "UTC"
    text = snap.settings.decode("utf-8", "replace")
    for key, problem in setting_problems(settings):
        findings.append(Finding("calendar.yaml", key_line(text, key), 0, ERROR,
                                "bad-setting", problem))
    zone = settings.get("timezone") or "UTC"
    try:
        dates.zone(str(zone))
    except dates.DateError:
        findings.append(finding("calendar.yaml", key_line(text, "timezone"), 0, ERROR,
                                "unknown-timezone", zone=repr(zone)))
        return "UTC"
    return str(zone)


def _duplicates(out: TreeResult, texts: _Texts) -> None:
    by_id: dict[int, list[str]] = defaultdict(list)
    by_slug: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, result in out.files.items():
        if result.raw_id is not None:
            by_id[result.raw_id].append(path)
        if result.record is not None:
            by_slug[(result.record.collection, result.record.slug)].append(path)
    retired = out.snapshot.retired_ids()
    for record_id, paths in by_id.items():
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            if others:
                out.findings.append(finding(path, texts.line(path, "id"), 0, ERROR,
                                            "duplicate-id", id=record_id, others=others))
            if record_id in retired:
                out.findings.append(finding(path, texts.line(path, "id"), 0, ERROR,
                                            "retired-id", id=record_id))
    for (collection, slug), paths in by_slug.items():
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            if others:
                out.findings.append(finding(path, texts.line(path, "slug") or 1, 0, ERROR,
                                            "duplicate-slug", slug=repr(slug), others=others))


def link_targets(record: Record):
    """(field name, YAML key, target collection, slug) of every link in a record."""
    if record.collection == "events":
        for name, collection in EVENT_LINKS.items():
            value = record.data.get(name)
            key = record.resource.field(name).yaml_key
            for slug in value if isinstance(value, list) else [value] if value else []:
                yield key, collection, slug
    elif record.collection == "categories" and record.data.get("parent"):
        yield "parent", "categories", record.data["parent"]


def _links(out: TreeResult, texts: _Texts) -> None:
    index: dict[str, dict[str, Record]] = defaultdict(dict)
    for record in out.records:
        index[record.collection][record.slug] = record
    # Invalid files too: a broken date must not hide a broken link next to it.
    partial = [r.partial for r in out.files.values() if r.partial is not None]
    for record in [*out.records, *partial]:
        for key, collection, slug in link_targets(record):
            target = index[collection].get(slug)
            # Lines are looked up only for problems: most links are fine.
            def line() -> int:
                return texts.line(record.path, key, slug)  # noqa: B023
            if target is None:
                meant = suggest(slug, list(index[collection]))
                out.findings.append(finding(
                    record.path, line(), 0, ERROR, "dangling-link",
                    f"dangling-{collection}" + ("-hint" if meant else ""), key=key,
                    slug=repr(slug), **({"meant": meant} if meant else {})))
            elif target.status == "trash" and record.status != "trash":
                out.findings.append(finding(record.path, line(), 0, WARNING, "trashed-link",
                                            f"trashed-{collection}", key=key, slug=repr(slug)))


def _parent_loops(out: TreeResult, texts: _Texts) -> None:
    parents = {r.slug: r for r in out.records if r.collection == "categories"}
    reported: set[str] = set()
    for start in parents:
        seen: list[str] = []
        slug: str | None = start
        while slug in parents and slug not in seen:
            seen.append(slug)
            slug = parents[slug].data.get("parent")
        if slug is None or slug not in seen:
            continue
        loop = seen[seen.index(slug):]
        if reported.intersection(loop):
            continue
        reported.update(loop)
        chain = " -> ".join([*loop, loop[0]])
        for member in loop:
            record = parents[member]
            out.findings.append(finding(record.path, texts.line(record.path, "parent"), 0,
                                        ERROR, "parent-loop", chain=chain))
