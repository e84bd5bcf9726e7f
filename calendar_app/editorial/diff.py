"""A calendar-aware summary of a change between two revisions of the content tree,
for a pull-request comment: what happened to events, venues, organizers and terms,
and which content problems the change introduces. Records are matched by id, so a
renamed file is a change, not a removal plus an addition."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..model import clock, rule_summary
from ..model.records import Record
from ..model.settings import recurrence_horizon
from ..store import yamlfile
from . import snapshot
from .check import ParseCache, TreeResult, check_tree

_TERMS = ("venues", "organizers", "categories", "tags")
_SCHEDULE = ("start_date", "end_date", "timezone", "all_day")
_PUBLIC = ("publish", "future")


@dataclass
class Summary:
    base_label: str
    head_label: str
    events: dict[str, list[dict]] = field(default_factory=dict)
    others: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"base": self.base_label, "head": self.head_label, "events": self.events,
                **self.others, "problems_introduced": self.problems}


def when(record: Record, site_zone: str) -> str:
    """'2027-03-05 (Fri) 19:00–21:00 America/Los_Angeles', in the event's own zone."""
    start: dt.datetime = record.data["start_date"]
    end: dt.datetime = record.data["end_date"]
    zone = record.data.get("timezone") or site_zone
    day = f"{start:%Y-%m-%d} ({start:%a})"
    if record.data.get("all_day"):
        text = day + (" all day" if start.date() == end.date() else
                      f" – {end:%Y-%m-%d} ({end:%a}), all day")
        return text
    if start.date() == end.date():
        return f"{day} {start:%H:%M}–{end:%H:%M} {zone}"
    return f"{day} {start:%H:%M} – {end:%Y-%m-%d} ({end:%a}) {end:%H:%M} {zone}"


def summarize(content_dir: Path, base: str, head: str | None,
              today: dt.date | None = None) -> Summary:
    """`today` (default: the clock's) sets the horizon recurring events are counted to."""
    cache = ParseCache()
    old = check_tree(snapshot.from_git(content_dir, base), cache)
    new = check_tree(snapshot.load(content_dir, head), cache)
    summary = Summary(base, head or "work tree")
    old_by_id = {r.id: r for r in old.records}
    new_by_id = {r.id: r for r in new.records}
    summary.events = _events(old_by_id, new_by_id, old, new)
    until = recurrence_horizon(_settings(new), today or clock.system_now().date())
    summary.events["repetition"] = _repetition(old_by_id, new_by_id, new, until)
    for collection in _TERMS:
        summary.others[collection] = _others(collection, old_by_id, new_by_id, old, new)
    before = {(f.path, f.code, f.message) for f in old.findings}
    summary.problems = [f.as_dict() for f in new.findings
                        if (f.path, f.code, f.message) not in before]
    return summary


def _name(tree_by_id: dict[int, Record], collection: str, slug: str | None) -> str:
    for record in tree_by_id.values():
        if record.collection == collection and record.slug == slug:
            return record.name
    return slug or ""


def _events(old_ids: dict[int, Record], new_ids: dict[int, Record], old: TreeResult,
            new: TreeResult) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {k: [] for k in (
        "added", "removed", "rescheduled", "moved", "published", "unpublished",
        "trashed", "cancelled", "postponed", "reinstated", "changed")}

    def item(r: Record, tree: TreeResult, by_id: dict[int, Record], **extra) -> dict:
        return {"id": r.id, "title": r.name, "path": r.path,
                "when": when(r, tree.site_zone),
                "venue": _name(by_id, "venues", r.data.get("venue")), **extra}

    for record_id, r in new_ids.items():
        if r.collection != "events":
            continue
        was = old_ids.get(record_id)
        if was is None or was.collection != "events":
            out["added"].append(item(r, new, new_ids, status=r.status))
            continue
        if was.status != r.status:
            if r.status == "trash":
                out["trashed"].append(item(r, new, new_ids, was=was.status))
            elif r.status in _PUBLIC and was.status not in _PUBLIC:
                out["published"].append(item(r, new, new_ids, was=was.status))
            elif was.status in _PUBLIC and r.status not in _PUBLIC:
                out["unpublished"].append(item(r, new, new_ids, now=r.status))
        if any(was.data.get(k) != r.data.get(k) for k in _SCHEDULE):
            out["rescheduled"].append(item(r, new, new_ids, before=when(was, old.site_zone)))
        status = _status_change(was, r)
        if status:
            out[status].append(item(r, new, new_ids,
                                    reason=r.data.get("event_status_reason") or ""))
        if was.data.get("venue") != r.data.get("venue"):
            out["moved"].append(item(r, new, new_ids,
                                     from_venue=_name(old_ids, "venues", was.data.get("venue"))))
        fields = [k for k in {*was.data, *r.data} if k not in (*_SCHEDULE, *_EVENT_STATUS,
                                                                "venue", "status", "modified")
                  and was.data.get(k) != r.data.get(k)]
        if fields:
            out["changed"].append(item(r, new, new_ids, fields=sorted(fields),
                                       was_title=was.name if was.name != r.name else None))
    for record_id, was in old_ids.items():
        if was.collection == "events" and record_id not in new_ids:
            out["removed"].append(item(was, old, old_ids))
    for items in out.values():
        items.sort(key=lambda i: (i["when"], i["title"]))
    return out


