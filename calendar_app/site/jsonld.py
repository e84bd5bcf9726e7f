"""The schema.org JSON-LD of an event page: the representation's own `json_ld`
(`Representer.event_json_ld`, what single reads carry), so the page and the API say the
same thing."""

from __future__ import annotations

from ..catalog.represent import Representer
from ..model.records import Record


def page_json_ld(rep: Representer, record: Record, body: dict) -> dict:
    # SiteModel.body drops `json_ld` when the API's permalink base is not the pages':
    # then the page makes its own with its base.
    return body.get("json_ld") or rep.event_json_ld(record, body)
