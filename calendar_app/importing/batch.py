"""What every reader of a foreign calendar produces, and what the importer writes.

A reader (the plugin's REST interface, an iCalendar file, a CSV file) turns its input
into a `Batch`: records in the shape of our YAML files, each named by the id it has at
its source, linked to each other by `Ref`s instead of our ids, plus the problems it
met, each with the line it met them on. Applying a batch to a tree (ids, slugs,
matching earlier imports, the update rule, one commit) is the importer's job, so every
reader stays a pure function of its input.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ref:
    """A link to another record of the same batch, or of the tree, by its source id."""

    collection: str  # "venues", "organizers", "categories", "tags"
    source_id: str


@dataclass
class Incoming:
    """One record as the source has it, in the fields of our YAML files.

    Link fields hold `Ref`s: `venue` one, `organizer`, `categories` and `tags` a list.
    Dates are naive wall times (`datetime`) in `timezone` (an IANA name) when that is
    set, else in the calendar's zone. `id` and `slug`, when present, are the source's
    wishes; the importer keeps them only where they are free.
    """

    collection: str  # "events", "venues", "organizers", "categories", "tags"
    source_id: str  # unique within (source, collection): an iCalendar UID, a post id
    fields: dict = field(default_factory=dict)
    line: int | None = None  # where the record starts in the source, for messages


@dataclass(frozen=True)
class Problem:
    """Something of the source that could not be represented; never dropped silently."""

    message: str
    line: int | None = None
    source_id: str | None = None


@dataclass
class Batch:
    origin: str  # a URL or file name, for messages and commit summaries
    records: list[Incoming] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
