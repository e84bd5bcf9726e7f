"""Command line: `python -m calendar_app serve|users|reindex|build ...`. Flask, Whoosh
and watchdog are imported only by the commands that use them (serve, reindex,
empty-trash, build --watch): `check`, `fmt`, `diff` and `build` load none of them."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import time
from pathlib import Path

from .catalog.catalog import Catalog
from .editorial import register as register_editorial
from .site import register as register_site
from .store.conflicts import conflict_findings, conflict_records
from .store.content import ContentTree
from .store.locations import command_tree, default_users_file
from .store.starter import StarterError, serving_content
from .store.starter import register as register_starter
from .store.users import ROLES, UserStore
from .sync.settings import PUSH_MODES, SyncError, SyncSettings, poll_problem
from .sync.state import STATE_FILE, read_state
from .sync.sync import RemoteSync
from .trash import register as register_trash


def _users_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--users", type=Path, default=None,
                        help="users file (default: $CALENDAR_USERS or "
                             "~/.config/calendar-app/users.yaml)")


def _poll_seconds(text: str) -> float:
    """--poll: 0 (off) or a period in seconds; anything else is refused (exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    problem = poll_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def cmd_serve(args: argparse.Namespace) -> int:
    from .http.app import create_app

    if args.remote and not (args.content or os.environ.get("CALENDAR_CONTENT")):
        print("error: --remote needs --content: the folder to clone into (or the clone)",
              file=sys.stderr)
        return 2
    try:
        content, made = serving_content(args.content)
    except StarterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if made:
        print(f"Made a demo calendar from the bundled sample in {content} (a git "
              "repository: every change made through the interface is a commit there).")
    try:
        app = create_app({"CONTENT_DIR": str(content),
                          "USERS_FILE": str(args.users or default_users_file()),
                          "SYNC_REMOTE": args.remote, "SYNC_BRANCH": args.branch,
                          "SYNC_WEBHOOK_SECRET": args.webhook_secret,
                          "SYNC_POLL": args.poll, "SYNC_PUSH": args.push,
                          # The site's links and feeds point here (SITE_URL wins).
                          "LOCAL_URL": f"http://{args.host}:{args.port}/"})
    except SyncError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from werkzeug.serving import run_simple

    print(f"Calendar: {content}")
    calendar = app.extensions["calendar"]
    if calendar.remote_sync is not None:
        sync = calendar.remote_sync
        polling = f"every {args.poll:g} s" if args.poll else "off"
        print(f"Shared repository: {sync.remote} ({args.remote}), branch {sync.branch}; "
              f"pushes: {args.push}, polling: {polling}")
    calendar.ensure_started()  # now, not at the first request: push what a crash left
    print(f"Calendar website at http://{args.host}:{args.port}/ (built in the background)")
    print(f"Interface at http://{args.host}:{args.port}/wp-json/tribe/events/v1/")
    print("Press Ctrl-C to stop.", flush=True)
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False)
    return 0


def cmd_users(args: argparse.Namespace) -> int:
    store = UserStore(args.users or default_users_file())
    if args.action == "add":
        try:
            password = store.add(args.name, args.role, args.email or "")
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"User {args.name} ({args.role}) saved in {store.path}.")
        print("This application password is shown only once; keep it safe.")
        print(f"Application password: {password}")
        if args.sign_in:
            return _set_sign_in(store, args.name)
    elif args.action == "passwd":
        return _set_sign_in(store, args.name)
    elif args.action == "list":
        for user in store.users():
            print(f"{user.id}\t{user.name}\t{user.role}\t{user.email}")
    elif args.action == "remove":
        if not store.remove(args.name):
            print(f"error: no user named {args.name!r}", file=sys.stderr)
            return 1
        print(f"User {args.name} removed.")
    return 0


def _set_sign_in(store: UserStore, name: str) -> int:
    """The editing pages' password: typed twice at a terminal, else one line of stdin
    (for scripts)."""
    if sys.stdin.isatty():
        password = getpass.getpass("Sign-in password: ")
        if getpass.getpass("Again: ") != password:
            print("error: the two passwords differ", file=sys.stderr)
            return 2
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    try:
        store.set_sign_in_password(name, password)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Sign-in password for {name} set; sessions opened before it are closed.")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from .catalog.index import TextIndex  # Whoosh: only for this command

    content, cache_dir = command_tree(args.content, args.cache_dir)
    t0 = time.perf_counter()
    catalog = Catalog(ContentTree(content, cache_dir / "write.lock"))
    catalog.load(cache_dir / "catalog.pickle")
    t1 = time.perf_counter()
    count = TextIndex(cache_dir).rebuild(catalog)
    t2 = time.perf_counter()
    print(f"read {len(catalog.current.records)} records in {t1 - t0:.1f} s, "
          f"indexed {count} in {t2 - t1:.1f} s ({cache_dir})")
    for problem in catalog.problems.values():
        print(f"skipped {problem}")
    return 0


