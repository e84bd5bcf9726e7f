"""CSV in and out, in the columns of the plugin's own CSV importer.

The column names are those the plugin's importer documents (its knowledge-base page
"CSV file examples for importing"): "Event Name", "Event Start Date", "Venue City"...
Other names are mapped with `--map COLUMN=field` (a field of ours or a plugin column).
A CSV row has no id: events are known by name and start, venues and organizers by
name, so exporting and importing again finds the same records.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
from collections.abc import Iterable

from ..model import dates, recurrence
from ..model.records import Record, stateprovince
from .batch import Batch, Incoming, Problem, Ref

# (column, field) in the plugin's order; a field of ours, or a rule named by "*".
EVENT_COLUMNS = (
    ("Event Name", "title"), ("Event Description", "description"),
    ("Event Excerpt", "excerpt"), ("Event Start Date", "*start_date"),
    ("Event Start Time", "*start_time"), ("Event End Date", "*end_date"),
    ("Event End Time", "*end_time"), ("All Day Event", "all_day"),
    ("Event Time Zone", "timezone"), ("Hide From Event Listings", "hide_from_listings"),
    ("Event Sticky in Month View", "sticky"), ("Event Venue Name", "*venue"),
    ("Event Organizer Name", "*organizer"), ("Event Show Map Link", "show_map_link"),
    ("Event Show Map", "show_map"), ("Event Cost", "cost"),
    ("Event Currency Symbol", "currency_symbol"),
    ("Event Currency Position", "currency_position"), ("Event Category", "*categories"),
    ("Event Tags", "*tags"), ("Event Website", "website"),
    ("Event Featured Image", "image"), ("Event Featured", "featured"),
    # Ours, after the plugin's (its importer ignores unknown columns): the recurrence
    # block as JSON, so a recurring series survives a round trip.
    ("Event Recurrence", "*recurrence"), ("Event Currency Code", "currency_code"),
    ("Event Online URL", "online_url"), ("Event Performer", "performer"),
)
VENUE_COLUMNS = (
    ("Venue Name", "venue"), ("Venue Description", "description"),
    ("Venue Country", "country"), ("Venue Address", "address"),
    ("Venue Address 2", "*address2"), ("Venue City", "city"),
    ("Venue State/Province", "*region"), ("Venue Zip", "zip"),
    ("Venue Latitude", "geo_lat"), ("Venue Longitude", "geo_lng"),
    ("Venue Phone", "phone"), ("Venue Website", "website"),
    ("Venue Featured Image", "image"),
    # Ours, after the plugin's (its importer ignores columns it does not know).
    ("Venue Excerpt", "excerpt"), ("Venue Show Map", "show_map"),
    ("Venue Show Map Link", "show_map_link"),
)
ORGANIZER_COLUMNS = (
    ("Organizer Name", "organizer"), ("Organizer Description", "description"),
    ("Organizer Email", "email"), ("Organizer Website", "website"),
    ("Organizer Phone", "phone"), ("Organizer Featured Image", "image"),
    ("Organizer Excerpt", "excerpt"),  # ours, after the plugin's
)
COLUMNS = {"events": EVENT_COLUMNS, "venues": VENUE_COLUMNS, "organizers": ORGANIZER_COLUMNS}
TITLE = {"events": "title", "venues": "venue", "organizers": "organizer"}
BOOLEANS = {"all_day", "hide_from_listings", "sticky", "show_map", "show_map_link", "featured"}
NUMBERS = {"geo_lat", "geo_lng"}
TRUE = {"1", "yes", "true", "y", "on"}
FALSE = {"0", "no", "false", "n", "off", ""}
MAX_FIELD = 1 << 20  # characters in one cell


class CsvError(Exception):
    """The file as a whole cannot be read (not one bad row)."""


def parse_map(pairs: Iterable[str], collection: str) -> dict[str, str]:
    """`--map COLUMN=field` options as {column (lower case): field or rule}."""
    known = dict(COLUMNS[collection])
    by_column = {c.lower(): f for c, f in COLUMNS[collection]}
    fields = set(known.values())
    out = {}
    for pair in pairs:
        column, sep, target = pair.partition("=")
        target = target.strip()
        if not sep or not column.strip() or not target:
            raise CsvError(f"--map {pair!r}: write it as COLUMN=field")
        if target.lower() in by_column:
            target = by_column[target.lower()]
        elif target not in fields:
            raise CsvError(f"--map {pair!r}: {target!r} is no field of {collection} "
                           f"(one of: {', '.join(sorted(f.lstrip('*') for f in fields))})")
        out[column.strip().lower()] = target
    return out


def read_csv(data: bytes, origin: str, collection: str, mapping: dict[str, str] | None = None,
             zone_name: str = "UTC") -> Batch:
    """One record per row; a row that cannot be read is a problem with its line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CsvError(f"{origin}: not UTF-8 text (byte {exc.start}); save it as UTF-8 "
                       "CSV") from None
    columns = {c.lower(): f for c, f in COLUMNS[collection]}
    columns.update(mapping or {})
    batch = Batch(origin)
    csv.field_size_limit(MAX_FIELD)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise CsvError(f"{origin}, line 1: {exc}") from None
    if not header:
        raise CsvError(f"{origin}: empty file")
    targets = [columns.get(h.strip().lower()) for h in header]
    if TITLE[collection] not in targets:
        raise CsvError(f"{origin}, line 1: no column for the {TITLE[collection]} (expected "
                       f"{COLUMNS[collection][0][0]!r}; see --map)")
    for name in sorted({h for h, t in zip(header, targets, strict=True) if t is None}):
        batch.problems.append(Problem(f"column {name!r} is not imported (see --map)", 1))
    seen: dict[str, Incoming] = {}
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            batch.problems.append(Problem(f"{origin}, line {line}: {exc}; the rest of the file "
                                          "is not read", line))
            break
        start, line = line, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        try:
            incoming = _row(collection, targets, row, start, zone_name)
        except ValueError as exc:
            batch.problems.append(Problem(f"{origin}, line {start}: {exc}", start))
            continue
        _add(batch, seen, incoming)
    return batch


