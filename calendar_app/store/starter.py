"""New calendars: `init DIR` makes a git repository from the bundled sample (or an empty
calendar), and serving without a content tree uses a per-user demo calendar made the same
way, so no write ever lands in the sample that ships with the code."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def init_calendar(target: Path, empty: bool = False) -> None:
    """Make `target` a git repository holding a calendar, in one initial commit."""
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
    parser.set_defaults(func=_cmd_init)


def _cmd_init(args: argparse.Namespace) -> int:
    try:
        init_calendar(args.dir, empty=args.empty)
    except StarterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Made a calendar in {args.dir.absolute()} (a git repository: every change "
          "made through the interface is a commit there).")
    print(f"Serve it with: python -m calendar_app serve --content {args.dir}")
    return 0
