"""Site builds shared by the site tests: each distinct build once per run, read by
every test process (`shared`).

`language_sites` is the sample calendar with a few additions (a Berlin venue, a Paris
one, an event in euros, a canceled December event) built in English, German (from the
setting), French and Arabic (from `build --locale`). test_site_i18n reads its words,
test_site_quality and test_site_i18n_browser check its pages with Nu, axe and Chromium.
Tests that only read a build share it; a test that changes files builds its own."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from calendar_app.site import build

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE_URL = "https://example.org/calendar/"

# A venue in Berlin that names no country (so: the locale's), one in Paris, an event
# there in euros, organised by someone without an e-mail address (named in the .ics).
EXTRA = {
    "venues/kulturhaus-neukoelln.yaml": (
        "id: 950\nname: Kulturhaus Neukölln\nslug: kulturhaus-neukoelln\nstatus: publish\n"
        "address: Karl-Marx-Straße 141\ncity: Berlin\nzip: '12043'\n"),
    "venues/salle-oberkampf.yaml": (
        "id: 951\nname: Salle Oberkampf\nslug: salle-oberkampf\nstatus: publish\n"
        "address: 12 rue Oberkampf\ncity: Paris\nzip: '75011'\ncountry: Frankreich\n"),
    "organizers/nachbarschaftschor.yaml": (
        "id: 952\nname: Nachbarschaftschor\nslug: nachbarschaftschor\nstatus: publish\n"),
    "events/2026/adventskonzert.yaml": (
        "id: 953\ntitle: Adventskonzert\nslug: adventskonzert\nstatus: publish\n"
        "start_date: 2026-12-11 20:00:00\nend_date: 2026-12-11 22:00:00\n"
        "timezone: Europe/Berlin\nvenue: kulturhaus-neukoelln\n"
        "organizers:\n  - nachbarschaftschor\ncost: '8'\ncurrency_code: EUR\n"),
}
MATINEE = "events/2026/family-film-matinee-december-2026.yaml"
# language: (locale from calendar.yaml, locale from `build --locale`)
LANGUAGES = {"en": (None, None), "de": ("de_DE", None), "fr": (None, "fr_FR"),
             "ar": (None, "ar_EG")}
# Arabic without a region (weeks from Monday, as CLDR's world region): the layout checks
# in Chromium were written against it (its month rows end where they did).
OTHER = {"ar-001": (None, "ar")}


def make_content(root: Path, settings: str = "") -> Path:
    """The sample calendar and EXTRA in root/content, its week's first day left to the
    locale, `settings` appended to calendar.yaml."""
    content = root / "content"
    shutil.copytree(REPO / "content", content)
    for name, text in EXTRA.items():
        (content / name).write_text(text, encoding="utf-8")
    calendar = content / "calendar.yaml"
    calendar.write_text("".join(line for line in calendar.read_text(encoding="utf-8")
                                .splitlines(True) if not line.startswith("week_start:"))
                        + settings, encoding="utf-8")
    # An event status on one December event: its label shows on its page, the list,
    # the month grid and its day (test_site_quality looks at that page).
    matinee = content / MATINEE
    matinee.write_text(matinee.read_text(encoding="utf-8").replace(
        "status: publish\n", "status: publish\nevent_status: canceled\n"
        "event_status_reason: The projector is broken\n", 1), encoding="utf-8")
    return content


def build_in(root: Path, locale: str | None, settings: str = "") -> Path:
    """make_content(root, settings) built into root/public in `locale`."""
    from conftest import site_options

    report = build(site_options(make_content(root, settings), root / "public", root / "cache",
                                BASE_URL, locale=locale))
    assert report.written and not report.problems, report.problems
    return root / "public"


_built: dict[str, Path] = {}


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """A folder all the test processes of one run share: under xdist, beside the
    workers' own temporary folders (the run's folder, new for every run); else this
    process's own."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    (base / "shared-builds").mkdir(exist_ok=True)
    return base / "shared-builds"


def shared(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Path]) -> Path:
    """What `make(folder)` returns, made once per run for every test process: the first
    process to ask makes it under a lock, the others wait and read it (read only).
    Each process of `pytest -n 2` used to build the same sites for itself."""
    if name not in _built:
        root = shared_root(factory)
        with (root / f"{name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            done = root / f"{name}.done"
            if not done.exists():
                folder = root / name
                shutil.rmtree(folder, ignore_errors=True)  # a maker that failed before
                folder.mkdir()
                done.write_text(str(make(folder).relative_to(root)), encoding="utf-8")
            _built[name] = root / done.read_text(encoding="utf-8")
    return _built[name]


def sample_site(factory: pytest.TempPathFactory) -> Path:
    """The sample calendar built as conftest's `sample_site` builds it (today is NOW),
    once per run (`shared`)."""
    from conftest import build_sample_site

    return shared(factory, "sample", build_sample_site)


def language_site(factory: pytest.TempPathFactory, language: str) -> Path:
    """The calendar built in `language` (a key of LANGUAGES or OTHER), once per run."""
    setting, option = (LANGUAGES | OTHER)[language]
    return shared(factory, f"site-{language}", lambda root: build_in(
        root, option, f"locale: {setting}\n" if setting else ""))


def language_sites(factory: pytest.TempPathFactory,
                   languages: tuple[str, ...] = tuple(LANGUAGES)) -> dict[str, Path]:
    return {language: language_site(factory, language) for language in languages}


# The sample's events a small calendar keeps: December 2026 (the sing-along, a
# two-day market, a canceled matinee...) and two January jazz nights. Its venues,
# organizers, categories, tags and images are all kept, so every kind of page is made.
SMALL_EVENTS = ("events/2026/", "events/2027/jazz-night-january-2027.yaml",
                "events/2027/jazz-night-february-2027.yaml")


def small_sample(target: Path) -> Path:
    """A copy of the sample calendar in `target` with only SMALL_EVENTS: for build tests
    whose checks do not depend on the calendar's size (a build of it costs a fifth of
    the sample's)."""
    def ignore(folder: str, names: list[str]) -> list[str]:
        relative = Path(folder).relative_to(REPO / "content").as_posix()
        if not relative.startswith("events"):
            return []
        return [name for name in names if name.endswith(".yaml") and not any(
            f"{relative}/{name}".startswith(kept) for kept in SMALL_EVENTS)]

    shutil.copytree(REPO / "content", target, ignore=ignore)
    return target


def _copy_built(root: Path, target: Path) -> Path:
    for name in ("content", "public", "cache"):
        shutil.copytree(root / name, target / name)
    return target


def sample_copy(factory: pytest.TempPathFactory, target: Path) -> Path:
    """A copy of the run's built sample (`sample_site`) in `target`: its content,
    output (public) and caches (cache). A builder over it starts as a restarted one
    does (a first build renders nothing), for tests that edit a built sample and
    compare with full builds, instead of building the sample again first."""
    return _copy_built(sample_site(factory).parent, target)


def small_site(factory: pytest.TempPathFactory) -> Path:
    """`small_sample` built with conftest's `site_options` (today is NOW), once per
    run (`shared`): its output folder, beside its content and cache folders."""
    from conftest import site_options

    def make(root: Path) -> Path:
        report = build(site_options(small_sample(root / "content"), root / "public",
                                    root / "cache", BASE_URL))
        assert report.written and not report.problems, report.problems
        return root / "public"
    return shared(factory, "small", make)


def small_copy(factory: pytest.TempPathFactory, target: Path) -> Path:
    """`sample_copy` for the small calendar (`small_site`)."""
    return _copy_built(small_site(factory).parent, target)