def _add(batch: Batch, seen: dict[str, Incoming], incoming: Incoming) -> None:
    """The row's record, and the venues, organizers and terms it names (by name)."""
    fields = incoming.fields
    for name, collection in (("venue", "venues"), ("organizer", "organizers"),
                             ("categories", "categories"), ("tags", "tags")):
        names = fields.pop(f"*{name}", None)
        if not names:
            continue
        refs = []
        for item in names:
            key = f"{collection}/{item}"
            if key not in seen:
                title = TITLE.get(collection, "name")
                seen[key] = Incoming(collection, item, {title: item}, incoming.line)
                batch.records.append(seen[key])
            refs.append(Ref(collection, item))
        fields[name] = refs[0] if name == "venue" else refs
    key = f"{incoming.collection}/{incoming.source_id}"
    if key in seen:
        batch.problems.append(Problem(f"line {incoming.line}: the same {incoming.collection} "
                                      f"as line {seen[key].line}; not imported again",
                                      incoming.line, incoming.source_id))
        return
    seen[key] = incoming
    batch.records.append(incoming)


def _row(collection: str, targets: list[str | None], row: list[str], line: int,
         zone_name: str) -> Incoming:
    values: dict[str, str] = {}
    for target, cell in zip(targets, row, strict=False):
        if target is not None and cell.strip():
            values[target] = cell.strip() if target not in ("description", "excerpt") else cell
    if len(row) > len(targets):
        raise ValueError(f"{len(row)} cells, the header has {len(targets)}")
    title = values.get(TITLE[collection], "").strip()
    if not title:
        raise ValueError(f"no {TITLE[collection]}")
    fields: dict = {}
    for target, value in values.items():
        if target in BOOLEANS:
            if value.lower() not in TRUE | FALSE:
                raise ValueError(f"{target}: {value!r} is not yes or no")
            fields[target] = value.lower() in TRUE
        elif target in NUMBERS:
            try:
                fields[target] = float(value)
            except ValueError:
                raise ValueError(f"{target}: {value!r} is not a number") from None
        elif target in ("*venue", "*organizer", "*categories", "*tags"):
            fields[target] = [v.strip() for v in value.split(",") if v.strip()] if (
                target != "*venue") else [value]
        elif target == "performer" or target == "cost" and ";" in value:
            # Several names or prices: ";" parts them (names hold commas, "Smith, Ann").
            fields[target] = [v.strip() for v in value.split(";") if v.strip()]
        elif target == "*recurrence":
            try:
                fields["recurrence"] = json.loads(value)
            except ValueError:
                raise ValueError("recurrence: not JSON") from None
        elif not target.startswith("*"):
            fields[target] = value
    if "*region" in values:  # the plugin's one column: a US state, else a province
        us = fields.get("country", "") in ("", "US", "USA", "United States")
        fields["state" if us else "province"] = values["*region"]
    if "*address2" in values:
        fields["address"] = f"{fields.get('address', '')} {values['*address2']}".strip()
    source_id = title
    if collection == "events":
        _event_dates(fields, values, zone_name)
        source_id = f"{title} @ {dates.fmt(fields['start_date'])}"
    return Incoming(collection, source_id, fields, line)


