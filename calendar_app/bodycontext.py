"""What the field types may ask of the calendar while one request body is checked
(fieldbase.RequestContext), answered by the service's rules."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from .model import dates
from .model.records import Record
from .model.resources import RESOURCES, Resource


@dataclass
class BodyContext:
    """What the field types read from the calendar while checking one request body
    (fieldbase.RequestContext): `record` is the one updated, None on create."""

    service: Any  # the Service (service.py) whose rules it asks
    resource: Resource
    record: Record | None

    @property
    def updating(self) -> bool:
        return self.record is not None

    def site_date(self, name: str, raw: str) -> dt.datetime:
        return self.service._parse_date(name, raw, dates.zone(self.service.site_zone_name))

    def user_exists(self, user_id: int) -> bool:
        return self.service.users.get(user_id) is not None

    def media_file(self, path: str) -> bool:
        return bool(self.service.catalog.tree.media_file(path))

    def clean_slug(self, value: str) -> str:
        return self.service._clean_slug(self.resource, value, self.record)

    def term_parent(self, raw: object) -> str | None:
        return self.service._term_parent(raw, self.record)

    def term_plan(self, target: str, raw: object) -> list:
        return self.service._term_plan(RESOURCES[target], raw)

    def link_plan(self, name: str, target: str, raw: object, single: bool) -> list:
        return self.service._link_plan(name, target, raw, single)
