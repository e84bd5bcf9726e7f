"""Checks of one record file on its own: syntax, keys, types, dates, timezones.

The fast path is the app's own `records.from_file` on the C loader's result; only a
file it refuses gets the slower key-by-key diagnosis, so a clean tree costs one
parse per file.
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass, field

from ..model import dates, hints, records, slugs
from ..model.fieldtypes import DateTime
from ..model.findings import ERROR, WARNING, Finding, finding, key_line
from ..model.records import Record, RecordError
from ..model.resources import RESOURCES, Resource, yaml_fields
from ..store import yamlfile


@dataclass
class FileResult:
    record: Record | None = None
    raw_id: int | None = None  # the id written in the file, even when the record is invalid
    raw_slug: str | None = None
    # What could be read of an invalid file, so its links are still checked.
    partial: Record | None = None
    findings: list[Finding] = field(default_factory=list)


class _Collector:
    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self._text: str | None = None
        self.findings: list[Finding] = []

    @property
    def text(self) -> str:
        if self._text is None:  # decoded only for files that have something to report
            self._text = self.data.decode("utf-8", "replace")
        return self._text

    def add(self, severity: str, code: str, message: str, key: str = "", line: int = 0,
            column: int = 0) -> None:
        """A finding in words from elsewhere (a parser's, a field type's)."""
        if key and not line:
            line = key_line(self.text, key)
        self.findings.append(Finding(self.path, line, column, severity, code, message))

    def say(self, severity: str, code: str, at: str = "", line: int = 0, name: str = "",
            **values: object) -> None:
        """A finding worded by findings.MESSAGES[name or code]; at the line of key `at`."""
        if at and not line:
            line = key_line(self.text, at)
        self.findings.append(finding(self.path, line, 0, severity, code, name, **values))


def suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """The closest of `choices`, quoted ('x'), or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return repr(close[0]) if close else ""


def _aliases(resource: Resource) -> dict[str, str]:
    # Editors who know the interface write its names ("organizer", "venue"); point
    # them at the file's key.
    return {f.name: f.yaml_key for f in yaml_fields(resource) if f.name != f.yaml_key}


def check_file(collection: str, path: str, data: bytes, site_zone: str) -> FileResult:
    out = FileResult()
    c = _Collector(path, data)
    out.findings = c.findings
    try:
        raw, unreadable = yamlfile.load_partial(data)
    except yamlfile.YamlError as exc:
        c.add(ERROR, "yaml-syntax", exc.message, line=exc.line, column=exc.column)
        return out
    if isinstance(raw.get("id"), int) and not isinstance(raw.get("id"), bool):
        out.raw_id = raw["id"]
    stem = path.rsplit("/", 1)[-1].removesuffix(".yaml")
    out.raw_slug = str(raw["slug"]) if isinstance(raw.get("slug"), str | int) else stem
    by_key = {f.yaml_key: f for f in yaml_fields(RESOURCES[collection])}
    for key, err in unreadable:
        dated = key in by_key and isinstance(by_key[key].type, DateTime)
        c.add(ERROR, "invalid-date" if dated else "invalid-value",
              f"{key}: {err.message}" if key else err.message, line=err.line,
              column=err.column)
    try:
        if unreadable:  # the loader refuses the file: diagnose the rest of it
            raise RecordError(unreadable[0][1].message, unreadable[0][0])
        record = records.from_file(collection, raw, path)
    except RecordError as exc:
        values = _diagnose(collection, raw, c, exc, {k for k, _ in unreadable},
                           out.raw_slug)
        out.partial = Record(collection, {**values, "slug": out.raw_slug}, path)
        return out
    out.record = record
    _check_record(record, stem, site_zone, raw, c)
    return out


