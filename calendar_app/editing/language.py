"""The editing, submission and moderation pages in the calendar's language: the site's
catalogs (site/i18n.py, docs/i18n.md) in Flask's templates, `lang` and `dir` on every
page. Read per request, so an edit of `locale` in calendar.yaml shows at once."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask

from ..site.i18n import Regional, site_locale

_REGIONALS: dict[str, Regional] = {}


def install(app: Flask, settings: Callable[[], dict]) -> None:
    """`_()` and `{% trans %}` in the app's templates; `settings` gives calendar.yaml's."""

    def regional() -> Regional:
        tag = site_locale(settings())
        found = _REGIONALS.get(tag)
        if found is None:
            found = _REGIONALS[tag] = Regional(tag)
        return found

    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        lambda message: regional().gettext(message),
        lambda singular, plural, n: regional().ngettext(singular, plural, n), newstyle=True)

    @app.context_processor
    def _language() -> dict:
        found = regional()
        return {"lang": found.lang, "dir": found.dir}