_EVENT_STATUS = ("event_status", "event_status_reason")
# A new event status -> its heading's key; "scheduled" after another one reinstates.
_STATUS_KEYS = {"canceled": "cancelled", "postponed": "postponed", "scheduled": "reinstated"}


def _status_change(was: Record, r: Record) -> str:
    """The key of an event whose event status (the plugin's Event Status) changed, else
    "". No status is "scheduled": setting it on a scheduled event says nothing new."""
    before = was.data.get("event_status") or "scheduled"
    now = r.data.get("event_status") or "scheduled"
    return _STATUS_KEYS[now] if now != before and now in _STATUS_KEYS else ""


def _settings(tree: TreeResult) -> dict:
    try:
        return yamlfile.load(tree.snapshot.settings) if tree.snapshot.settings else {}
    except yamlfile.YamlError:
        return {}


def _repetition(old_ids: dict[int, Record], new_ids: dict[int, Record], new: TreeResult,
                until: dt.datetime) -> list[dict]:
    """Events whose repetition changed, with the change in words."""
    out = []
    for record_id, r in new_ids.items():
        was = old_ids.get(record_id)
        if r.collection != "events" or was is None or was.collection != "events":
            continue
        notes = rule_summary.differences(
            (was.data.get("recurrence"), was.data["start_date"], was.data["end_date"]),
            (r.data.get("recurrence"), r.data["start_date"], r.data["end_date"]), until)
        if notes:
            out.append({"id": r.id, "title": r.name, "path": r.path,
                        "when": when(r, new.site_zone), "notes": notes})
    out.sort(key=lambda i: (i["when"], i["title"]))
    return out


def _linking(tree: TreeResult, collection: str, slug: str) -> int:
    """How many events (or child categories) point at a record."""
    count = 0
    for r in tree.records:
        links = []
        if r.collection == "events":
            key = {"venues": "venue", "organizers": "organizer"}.get(collection, collection)
            value = r.data.get(key)
            links = value if isinstance(value, list) else [value]
        if slug in links:
            count += 1
    return count


def _others(collection: str, old_ids: dict[int, Record], new_ids: dict[int, Record],
            old: TreeResult, new: TreeResult) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"added": [], "removed": [], "renamed": [], "changed": [],
                                  "trashed": []}
    for record_id, r in new_ids.items():
        if r.collection != collection:
            continue
        was = old_ids.get(record_id)
        base = {"id": r.id, "name": r.name, "slug": r.slug, "path": r.path}
        if was is None or was.collection != collection:
            out["added"].append(base)
            continue
        affected = max(_linking(new, collection, r.slug), _linking(old, collection, was.slug))
        if was.name != r.name or was.slug != r.slug:
            out["renamed"].append(dict(base, was_name=was.name, was_slug=was.slug,
                                       events=affected))
        if r.status == "trash" and was.status != "trash":
            out["trashed"].append(dict(base, events=affected))
        fields = sorted(k for k in {*was.data, *r.data}
                        if k not in ("modified", "slug", "status", r.resource.title_field)
                        and was.data.get(k) != r.data.get(k))
        if fields:
            out["changed"].append(dict(base, fields=fields, events=affected))
    for record_id, was in old_ids.items():
        if was.collection == collection and record_id not in new_ids:
            out["removed"].append({"id": was.id, "name": was.name, "slug": was.slug,
                                   "path": was.path,
                                   "events": _linking(old, collection, was.slug)})
    return out


# ------------------------------------------------------------------ rendering


