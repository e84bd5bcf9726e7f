"""schema.org JSON-LD of event pages, from `Representer.event_json_ld` (the code that
writes the API's `json_ld`), minus the plugin's placeholders.

The API keeps the plugin's shape (empty strings, `"performer": "Organization"`,
`"availability": "inStock"`, an entity-encoded e-mail, an HTML-escaped description
ending in a literal `\\n`); a page should carry only real values.
"""

from __future__ import annotations

import html
from functools import lru_cache

from .. import markup
from ..records import Record
from ..represent import Representer


def page_json_ld(rep: Representer, record: Record, body: dict) -> dict:
    # The representation's own `json_ld` when it has one (SiteModel.body drops it when
    # the API's permalink base is not the pages').
    ld = _without_empty(body.get("json_ld") or rep.event_json_ld(record, body))
    assert isinstance(ld, dict)
    ld.pop("performer", None)
    summary = markup.plain_text(body["excerpt"] or body["description"])
    if summary:
        ld["description"] = summary
    else:
        ld.pop("description", None)
    venues = rep.linked("venues", record.get("venue"))
    if "location" in ld and venues and venues[0].status == "publish":
        ld["location"]["url"] = rep.url(venues[0])
    if "organizer" in ld:
        ld["organizer"]["@type"] = "Organization"
        if "email" in ld["organizer"]:
            ld["organizer"]["email"] = _unescaped(ld["organizer"]["email"])
    if "offers" in ld:
        ld["offers"]["availability"] = "https://schema.org/InStock"
    return ld


@lru_cache(maxsize=1024)
def _unescaped(email: str) -> str:
    # Every character is an entity: 50 us an event page, for the organizers' few emails.
    return html.unescape(email)


def _without_empty(value: object) -> object:
    """A copy with empty strings, lists and objects removed, recursively."""
    if isinstance(value, dict):
        pruned = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in ("", [], {}, None)}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value
