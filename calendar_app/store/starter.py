"""New calendars: `init DIR` makes a git repository from the bundled sample (or an empty
calendar), and serving without a content tree uses a per-user demo calendar made the same
way, so no write ever lands in the sample that ships with the code."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

from ..model import dates, hints
from ..model.settings import DEFAULT_SETTINGS
from . import yamlfile

_PACKAGE = Path(__file__).resolve().parents[1]  # calendar_app/
# An installed wheel carries the sample as package data (pyproject maps content/ to
# calendar_app/sample); a checkout or an editable install has it at the top level.
BUNDLED_CONTENT = next((p for p in (_PACKAGE / "sample", _PACKAGE.parent / "content")
                        if (p / "calendar.yaml").is_file()), _PACKAGE.parent / "content")

EMPTY_SETTINGS = "title: My calendar\ntimezone: UTC\nper_page: 10\n"


class StarterError(Exception):
    """A calendar that cannot be made or must not be served; the message says why."""


def demo_dir() -> Path:
    """The per-user demo calendar: $XDG_DATA_HOME/calendar-app/demo, by default under
    ~/.local/share."""
    data = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec says to ignore a relative value.
    base = Path(data) if os.path.isabs(data) else Path.home() / ".local" / "share"
    return base / "calendar-app" / "demo"


def init_calendar(target: Path, empty: bool = False, settings: dict | None = None) -> None:
    """Make `target` a git repository holding a calendar, in one initial commit;
    `settings` (title, timezone, url, locale) go into its calendar.yaml."""
    target = target.absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise StarterError(f"{target} already exists and is not an empty folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place: an interrupted init leaves no
    # half-made calendar that a later run would take for a finished one.
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent)) / "cal"
    try:
        if empty:
            work.mkdir()
            (work / "calendar.yaml").write_text(EMPTY_SETTINGS, encoding="utf-8")
        else:
            shutil.copytree(BUNDLED_CONTENT, work)
        if settings:
            path = work / "calendar.yaml"
            path.write_text(yamlfile.edit(path.read_text(encoding="utf-8"), settings,
                                          [*DEFAULT_SETTINGS, "locale"]), encoding="utf-8")
        what = "an empty calendar" if empty else "the calendar-app sample"
        _git(work, "init", "-q")
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "--no-verify", "-m", f"New calendar from {what}")
        if target.exists():
            target.rmdir()  # empty, checked above; rename needs the name free
        work.rename(target)
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)


def _git(cwd: Path, *args: str) -> None:
    # The initial commit is the tool's: it needs an identity on machines where git has
    # none (the user's GIT_AUTHOR_* variables still win) and no signing prompt.
    base = ["git", "-c", "user.name=calendar-app", "-c", "user.email=calendar-app@localhost",
            "-c", "commit.gpgsign=false"]
    proc = subprocess.run([*base, *args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        raise StarterError(f"git {args[0]} failed: {proc.stderr.strip()}")


def ensure_demo() -> tuple[Path, bool]:
    """The demo calendar, made from the sample on first use; (path, made now)."""
    demo = demo_dir()
    if (demo / "calendar.yaml").is_file():
        return demo, False
    try:
        init_calendar(demo)
    except (StarterError, OSError):
        # Another process may have made it meanwhile; anything else is a real failure.
        if (demo / "calendar.yaml").is_file():
            return demo, False
        raise
    return demo, True


def serving_content(content: Path | None) -> tuple[Path, bool]:
    """The tree to serve: `content`, else $CALENDAR_CONTENT, else the demo calendar;
    (path, demo made now). Refuses the sample inside the code."""
    chosen = content or os.environ.get("CALENDAR_CONTENT")
    path, made = (Path(chosen), False) if chosen else ensure_demo()
    if path.resolve() == BUNDLED_CONTENT.resolve():
        raise StarterError(f"{path} is the sample bundled with the code, where every write "
                           "would become a commit in the project; make a calendar of your "
                           "own with `python -m calendar_app init DIR` and serve that")
    return path, made


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `init` command to a parent parser's subcommands."""
    parser = subparsers.add_parser(
        "init", help="make a new calendar repository",
        description="Make DIR a new git repository holding a calendar, in one commit: a "
                    "copy of the bundled sample calendar, or with --empty just calendar.yaml.")
    parser.add_argument("dir", type=Path, metavar="DIR")
    parser.add_argument("--empty", action="store_true",
                        help="no records, only calendar.yaml (title and timezone)")
    for name, what in INIT_QUESTIONS.items():
        parser.add_argument(f"--{name}", default=None, help=f"the calendar's {what}; asked "
                            "in a terminal when not given")
    parser.add_argument("--no-input", action="store_true",
                        help="ask nothing, also in a terminal (for scripts)")
    parser.set_defaults(func=_cmd_init)