def render_json(summary: Summary) -> str:
    return json.dumps(summary.as_dict(), indent=2, ensure_ascii=False) + "\n"


_EVENT_HEADINGS = {
    "added": "Added", "removed": "Removed", "rescheduled": "Rescheduled",
    "moved": "Moved to another venue", "published": "Published",
    "unpublished": "Unpublished", "trashed": "Removed (moved to the trash)",
    "cancelled": "Cancelled", "postponed": "Postponed", "reinstated": "Scheduled again",
    "changed": "Changed",
    "repetition": "Repetition changed",
}


def _events_md(events: dict[str, list[dict]]) -> list[str]:
    lines: list[str] = []
    for key, heading in _EVENT_HEADINGS.items():
        items = events.get(key) or []
        if not items:
            continue
        lines += [f"#### {heading} ({len(items)})", ""]
        for i in items:
            title = f"**{_md(i['title'])}**"
            at = f" at {_md(i['venue'])}" if i.get("venue") else ""
            if key == "rescheduled":
                lines.append(f"- {title}: ~~{i['before']}~~ → {i['when']}")
            elif key == "moved":
                lines.append(f"- {title} ({i['when']}): {_md(i['from_venue']) or 'no venue'}"
                             f" → {_md(i['venue']) or 'no venue'}")
            elif key == "changed":
                renamed = f" (was “{_md(i['was_title'])}”)" if i.get("was_title") else ""
                lines.append(f"- {title}{renamed}: {', '.join(i['fields'])}")
            elif key == "repetition":
                lines.append(f"- {title}: {'; '.join(i['notes'])}")
            elif key in ("cancelled", "postponed", "reinstated"):
                word = {"cancelled": "cancelled", "postponed": "postponed"}.get(key, "back")
                reason = f" — {_md(i['reason'])}" if i.get("reason") else ""
                lines.append(f"- {title}: {word} on {i['when']}{at}{reason}")
            elif key in ("published", "unpublished", "trashed"):
                status = i.get("was") or i.get("now")
                lines.append(f"- {title}, {i['when']}{at} ({status})")
            else:
                lines.append(f"- {title}, {i['when']}{at}")
        lines.append("")
    return lines


def _affected(n: int) -> str:
    return f" — {n} event{'s' * (n != 1)} affected" if n else ""


def _others_md(collection: str, changes: dict[str, list[dict]]) -> list[str]:
    lines: list[str] = []
    for i in changes["added"]:
        lines.append(f"- added **{_md(i['name'])}** (`{i['slug']}`)")
    for i in changes["renamed"]:
        slug = f" (`{i['was_slug']}` → `{i['slug']}`)" if i["was_slug"] != i["slug"] else ""
        lines.append(f"- renamed **{_md(i['was_name'])}** → **{_md(i['name'])}**{slug}"
                     f"{_affected(i['events'])}")
    for i in changes["changed"]:
        lines.append(f"- changed **{_md(i['name'])}**: {', '.join(i['fields'])}"
                     f"{_affected(i['events'])}")
    for i in changes["trashed"]:
        lines.append(f"- trashed **{_md(i['name'])}**{_affected(i['events'])}")
    for i in changes["removed"]:
        lines.append(f"- removed **{_md(i['name'])}** (`{i['slug']}`){_affected(i['events'])}")
    return [f"#### {collection.capitalize()}", "", *lines, ""] if lines else []


def render_markdown(summary: Summary) -> str:
    lines = [f"### Calendar changes: {summary.base_label} → {summary.head_label}", ""]
    counts = {k: len(v) for k, v in summary.events.items() if v}
    if counts:
        lines += ["**Events:** " + ", ".join(f"{n} {k}" for k, n in counts.items()), ""]
    lines += _events_md(summary.events)
    for collection, changes in summary.others.items():
        lines += _others_md(collection, changes)
    if summary.problems:
        lines += [f"#### Content problems introduced ({len(summary.problems)})", ""]
        for p in summary.problems:
            where = f"{p['path']}:{p['line']}" if p["line"] else p["path"]
            lines.append(f"- {p['severity']}: `{where}` {_md(p['message'])}")
        lines.append("")
    if len(lines) == 2:
        lines += ["No calendar changes.", ""]
    return "\n".join(lines)


def _md(text: str | None) -> str:
    """Escape what would turn a title into Markdown markup or a mention."""
    if not text:
        return ""
    for ch in "\\`*_[]<>|~":
        text = text.replace(ch, "\\" + ch)
    return text.replace("@", "@\u200b")
