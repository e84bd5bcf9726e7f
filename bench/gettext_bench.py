"""Translated messages in templates: Jinja's newstyle gettext against ours (issue 26).

    python bench/gettext_bench.py

80,000 messages a round, half with a variable, in German; the two take turns and
the process time per message is printed for each (a figure that survives a loaded
machine better than wall-clock time).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jinja2 import Environment

from calendar_app.site.i18n import Regional
from calendar_app.site.render import install_locale, make_environment

SOURCE = ("{% for i in range(2000) %}{{ _('Month') }}"
          "{{ _('Organized by: %(names)s', names='x') }}{% endfor %}")


def main() -> None:
    ours = make_environment()
    install_locale(ours, Regional("de_DE"))
    jinja = Environment(extensions=["jinja2.ext.i18n"], autoescape=True)
    jinja.install_gettext_translations(Regional("de_DE").translations, newstyle=True)  # type: ignore[attr-defined]
    templates = {"jinja": jinja.from_string(SOURCE), "ours": ours.from_string(SOURCE)}
    assert templates["jinja"].render() == templates["ours"].render()
    for _ in range(3):
        for name, template in templates.items():
            started = time.process_time()
            for _ in range(20):
                template.render()
            print(f"{name}: {(time.process_time() - started) * 1e6 / 80_000:.2f} us a message")


if __name__ == "__main__":
    main()