def _diagnose(collection: str, raw: dict, c: _Collector, exc: RecordError,
              unreadable: set[str], slug: str) -> dict:
    """Every problem of a file `from_file` refused (it stops at the first one); returns
    the values that are valid, by field name. Keys in `unreadable` are reported."""
    resource = RESOURCES[collection]
    by_key = {f.yaml_key: f for f in yaml_fields(resource)}
    aliases = _aliases(resource)
    before = len(c.findings)
    values: dict = {}
    for key, value in raw.items():
        field_ = by_key.get(key)
        if field_ is None:
            meant = aliases.get(key) or hints.key_meant(str(key), by_key)
            c.say(ERROR, "unknown-key", at=str(key), name="unknown-key-hint" if meant else "",
                  **{"key": repr(key), **({"meant": repr(meant)} if meant else {})})
            continue
        if value is None:
            continue
        try:
            # The app's own per-field coercion, so check and the interface agree.
            values[field_.name] = records._coerce(field_, value)
        except RecordError as err:
            code = err.code or field_.type.finding
            c.add(ERROR, code, err.message, line=records.line_of(c.text, key, err.at))
    for name in dict.fromkeys(("id", resource.title_field, *resource.required_fields)):
        key = resource.field(name).yaml_key
        if raw.get(key) is None and key not in unreadable:
            c.say(ERROR, "missing-key", line=1, key=repr(key))
    if not slugs.is_safe_slug(slug):
        c.add(ERROR, "bad-slug", slugs.unsafe_slug_message(slug), key="slug")
    start, end = values.get("start_date"), values.get("end_date")
    if collection == "events" and start and end and end < start:
        c.say(ERROR, "end-before-start", line=key_line(c.text, "end_date"),
              end=dates.fmt(end), start=dates.fmt(start))
    if len(c.findings) == before and not unreadable:  # a rule not diagnosed here yet
        code = "invalid-recurrence" if exc.key == "recurrence" else "invalid-record"
        c.add(ERROR, code, exc.message, line=records.line_of(c.text, exc.key, exc.at))
    return values


def _check_record(record: Record, stem: str, site_zone: str, raw: dict,
                  c: _Collector) -> None:
    if record.slug != stem:
        c.say(ERROR, "file-name", line=key_line(c.text, "slug"), file=repr(stem + ".yaml"),
              slug=repr(record.slug), wanted=repr(record.slug + ".yaml"))
    if record.collection == "events":
        _check_event(record, site_zone, c)
    for f in yaml_fields(record.resource):
        value = raw.get(f.yaml_key)
        if f.type.is_text and isinstance(value, int | float) and not isinstance(
                value, bool):
            written = c.text.split("\n")[key_line(c.text, f.yaml_key) - 1].split(":", 1)[-1]
            if written.split("#")[0].strip() != str(value):
                c.say(WARNING, "unquoted-number", line=key_line(c.text, f.yaml_key),
                      key=f.yaml_key, written=written.strip(), value=value)


def _check_event(record: Record, site_zone: str, c: _Collector) -> None:
    data = record.data
    name = data.get("timezone") or site_zone
    try:
        tz = dates.zone(name)
    except dates.DateError:
        c.say(ERROR, "unknown-timezone", name="unknown-event-timezone", zone=repr(name))
        return
    if not data.get("all_day"):
        for key in ("start_date", "end_date"):
            local: dt.datetime = data[key]
            if dates.in_dst_gap(local, tz):
                real = dates.from_utc(dates.to_utc(local, tz), tz)
                c.say(ERROR, "dst-gap", line=key_line(c.text, key), key=key,
                      time=dates.fmt(local), zone=name, real=dates.fmt(real))
            elif _ambiguous(local, tz):
                c.say(WARNING, "dst-ambiguous", line=key_line(c.text, key), key=key,
                      time=dates.fmt(local), zone=name)
    if data.get("event_status_reason") and data.get("event_status") in (None, "scheduled"):
        c.say(WARNING, "status-reason-unused", at="event_status_reason")
    if not data.get("venue") and not data.get("online_url") and record.status != "trash":
        c.say(WARNING, "no-venue", line=1)


def _ambiguous(local: dt.datetime, tz: dt.tzinfo) -> bool:
    try:
        return (local.replace(tzinfo=tz, fold=0).utcoffset()
                != local.replace(tzinfo=tz, fold=1).utcoffset())
    except (OverflowError, ValueError):
        return False
