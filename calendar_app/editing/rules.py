"""The rule builder's preview: the dates of a recurring event as the interface will
list them, computed by the interface's own code (`catalog.occurrences.expanded`) on
the record a save would write."""

from __future__ import annotations

from typing import Any

from ..catalog import occurrences
from ..model import dates
from ..model.records import Record
from ..wiring import Calendar
from . import rule_words
from .language import gettext as _
from .language import ngettext, regional

SHOWN = 60  # dates listed on the page; the count says how many there are in all


def preview(cal: Calendar, record: Record) -> dict[str, Any] | None:
    """{"summary", "total", "dates": [{start, end, original, cancelled, title}]} of a
    recurring event as it would be saved, or None for a single event."""
    block = record.data.get("recurrence")
    if not block:
        return None
    today = cal.service.site_now().date()
    found = occurrences.expanded(record, cal.catalog.settings, today)
    listed = []
    for occ in found[:SHOWN]:
        listed.append({"start": dates.fmt(occ.start), "end": dates.fmt(occ.end),
                       "original": dates.fmt(occ.original), "cancelled": occ.cancelled,
                       "title": str(occ.overrides.get("title") or "")})
    return {"summary": rule_words.summary(block, record.data["start_date"], regional()),
            "total": len(found), "dates": listed,
            "zone": str(record.get("timezone") or cal.service.site_zone_name)}


def worded(found: dict[str, Any] | None) -> dict[str, Any] | None:
    """The preview with its sentences in the editor's language: `text` of the whole
    and of each date (the page and its script show these)."""
    if found is None:
        return None
    found["text"] = ngettext("%(summary)s: %(count)s date (%(zone)s).",
                             "%(summary)s: %(count)s dates (%(zone)s).", found["total"],
                             summary=found["summary"], zone=found["zone"])
    for day in found["dates"]:
        text = (_("%(start)s to %(end)s (cancelled)", start=day["start"], end=day["end"])
                if day["cancelled"] else _("%(start)s to %(end)s", start=day["start"],
                                           end=day["end"]))
        day["text"] = f"{text}: {day['title']}" if day["title"] else text
    return found
