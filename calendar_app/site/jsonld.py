"""The schema.org JSON-LD of an event page: the representation's own `json_ld`
(`Representer.event_json_ld`, what single reads carry), so the page and the API say the
same thing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.records import Record

if TYPE_CHECKING:
    from .model import SiteModel


def page_json_ld(model: SiteModel, record: Record, body: dict) -> dict:
    """The `json_ld` of the event's `body` (`model.body`); when the API's permalink base
    is not the pages' (`SiteModel.body` drops it then), the snapshot's with the pages'
    URLs: made from it, not again from the record (its dates, texts and offer are
    base-free)."""
    found = body.get("json_ld")
    if found is not None:
        return found
    return model.rep.rebased_event_json_ld(record, body,
                                           model.snapshot_body(record)["json_ld"])
