"""Record files the calendar cannot read (the catalog keeps them aside as problems), as
the editing pages name them: the list of a collection says which of its files are
left out and why, and opening a record whose file broke says so instead of "no such
record". File and line in a sentence of the editor's language; the reason translated
when it is one of the YAML reader's (words.YAML), a rule's, a check's or the
service's, else as the parser wrote it."""

from __future__ import annotations

import re

from ..catalog.catalog import Catalog, Problem
from .language import file_message
from .language import gettext as _

_ID = re.compile(rb"^id:[ \t]*['\"]?(\d+)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)


def of(catalog: Catalog, collection: str) -> list[Problem]:
    """The collection's unreadable files, by path."""
    folder = f"{collection}/"
    return sorted((p for p in list(catalog.problems.values()) if p.path.startswith(folder)),
                  key=lambda p: p.path)


def holding(catalog: Catalog, collection: str, record_id: int) -> Problem | None:
    """The unreadable file of the collection whose `id:` line names this record."""
    for problem in of(catalog, collection):
        try:
            data = catalog.tree.read_bytes(problem.path)
        except OSError:
            continue
        found = _ID.search(data)
        if found and int(found[1]) == record_id:
            return problem
    return None


def text(problem: Problem) -> str:
    """"events/x.yaml, line 3: …" in the editor's language."""
    message = file_message(problem.message)
    if problem.line:
        return _("%(file)s, line %(line)s: %(reason)s", file=problem.path,
                 line=problem.line, reason=message)
    return _("%(file)s: %(reason)s", file=problem.path, reason=message)
