"""What a check finds: one problem at a place in a file, with a severity and a code.

Its words come from MESSAGES, one table of English templates with `%(name)s`
placeholders: `check` prints them filled in, the editing pages translate the template
through the site's catalogs (editing/language.py `finding_text`) and fill in the same
values. A finding whose text comes from elsewhere (a YAML parser's, a field type's)
has no template and is shown as written."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ERROR = "error"
WARNING = "warning"


def N_(message: str) -> str:
    """Marks a message for the catalogs (pybabel's keyword; site.i18n has the same)."""
    return message


# Slugs, keys and names arrive quoted as `check` has always printed them (repr).
MESSAGES = {
    "not-a-record": N_("ignored: record files must end in .yaml"),
    "symlink": N_("symbolic link: not read nor served; put the file itself here"),
    "unknown-timezone": N_("unknown timezone %(zone)s"),
    "unknown-event-timezone": N_("calendar timezone %(zone)s is unknown"),
    "duplicate-id": N_("id %(id)s is also used by %(others)s"),
    "retired-id": N_("id %(id)s belonged to a deleted record (.retired-ids); use a new id"),
    "duplicate-slug": N_("slug %(slug)s is also used by %(others)s"),
    "dangling-venues": N_("%(key)s: no venue with slug %(slug)s"),
    "dangling-organizers": N_("%(key)s: no organizer with slug %(slug)s"),
    "dangling-categories": N_("%(key)s: no category with slug %(slug)s"),
    "dangling-tags": N_("%(key)s: no tag with slug %(slug)s"),
    "trashed-venues": N_("%(key)s: venue %(slug)s is in the trash"),
    "trashed-organizers": N_("%(key)s: organizer %(slug)s is in the trash"),
    "trashed-categories": N_("%(key)s: category %(slug)s is in the trash"),
    "trashed-tags": N_("%(key)s: tag %(slug)s is in the trash"),
    "dangling-venues-hint": N_("%(key)s: no venue with slug %(slug)s (did you mean "
                               "%(meant)s?)"),
    "dangling-organizers-hint": N_("%(key)s: no organizer with slug %(slug)s (did you mean "
                                   "%(meant)s?)"),
    "dangling-categories-hint": N_("%(key)s: no category with slug %(slug)s (did you mean "
                                   "%(meant)s?)"),
    "dangling-tags-hint": N_("%(key)s: no tag with slug %(slug)s (did you mean %(meant)s?)"),
    "parent-loop": N_("category parents form a loop: %(chain)s"),
    "unknown-key": N_("unknown key %(key)s"),
    "unknown-key-hint": N_("unknown key %(key)s (did you mean %(meant)s?)"),
    "missing-key": N_("missing required key %(key)s"),
    "end-before-start": N_("end_date %(end)s is before start_date %(start)s"),
    "file-name": N_("file name %(file)s does not match slug %(slug)s (rename it to "
                    "%(wanted)s)"),
    "unquoted-number": N_("%(key)s: %(written)s is read as the number %(value)s; quote it "
                          "to keep it as written"),
    "dst-gap": N_("%(key)s %(time)s does not exist in %(zone)s (clocks skip that hour; "
                  "it would be read as %(real)s)"),
    "dst-ambiguous": N_("%(key)s %(time)s happens twice in %(zone)s (clocks go back); the "
                        "first one is used"),
    "status-reason-unused": N_("event_status_reason is shown only with event_status: "
                               "canceled or postponed"),
    "no-venue": N_("event has neither a venue nor an online_url"),
    "not-canonical": N_("not in canonical form (run `fmt`)"),
}


@dataclass(frozen=True, order=True)
class Finding:
    path: str  # relative to the content root
    line: int  # 1-based, 0 = the whole file
    column: int  # 1-based, 0 = unknown
    severity: str  # error | warning
    code: str  # stable machine name: unknown-key, dangling-link, ...
    message: str
    # For translation: the MESSAGES template and its values ((name, text), ...); the
    # message alone is the finding (`check --json` shows no more).
    template: str = field(default="", compare=False)
    values: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def as_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column,
                "severity": self.severity, "code": self.code, "message": self.message}


def worded(name: str, **values: object) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(message, template, values) of MESSAGES[name] with these values."""
    template = MESSAGES[name]
    shown = {k: str(v) for k, v in values.items()}
    return template % shown, template, tuple(sorted(shown.items()))


def finding(path: str, line: int, column: int, severity: str, code: str, name: str = "",
            **values: object) -> Finding:
    """A finding worded by MESSAGES[name] (the code's own by default)."""
    return Finding(path, line, column, severity, code, *worded(name or code, **values))



def key_line(text: str, key: str) -> int:
    """1-based line of a top-level key (0 when absent)."""
    match = re.search(rf"^{re.escape(key)}[ \t]*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 0


def value_line(text: str, key: str, value: str) -> int:
    """Line of `value` inside a top-level key's entry (a list item), else the key's line."""
    start = key_line(text, key)
    if not start:
        return 0
    lines = text.split("\n")
    pattern = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")
    for offset, line in enumerate(lines[start - 1:], start=start):
        if offset > start and line[:1] not in (" ", "\t", "-", ""):
            break  # the next top-level key
        body = line.split(":", 1)[1] if offset == start and ":" in line else line
        if pattern.search(body):
            return offset
    return start