def _event_dates(fields: dict, values: dict[str, str], zone_name: str) -> None:
    if "*start_date" not in values:
        raise ValueError("no start date")
    all_day = fields.get("all_day", False)
    start = _when("start", values["*start_date"], values.get("*start_time", ""), zone_name)
    end_day = values.get("*end_date") or values["*start_date"]
    end_time = values.get("*end_time", "")
    if not end_time and not values.get("*end_date") and "*start_time" in values:
        end_time = values["*start_time"]
    end = _when("end", end_day, end_time, zone_name)
    if all_day or "*start_time" not in values:
        # All day: a time left out is the day's start or end, one given is kept.
        fields["all_day"] = True
        if "*start_time" not in values:
            start = start.replace(hour=0, minute=0, second=0)
        if "*end_time" not in values:
            end = end.replace(hour=23, minute=59, second=59)
    if end < start:
        raise ValueError(f"the end ({dates.fmt(end)}) is before the start ({dates.fmt(start)})")
    fields["start_date"], fields["end_date"] = start, end


def _when(which: str, day: str, time: str, zone_name: str) -> dt.datetime:
    text = f"{day} {time}".strip()
    with contextlib.suppress(ValueError):  # the usual ISO form, without the full parser
        value = dt.datetime.fromisoformat(text)
        if value.tzinfo is None and dates.representable(value):
            return value.replace(microsecond=0)
    try:
        zone = dates.zone(zone_name)
        value = dates.parse_datetime(text, zone, dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    except (dates.DateError, ValueError) as exc:
        raise ValueError(f"{which}: {text!r} is not a date ({exc})") from None
    if not dates.representable(value):
        raise ValueError(f"{which}: {text!r} is outside {dates.KEPT_RANGE}")
    return value


# ------------------------------------------------------------------------ export
def export_csv(records: list[Record], collection: str, names: dict[str, dict[str, str]]) -> str:
    """`records` of `collection` as CSV in the plugin's columns; `names`: the names of
    linked records by collection and slug."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    columns = COLUMNS[collection]
    writer.writerow([c for c, _f in columns])
    for record in records:
        writer.writerow([_cell(record, field, names) for _c, field in columns])
    return out.getvalue()


def _cell(record: Record, field: str, names: dict[str, dict[str, str]]) -> str:
    data = record.data
    all_day = bool(data.get("all_day"))
    if field in ("*start_date", "*end_date"):
        return data[field[1:]].strftime("%Y-%m-%d")
    if field in ("*start_time", "*end_time"):
        time = data[field[1:].replace("_time", "_date")].strftime("%H:%M:%S")
        usual = "00:00:00" if field == "*start_time" else "23:59:59"
        return "" if all_day and time == usual else time
    if field == "*address2":
        return ""
    if field == "*region":
        return stateprovince(data)
    if field == "*recurrence":
        block = data.get("recurrence")
        return json.dumps(recurrence.as_json(block), ensure_ascii=False) if block else ""
    if field.startswith("*"):
        collection = {"*venue": "venues", "*organizer": "organizers"}.get(field, field[1:])
        value = data.get(field[1:])
        slugs = value if isinstance(value, list) else [value] if value else []
        return ", ".join(names.get(collection, {}).get(s, s) for s in slugs)
    value = data.get(field)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "; ".join(map(str, value))
    return "" if value is None else str(value)
