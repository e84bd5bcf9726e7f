"""The editorial subcommands of `python -m calendar_app`: argument parsing and exit
codes only; the work is done by the modules of this package."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def default_content() -> Path:
    """`./content` when it exists (a content repository's root), else the current folder."""
    return Path("content") if Path("content").is_dir() else Path(".")


def _prefix(content: Path) -> str:
    text = content.as_posix()
    return "" if text in ("", ".") else text.rstrip("/") + "/"


def _content_positional(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("content", nargs="?", type=Path, default=None, metavar="CONTENT_DIR",
                        help="content tree (default: ./content if it exists, else .)")


def _content_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--content", type=Path, default=None, metavar="CONTENT_DIR",
                        help="content tree (default: ./content if it exists, else .)")


def cmd_check(args: argparse.Namespace) -> int:
    from ..model.findings import ERROR
    from ..store.conflicts import conflict_findings
    from ..store.locations import default_cache_dir
    from ..store.sourcestate import failure_findings
    from . import report, snapshot
    from .check import ParseCache, check_tree

    content = args.content or default_content()
    started = time.perf_counter()
    cache = ParseCache()
    result = check_tree(snapshot.from_worktree(content), cache)
    findings = list(result.findings)
    findings += conflict_findings(content)  # values a sync's merge replaced, to decide
    findings += failure_findings(content, default_cache_dir(content))  # import sources
    if args.canonical:
        findings += _not_canonical(result)
    if args.against:
        from . import collisions, gitrev

        try:
            found = collisions.against(content, args.against, ours=result, cache=cache)
        except gitrev.GitError as exc:
            print(f"error: --against {args.against}: {exc}", file=sys.stderr)
            return 2
        findings += found.findings()
    findings.sort(key=lambda f: (f.path, f.line, f.column, f.code))
    seconds = time.perf_counter() - started
    prefix = _prefix(content)
    checked = len(result.snapshot.records)
    if args.format == "github":
        report.github(findings, sys.stdout, prefix)
    elif args.format == "json":
        report.as_json(findings, sys.stdout, prefix, checked)
    else:
        report.human(findings, sys.stdout, prefix, checked, seconds)
    errors, warnings = report.counts(findings)
    failing = errors + (warnings if args.strict else 0)
    _ = ERROR
    return 1 if failing else 0


def _not_canonical(result) -> list:
    from ..model.findings import WARNING, finding
    from .fmt import FormatError, canonical_text

    out = []
    for path, fr in result.files.items():
        if fr.record is None:
            continue  # its errors are reported already
        data = result.snapshot.records[path]
        try:
            if canonical_text(fr.record.collection, path, data).encode() != data:
                out.append(finding(path, 0, 0, WARNING, "not-canonical"))
        except FormatError:
            continue
    return out


def cmd_fmt(args: argparse.Namespace) -> int:
    from . import snapshot
    from .fmt import FormatError, canonical_text

    content = args.content or default_content()
    snap = snapshot.from_worktree(content)
    changed = skipped = 0
    for path, data in snap.records.items():
        try:
            text = canonical_text(snap.collection_of(path), path, data)
        except FormatError as exc:
            skipped += 1
            print(f"{_prefix(content)}{path}: skipped, not a valid record ({exc}); "
                  "see `check`", file=sys.stderr)
            continue
        if text.encode("utf-8") == data:
            continue
        changed += 1
        if args.check:
            print(f"would reformat {_prefix(content)}{path}")
        else:
            (Path(content) / path).write_text(text, encoding="utf-8", newline="\n")
            print(f"reformatted {_prefix(content)}{path}")
    verb = "would be reformatted" if args.check else "reformatted"
    print(f"{changed} file{'s' * (changed != 1)} {verb}, "
          f"{len(snap.records) - changed - skipped} already canonical"
          + (f", {skipped} skipped" if skipped else ""), file=sys.stderr)
    return 1 if (args.check and changed) or skipped else 0


def cmd_fix_ids(args: argparse.Namespace) -> int:
    from . import gitrev
    from .fix_ids import fix

    content = args.content or default_content()
    try:
        repair, _ = fix(content, args.against, dry_run=args.dry_run)
    except gitrev.GitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prefix = _prefix(content)
    for path, old, new in repair.renumbered:
        print(f"{prefix}{path}: id {old} -> {new}")
    for (collection, old, new), (old_path, new_path) in zip(repair.renamed, repair.moved,
                                                            strict=True):
        print(f"{collection}: slug {old!r} -> {new!r} ({prefix}{old_path} -> "
              f"{prefix}{new_path})")
    for path in repair.relinked:
        print(f"{prefix}{path}: links rewritten")
    if not (repair.renumbered or repair.renamed):
        print(f"nothing to fix: no collision with {args.against}")
    elif args.dry_run:
        print("(dry run: no file changed)")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from . import gitrev
    from .diff import render_json, render_markdown, summarize

    content = args.content or default_content()
    base, head = args.base, args.head
    if head is None and "..." in base:
        base, head = base.split("...", 1)
        head = head or "HEAD"
        repo, _ = gitrev.prefix_of(content)
        base = gitrev.merge_base(repo, base, head) or base
    try:
        summary = summarize(content, base, head)
    except gitrev.GitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary.base_label = args.base.split("...")[0]
    sys.stdout.write(render_json(summary) if args.format == "json" else render_markdown(
        summary))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from .gitrev import GitError, prefix_of
    from .schema import schema_globs, write_schemas

    content = (args.content or default_content()).resolve()
    try:  # inside the repository, whatever its layout (`init` makes the tree its root)
        top, prefix = prefix_of(content)
    except (GitError, OSError):
        top, prefix = content.parent, content.name + "/"
    out = (args.out or top / "schemas").resolve()
    for path in write_schemas(out):
        print(path)
    if out.is_relative_to(top):  # the editor settings for exactly this layout
        print(f"\nFor VS Code, in {top / '.vscode' / 'settings.json'}:")
        print(json.dumps({"yaml.schemas": schema_globs(out.relative_to(top), prefix)},
                         indent=2))
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from .scaffold import ScaffoldError, scaffold

    content = args.content or default_content()
    try:
        path = scaffold(content, args)
    except ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add check, diff, fix-ids, fmt, schema and new to a `python -m calendar_app` parser."""
    check = subparsers.add_parser(
        "check", help="validate the content tree",
        description="Validate every record file and the links between them; exit 1 on "
                    "errors (and on warnings with --strict).")
    _content_positional(check)
    check.add_argument("--format", choices=("human", "github", "json"), default="human")
    check.add_argument("--strict", action="store_true", help="warnings fail too")
    check.add_argument("--against", metavar="BASE_REF",
                       help="also report records added here whose id or slug BASE_REF took")
    check.add_argument("--canonical", action="store_true",
                       help="also warn about files not in canonical form (see fmt)")
    check.set_defaults(func=cmd_check)

    fmt = subparsers.add_parser(
        "fmt", help="rewrite record files in canonical form",
        description="Rewrite record files in canonical form (key order, quoting, dates), "
                    "keeping comments.")
    _content_positional(fmt)
    fmt.add_argument("--check", action="store_true",
                     help="change nothing; exit 1 if a file is not canonical")
    fmt.set_defaults(func=cmd_fmt)

    fix = subparsers.add_parser(
        "fix-ids", help="renumber/rename records that collide with a base branch",
        description="Give this branch's new records that collide with BASE_REF a free id "
                    "(or slug), rewriting the links to them.")
    _content_positional(fix)
    fix.add_argument("--against", required=True, metavar="BASE_REF")
    fix.add_argument("--dry-run", action="store_true")
    fix.set_defaults(func=cmd_fix_ids)

    diff = subparsers.add_parser(
        "diff", help="calendar-aware summary of a change (Markdown or JSON)",
        description="Summarize the change from BASE to HEAD (default: the work tree, "
                    "including uncommitted files). BASE...HEAD compares from their merge "
                    "base, as a pull request does.")
    diff.add_argument("base", metavar="BASE")
    diff.add_argument("head", nargs="?", default=None, metavar="HEAD")
    diff.add_argument("--format", choices=("markdown", "json"), default="markdown")
    _content_option(diff)
    diff.set_defaults(func=cmd_diff)

    schema = subparsers.add_parser(
        "schema", help="write a JSON Schema per record type",
        description="Write <collection>.schema.json for editors (yaml-language-server).")
    _content_option(schema)
    schema.add_argument("--out", type=Path, default=None,
                        help="folder (default: schemas/ next to the content tree)")
    schema.set_defaults(func=cmd_schema)

    new = subparsers.add_parser(
        "new", help="scaffold a new record file with the next free id",
        description="Write a valid, canonical record file with the next free id.")
    new.add_argument("type", choices=("event", "venue", "organizer", "category", "tag"))
    new.add_argument("title")
    new.add_argument("--start", help="event start (2027-03-05 19:30, 'next friday 7pm')")
    new.add_argument("--end", help="event end (default: start + 2 hours)")
    new.add_argument("--all-day", action="store_true")
    new.add_argument("--timezone", help="IANA name (default: the calendar's)")
    new.add_argument("--venue", help="venue slug")
    new.add_argument("--organizer", action="append", default=[], help="organizer slug")
    new.add_argument("--category", action="append", default=[], help="category slug")
    new.add_argument("--tag", action="append", default=[], help="tag slug")
    new.add_argument("--cost")
    new.add_argument("--parent", help="parent category slug (categories)")
    new.add_argument("--slug", help="slug (default: from the title)")
    new.add_argument("--status", default="publish")
    _content_option(new)
    new.set_defaults(func=cmd_new)
