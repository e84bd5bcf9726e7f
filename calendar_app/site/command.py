"""`python build.py` / `python -m calendar_app build`: options, summary, exit code."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn, TextIO

from ..model.settings import locale_problem
from ..store.starter import BUNDLED_CONTENT
from . import safety
from .builder import DEFAULT_OUT, LOCALHOST_URL, Builder, Options, Report

LOCAL_CONTENT = "content"  # the content tree when none is named: ./content


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--content", type=Path, default=None,
                        help=f"content tree (default: {LOCAL_CONTENT}/ in the current "
                             "folder, when it holds a calendar)")
    source.add_argument("--sample", action="store_true",
                        help="build the bundled sample calendar")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="output folder (default: public/)")
    parser.add_argument("--force", action="store_true",
                        help="write into a folder that no build made, or remove more files "
                             "of the last build than this one makes (refused otherwise)")
    parser.add_argument("--templates", type=Path, default=None,
                        help="template folder whose files override ours one by one")
    parser.add_argument("--base-url", default=None,
                        help="public address of the site, e.g. https://example.org/calendar/ "
                             "(default: url in calendar.yaml)")
    parser.add_argument("--locale", type=_locale, default=None,
                        help="language and regional formats, e.g. de_DE (default: locale "
                             "in calendar.yaml, else en_US)")
    parser.add_argument("--watch", action="store_true",
                        help="rebuild whenever a content or template file is saved")
    parser.add_argument("--keep-going", action="store_true",
                        help="build even when records fail to parse or validate: report "
                             "them and leave them out (default: stop, write nothing, "
                             "exit 1; --watch always goes on)")
    # The default since --keep-going came: accepted so that existing CI scripts still run.
    parser.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)


def _locale(value: str) -> str:
    problem = locale_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `build` command to a parent parser's subcommands."""
    parser = subparsers.add_parser(
        "build", help="build the static site",
        description="Build the static calendar site: pages, iCalendar feeds and JSON "
                    "snapshots, rewriting only what changed.")
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def report_to(report: Report, content: Path) -> int:
    print_problems(report, content)
    print(report.summary(), file=sys.stderr, flush=True)
    if report.declined:
        print(f"error: {report.declined}", file=sys.stderr)
        return 1
    if report.refused:  # never a site with a page written elsewhere
        for message in report.refused:
            print(f"error: {message}", file=sys.stderr)
        return 1
    return 1 if report.stopped else 0


def content_of(args: argparse.Namespace) -> Path:
    """The content tree to build: never the bundled sample unless asked (--sample)."""
    if args.sample:
        return BUNDLED_CONTENT
    if args.content is not None:
        return args.content
    try:
        safety.check_content(Path(LOCAL_CONTENT))
    except safety.BuildRefused:
        raise safety.BuildRefused(
            f"no calendar in {LOCAL_CONTENT}/ here: give --content DIR (`python -m "
            "calendar_app init DIR` makes one), or --sample to build the sample") from None
    return Path(LOCAL_CONTENT)


def run(args: argparse.Namespace) -> int:
    # Under --watch a broken save is reported and the last good pages stay up: the
    # next save that fixes it rebuilds them.
    try:
        content = content_of(args)
        options = Options(content=content, out=args.out, templates=args.templates,
                          base_url=args.base_url, keep_going=args.keep_going or args.watch,
                          force=args.force, locale=args.locale)
        builder = Builder(options)
    except safety.BuildRefused as exc:  # nothing read, nothing written
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        status = report_to(builder.build(), content)
        if builder.base_url() == LOCALHOST_URL:  # once, not at every rebuild of --watch
            print(f"warning: {content / 'calendar.yaml'} has no url: feed UIDs and links "
                  f"in the site will say {LOCALHOST_URL}; add `url: https://…/` (the "
                  "address the site will have) or build with --base-url", file=sys.stderr)
        if args.watch:
            from .watch import watch

            watch(builder, lambda report: report_to(report, content))
        return status
    finally:
        builder.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=(
        "Build the static calendar site from a content tree."))
    add_arguments(parser)
    return run(parser.parse_args(argv))


def exit_now(status: int) -> NoReturn:
    """Leave once the work is written, without freeing the heap object by object:
    after a build of 10,000 events the interpreter's teardown alone took 0.5 s."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def print_problems(report: Report, content: Path, stream: TextIO = sys.stderr) -> None:
    stream.writelines(f"warning: {w}\n" for w in report.warnings)
    stream.writelines(f"{content / problem.path}:{problem.line}: {problem.message}\n"
                      if problem.line else f"{content / problem.path}: {problem.message}\n"
                      for problem in report.problems)
