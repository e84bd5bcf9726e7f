"""A form's field as the editing pages' templates draw it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Control:
    """One field of a form as the templates draw it."""

    name: str
    label: str
    kind: str  # the field type's control
    value: Any  # what the control shows
    hint: str = ""
    required: bool = False
    attrs: dict[str, str] = field(default_factory=dict)
    options: list[tuple[str, str]] = field(default_factory=list)  # (value, label)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # a picker's choices, a rule's parts