def cmd_sync_status(args: argparse.Namespace) -> int:
    """`sync status`: commits not pushed, the last error, conflict records to decide;
    the exit code, 1 when any."""
    content, cache_dir = command_tree(args.content, args.cache_dir)
    state = read_state(cache_dir / STATE_FILE)
    if not state.get("remote"):
        print(f"{content} has not been served with --remote (no sync state in {cache_dir})")
        return 0
    tree = ContentTree(content, cache_dir / "write.lock")
    sync = RemoteSync(tree, SyncSettings(state["remote"], state["branch"]),
                      state["remote"], cache_dir)
    print(f"remote: {state['remote']} ({state.get('url', '')}), branch {state['branch']}")
    pending = sync.unpushed()
    if pending:
        print(f"{len(pending)} commit(s) not pushed yet:")
        for line in pending:
            print(f"  {line}")
    else:
        print("every commit is pushed (as of the last fetch)")
    if state.get("last_error"):
        print(f"last error ({state.get('last_error_at')}): {state['last_error']}")
    if state.get("last_exchange_at"):
        print(f"last successful exchange: {state['last_exchange_at']}")
    if state.get("rewritten"):
        print(f"last rewrite of the remote branch ({state.get('rewritten_at')}): "
              f"{state['rewritten']}")
    conflicts = conflict_records(content)
    if conflicts:
        print(f"{len(conflicts)} conflict record(s) to decide:")
        for finding in conflict_findings(content):
            print(f"  {finding.path}: {finding.message}")
    return 1 if pending or conflicts or state.get("last_error") else 0


def _tree_args(parser: argparse.ArgumentParser) -> None:
    """--content and --cache-dir of a maintenance command (resolved by `command_tree`)."""
    parser.add_argument("--content", type=Path, default=None,
                        help="content tree (default: as serve picks it)")
    parser.add_argument("--cache-dir", default=None,
                        help="cache folder (default: next to the content tree)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="calendar_app",
        description="An events calendar that lives in git.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the HTTP interface",
                           description="Serve the calendar's HTTP interface (development "
                                       "server; see the README for gunicorn).")
    serve.add_argument("--content", type=Path, default=None,
                       help="content tree (default: $CALENDAR_CONTENT, else a demo calendar "
                            "made from the bundled sample in ~/.local/share/calendar-app/demo)")
    _users_arg(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    env = os.environ.get
    serve.add_argument("--remote", default=env("CALENDAR_REMOTE"), metavar="URL_OR_NAME",
                       help="shared repository to keep the calendar in: a remote of the "
                            "clone, or a URL cloned into --content when that is empty "
                            "(default: $CALENDAR_REMOTE; see docs/deployment.md)")
    serve.add_argument("--branch", default=env("CALENDAR_BRANCH") or "main",
                       help="the remote's branch (default: $CALENDAR_BRANCH or main)")
    serve.add_argument("--webhook-secret", default=env("CALENDAR_WEBHOOK_SECRET") or "",
                       help="secret of the forge's push webhook (default: "
                            "$CALENDAR_WEBHOOK_SECRET)")
    # A text default goes through `type` too: a bad $CALENDAR_POLL is refused the same way.
    serve.add_argument("--poll", type=_poll_seconds, default=env("CALENDAR_POLL") or "0",
                       metavar="SECONDS", help="also fetch every SECONDS, 0.1 or more "
                                               "(default: $CALENDAR_POLL, else 0: webhooks "
                                               "only)")
    serve.add_argument("--push", choices=PUSH_MODES, default=env("CALENDAR_PUSH") or "wait",
                       help="wait: a write answers once pushed; queue: it answers once "
                            "committed and is pushed right after (default: wait)")
    serve.set_defaults(func=cmd_serve)

    users = sub.add_parser("users", help="manage users and application passwords",
                           description="Manage users and their application passwords.")
    users_sub = users.add_subparsers(dest="action", required=True)
    add = users_sub.add_parser("add", help="add a user (or a new password for one)",
                               description="Add a user; prints a new application password "
                                           "once, on the last line.")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="administrator")
    add.add_argument("--email", default="")
    add.add_argument("--sign-in", action="store_true",
                     help="also set the password for the editing pages (/admin/)")
    _users_arg(add)
    passwd = users_sub.add_parser(
        "passwd", help="set a user's password for the editing pages",
        description="Set the password a user signs in with at /admin/ (asked twice at a "
                    "terminal, else read as one line of standard input).")
    passwd.add_argument("name")
    _users_arg(passwd)
    lst = users_sub.add_parser("list", help="list users", description="List users.")
    _users_arg(lst)
    rm = users_sub.add_parser("remove", help="remove a user", description="Remove a user.")
    rm.add_argument("name")
    _users_arg(rm)
    users.set_defaults(func=cmd_users)
    register_starter(sub)  # init
    reindex = sub.add_parser(
        "reindex", help="rebuild the search index from scratch",
        description="Re-read the content tree and rebuild the Whoosh index in the cache "
                    "folder from scratch.")
    _tree_args(reindex)
    reindex.set_defaults(func=cmd_reindex)
    register_editorial(sub)  # check, diff, fix-ids, fmt, schema, new
    register_site(sub)  # build
    register_trash(sub)  # empty-trash
    sync = sub.add_parser("sync", help="the content clone and its remote",
                          description="The server's exchange with the shared repository.")
    sync_sub = sync.add_subparsers(dest="action", required=True)
    status = sync_sub.add_parser(
        "status", help="what is not pushed yet, why, and conflict records",
        description="List local commits the remote branch lacks, the last sync error "
                    "and the conflict records left to decide. Exit 1 when any.")
    _tree_args(status)
    status.set_defaults(func=cmd_sync_status)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)
