"""A list query: what it is answered from (`Context`) and its parameters as they are
checked (`Query`). `lists` fills a Query from the request; `selection` reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.resources import Resource
from ..store.users import User
from .reader import Reader
from .represent import Representer
from .version import CatalogVersion

INVALID = "Invalid parameter."


@dataclass(frozen=True)
class Context:
    """What a list is answered from, besides its parameters: the reader, one catalog
    version, the representation for the caller (its URLs, what it may see), the caller."""

    reader: Reader
    view: CatalogVersion
    rep: Representer
    user: User | None
    max_items: int = 100  # items in one list parameter


@dataclass
class Query:
    ctx: Context
    resource: Resource
    user: User | None
    editor: bool
    values: dict = field(default_factory=dict)  # checked, normalized values
    given: set = field(default_factory=set)  # names present in the request
    bad: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)

    def fail(self, name: str, message: str = INVALID, detail: dict | None = None) -> None:
        self.bad.setdefault(name, message)
        if detail is not None:
            self.details[name] = detail
