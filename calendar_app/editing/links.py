"""Link fields on the editing pages: venue and organizer pickers (search as you type,
a new one made inline, a warning about a likely duplicate), categories as a tree, tags
by name. Files link by slug; forms post ids (or names, for tags) as the interface takes
them, so the service reads a form's links as it reads a request's.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from ..catalog.catalog import Catalog
from ..editorial.check import link_targets
from ..model.findings import ERROR, Finding, finding
from ..model.formats import digits
from ..model.records import Record
from ..model.resources import Field

if TYPE_CHECKING:
    from .controls import Control

_PICKED = re.compile(r".*\(#(\d+)\)\s*")  # "The Blue Lantern (#45)", as the picker fills it
# Words that do not tell two venues apart: "The Blue Lantern" is "Blue Lantern".
_FILLER = {"the", "a", "an", "la", "le", "les", "el", "der", "die", "das"}
NEW_FIELDS = {"venues": ("venue", "address", "city"), "organizers": ("organizer", "email")}
MAX_RESULTS = 10


def _target(f: Field) -> str:
    return f.link if f.type.control != "select" else "categories"


def pick_text(record: Record) -> str:
    return f"{record.name} (#{record.id})"


def shown(catalog: Catalog, f: Field, value: Any) -> Any:
    """A link field's shown value in the shape the form posts it: ids, tags' names."""
    kind = f.type.control
    if kind not in ("picker", "picker-multiple", "term-tree", "term-list", "select") \
            or not f.link:
        return value
    collection = _target(f)
    items = value if isinstance(value, list) else [value] if value else []
    found = [catalog.by_slug(collection, str(slug)) for slug in items]
    if kind == "term-list":
        return [r.name if r else str(s) for r, s in zip(found, items, strict=True)]
    ids = [str(r.id) if r else str(s) for r, s in zip(found, items, strict=True)]
    return ids if isinstance(value, list) else (ids[0] if ids else "")


def fill(catalog: Catalog, f: Field, ctl: Control) -> None:
    """What a link control offers: the picked records' names, the category tree, the
    tag names for autocompletion."""
    kind = f.type.control
    if not f.link:
        return
    collection = _target(f)
    ctl.extra["collection"] = collection
    if kind == "picker":
        text = str(ctl.value or "")
        record = catalog.get(int(text), collection) if digits(text) and len(text) < 16 \
            else None
        ctl.extra["text"] = pick_text(record) if record else text
        ctl.extra["new"] = NEW_FIELDS.get(collection, ())
    elif kind == "picker-multiple":
        picked = [catalog.get(int(v), collection) for v in ctl.value
                  if digits(str(v)) and len(str(v)) < 16]
        ctl.options = [(str(r.id), r.name) for r in picked if r is not None]
        ctl.extra["new"] = NEW_FIELDS.get(collection, ())
    elif kind == "term-tree":
        ctl.extra["tree"] = tree(catalog)
    elif kind == "select":
        ctl.options = [("", "None")] + [(str(r.id), "\u2014 " * depth + r.name)
                                         for r, depth in tree(catalog)]
    elif kind == "term-list":
        ctl.value = ", ".join(ctl.value) if isinstance(ctl.value, list) else ctl.value
        ctl.extra["names"] = sorted(r.name for r in catalog.all(collection))


def tree(catalog: Catalog) -> list[tuple[Record, int]]:
    """Categories in tree order with their depth (a loop's members shown at the top)."""
    children: dict[str | None, list[Record]] = {}
    slugs = {r.slug for r in catalog.all("categories")}
    for record in catalog.all("categories"):
        parent = record.get("parent")
        children.setdefault(parent if parent in slugs else None, []).append(record)
    out: list[tuple[Record, int]] = []
    seen: set[int] = set()

    def walk(parent: str | None, depth: int) -> None:
        for record in sorted(children.get(parent, []), key=lambda r: r.name.lower()):
            if record.id not in seen:
                seen.add(record.id)
                out.append((record, depth))
                walk(record.slug, depth + 1)

    walk(None, 0)
    out += [(r, 0) for r in catalog.all("categories") if r.id not in seen]
    return out


def posted(catalog: Catalog, f: Field, form: Any, value: Any) -> Any:
    """A link field's posted value as the interface takes it: picked texts to ids, a
    new venue or organizer as an inline body, tags split at commas."""
    kind = f.type.control
    if kind == "term-list":
        return [n.strip() for item in value for n in item.split(",") if n.strip()]
    if kind not in ("picker", "picker-multiple"):
        return value
    collection = _target(f)
    items = [resolve(catalog, collection, v) for v in (value if isinstance(value, list)
                                                        else [value] if value else [])]
    new = inline(form, f.name, collection)
    if new is not None:
        items.append(new)
    if kind == "picker":
        return items[-1] if items else ""
    return list(dict.fromkeys(i for i in items if isinstance(i, str))) + [
        i for i in items if isinstance(i, dict)]


def resolve(catalog: Catalog, collection: str, text: str) -> str:
    """The id a picker's text names: "Name (#id)", an id, or an exact name; else the
    text itself (the service answers that it names nothing)."""
    text = text.strip()
    found = _PICKED.fullmatch(text)
    if found:
        return found[1]
    if digits(text):
        return text
    wanted = text.casefold()
    match = [r for r in catalog.all(collection)
             if r.status != "trash" and r.name.strip().casefold() == wanted]
    return str(match[0].id) if len(match) == 1 else text


def inline(form: Any, name: str, collection: str) -> dict | None:
    """The new record typed into a picker's "new" fields, or None."""
    fields = NEW_FIELDS.get(collection, ())
    values = {k: str(form.get(f"{name}.new_{k}") or "").strip() for k in fields}
    if not fields or not values[fields[0]]:
        return None
    return {k: v for k, v in values.items() if v}


def key(name: str) -> str:
    """A name as compared for likely duplicates: case, accents, punctuation and filler
    words ("The") ignored."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = [w for w in re.findall(r"[a-z0-9]+", plain) if w not in _FILLER]
    return " ".join(words)


def likely_duplicates(catalog: Catalog, collection: str, name: str,
                      own_id: int | None = None) -> list[Record]:
    """Records of the collection a new one named so probably repeats."""
    wanted = key(name)
    if not wanted:
        return []
    return [r for r in catalog.all(collection) if r.id != own_id and r.status != "trash"
            and key(r.name) == wanted][:MAX_RESULTS]


def search(catalog: Catalog, collection: str, text: str, readable) -> list[Record]:
    """Records whose name has every typed word as a word prefix (as the interface's
    search matches), best first: names starting with the text, then the rest."""
    words = key(text).split()
    if not words:
        return []
    starts, others = [], []
    for record in catalog.all(collection):
        if record.status == "trash":
            continue
        name = key(record.name)
        parts = name.split()
        if all(any(p.startswith(w) for p in parts) for w in words) and readable(record):
            (starts if name.startswith(words[0]) else others).append(record)
            if len(starts) >= MAX_RESULTS:
                break
    found = sorted(starts, key=lambda r: r.name.lower()) + sorted(
        others, key=lambda r: r.name.lower())
    return found[:MAX_RESULTS]


def dangling(record: Record, catalog: Catalog, made: list[Record]) -> list[Finding]:
    """`check`'s dangling-link findings for one record against the catalog (and the
    records its save would make), in check's words."""
    out = []
    new = {(r.collection, r.slug) for r in made}
    for key_, collection, slug in link_targets(record):
        if (collection, slug) in new or catalog.by_slug(collection, slug) is not None:
            continue
        out.append(finding(record.path, 0, 0, ERROR, "dangling-link", f"dangling-{collection}",
                           key=key_, slug=repr(slug)))
    return out
