"""The editing, submission and moderation pages in the calendar's language: the site's
catalogs (site/i18n.py, docs/i18n.md) in Flask's templates and in the views' own words
(page titles, flash messages, form messages, e-mails), `lang` and `dir` on every page.
Read per request, so an edit of `locale` in calendar.yaml shows at once.

The pages share the site's catalogs (one `messages.po` a language) rather than a domain
of their own: adding a language stays one file, and the words both use ("Venue",
"Category", "Skip to content") are translated once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from flask import Flask, current_app, has_app_context

from ..model import findings, rule_errors
from ..site.i18n import Regional, site_locale
from . import words

_REGIONALS: dict[str, Regional] = {}
_KEY = "editing_language"


def regional_for(settings: dict) -> Regional:
    tag = site_locale(settings)
    found = _REGIONALS.get(tag)
    if found is None:
        found = _REGIONALS[tag] = Regional(tag)
    return found


def regional() -> Regional:
    """The calendar's language for this app (English outside of one)."""
    settings = current_app.extensions[_KEY]() if has_app_context() and (
        _KEY in current_app.extensions) else {}
    return regional_for(settings)


def gettext(message: str, **values: object) -> str:
    """A message in the editor's language, `%(name)s` filled from `values`."""
    text = regional().gettext(message)
    return text % values if values else text


def service_message(text: str) -> str:
    """A message of the service (words.SERVICE) or of a recurrence rule
    (rule_errors.MESSAGES) in the editor's language, the values it filled in kept as
    written (a field's own message inside a rule's, `%(message)s`, translated too); a
    sentence naming a kind of record (words.FILLED) is translated whole; one the
    catalogs lack stays as the service wrote it."""
    if text in _FILLED:
        return gettext(text)
    return _read_back(text, service_patterns(), service_message)


def file_message(text: str) -> str:
    """Why a record file cannot be read, in the editor's language: the YAML reader's
    words (words.YAML, the parser's problems and Python's date errors among them), a
    check's finding, or any message service_message knows; else as written."""
    if text in _FILLED or any(p.fullmatch(text) for _t, p in service_patterns()):
        return service_message(text)
    return _read_back(text, file_patterns(), file_message)


def _read_back(text: str, patterns: tuple[tuple[str, re.Pattern], ...],
               inner: Callable[[str], str]) -> str:
    """The translated template whose pattern the text matches, filled with the values
    read out of it (`%(message)s`, a message inside a message, shown by `inner`)."""
    for template, pattern in patterns:
        found = pattern.fullmatch(text)
        if found:
            values = found.groupdict()
            if "message" in values:
                values["message"] = inner(values["message"])
            if values.get("range") == words.KEPT_RANGE:
                values["range"] = gettext(words.KEPT_RANGE)
            if template in _NAMING and not regional().english:
                values = {k: _labels(v) if k in ("name", "names") else v
                          for k, v in values.items()}
            return gettext(template) % values if values else gettext(template)
    return gettext(text)


def _labels(names: str) -> str:
    """The service's parameter names ("title, email") as the forms label those fields
    ("Titel, E-Mail-Adresse"); a name no field has stays as written. English pages keep
    the interface's own wording, parameter names included, as the plugin words it."""
    return ", ".join(gettext(words.LABELS[n]) if n in words.LABELS else n
                     for n in names.split(", "))


_FILLED = frozenset(words.FILLED)
# The service's templates whose `name`/`names` are parameters (the fields' names).
_NAMING = frozenset(words.SERVICE)


@functools.cache
def service_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    """(template, what its filled-in texts look like) of words.SERVICE and
    rule_errors.MESSAGES."""
    return _patterns((*words.SERVICE, *rule_errors.MESSAGES.values()))


@functools.cache
def file_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    """The same of words.YAML and findings.MESSAGES."""
    return _patterns((*words.YAML, *findings.MESSAGES.values()))


def _patterns(templates: tuple[str, ...]) -> tuple[tuple[str, re.Pattern], ...]:
    """The one with the most words of its own first (a message that says more wins over
    one whose placeholder would swallow those words)."""
    out = []
    for template in sorted(templates, key=lambda t: len(_PLACEHOLDER.sub("", t)),
                           reverse=True):
        parts = _PLACEHOLDER.split(template)
        regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                        for i, part in enumerate(parts))
        out.append((template, re.compile(regex, re.DOTALL)))
    return tuple(out)


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def finding_text(found: object) -> str:
    """A check's finding (or a service message) as the form shows it: a finding worded
    by findings.MESSAGES in the editor's language with its values filled in, any other
    text as service_message shows it."""
    template = getattr(found, "template", "")
    if template:
        return gettext(template) % dict(found.values)  # type: ignore[attr-defined]
    return service_message(getattr(found, "message", str(found)))


def ngettext(singular: str, plural: str, n: int, **values: object) -> str:
    """A counted message; `%(count)s` is the number unless `values` say otherwise."""
    text = regional().ngettext(singular, plural, n)
    return text % {"count": n, **values}


def install(app: Flask, settings: Callable[[], dict]) -> None:
    """`_()` and `{% trans %}` in the app's templates; `settings` gives calendar.yaml's."""
    app.extensions[_KEY] = settings
    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        lambda message: regional().gettext(message),
        lambda singular, plural, n: regional().ngettext(singular, plural, n), newstyle=True)

    @app.context_processor
    def _language() -> dict:
        found = regional()
        return {"lang": found.lang, "dir": found.dir, "status_name": status_name,
                "finding_text": finding_text,
                "tab_name": lambda tab: gettext(words.TABS.get(tab, tab)),
                "kind_words": lambda resource: words.KINDS[resource.name],
                "field_label": lambda name: gettext(words.label(name)),
                "role_name": lambda role: gettext(words.ROLES.get(role, role))}


def status_name(status: str) -> str:
    """A record's status ("draft") as the pages name it."""
    return gettext(words.STATUSES.get(status, status))