# What `init` asks in a terminal, in this order, with the words of its question.
INIT_QUESTIONS = {"title": "title", "timezone": "time zone (IANA name)",
                  "url": "site address (https://…), where the built site will be",
                  "locale": "language and region (en_US, de_DE, fr_FR…)"}


def _cmd_init(args: argparse.Namespace) -> int:
    given = {k: getattr(args, k) for k in INIT_QUESTIONS if getattr(args, k) is not None}
    asking = sys.stdin.isatty() and not args.no_input
    try:
        settings = init_answers(given, args.empty, input if asking else None)
    except (EOFError, KeyboardInterrupt):
        print("\nNothing made.", file=sys.stderr)
        return 1
    except StarterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        init_calendar(args.dir, empty=args.empty, settings=settings)
    except StarterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Made a calendar in {args.dir.absolute()} (a git repository: every change "
          "made through the interface is a commit there).")
    print(f"Serve it with: python -m calendar_app serve --content {args.dir}")
    return 0


def machine_zone() -> str:
    """This machine's IANA zone ($TZ, else /etc/localtime's link), or "UTC"."""
    name = os.environ.get("TZ", "").lstrip(":")
    if not name:
        try:
            name = os.readlink("/etc/localtime").split("zoneinfo/", 1)[-1]
        except OSError:
            name = ""
    try:
        dates.zone(name)
    except dates.DateError:
        return "UTC"
    return name


def init_answers(given: dict, empty: bool, ask: Callable[[str], str] | None) -> dict:
    """The settings a new calendar starts with: flags first, then (when `ask` is a
    prompt) answers, each checked; a bad flag is an error, a bad answer asked again."""
    sample = {} if empty else yaml.safe_load(
        (BUNDLED_CONTENT / "calendar.yaml").read_text(encoding="utf-8"))
    defaults = {"title": sample.get("title", "My calendar"),
                "timezone": machine_zone(),
                "url": sample.get("url", ""), "locale": sample.get("locale", "")}
    out = {}
    for key, what in INIT_QUESTIONS.items():
        if key in given:
            problem = _answer_problem(key, given[key])
            if problem:
                raise StarterError(f"--{key}: {problem}")
            out[key] = given[key]
            continue
        if ask is None:
            continue
        for _ in range(5):
            answer = ask(f"Calendar {what} [{defaults[key]}]: ").strip() or defaults[key]
            problem = _answer_problem(key, answer)
            if not problem:
                out[key] = answer
                break
            print(f"  {problem}", file=sys.stderr)
        else:
            raise StarterError(f"no usable {what}")
    return {k: v for k, v in out.items() if v not in ("", None)}


def _answer_problem(key: str, value: str) -> str:
    if key == "title" and not value.strip():
        return "the title cannot be empty"
    if key == "timezone":
        try:
            dates.zone(value)
        except dates.DateError:
            meant = hints.zone_meant(value)
            return f"unknown time zone {value!r}" + (f" (did you mean {meant!r}?)"
                                                     if meant else "")
    if key == "url" and value and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
        return f"{value!r} is not an http(s) address such as https://events.example.org/"
    if key == "locale" and value and not re.fullmatch(r"[a-z]{2,3}([_-][A-Z]{2})?", value):
        return f"{value!r} is not a language such as en_US, de_DE or fr"
    return ""

