"""Command line: `python -m calendar_app serve|users|reindex|build ...`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .app import BUNDLED_CONTENT, default_users_file
from .editorial import register as register_editorial
from .index import register as register_index
from .site import register as register_site
from .trash import register as register_trash
from .users import ROLES, UserStore


def _users_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--users", type=Path, default=None,
                        help="users file (default: $CALENDAR_USERS or "
                             "~/.config/calendar-app/users.yaml)")


def _content_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--content", type=Path, default=BUNDLED_CONTENT,
                        help="content tree (default: the bundled sample calendar)")


def cmd_serve(args: argparse.Namespace) -> int:
    from .app import create_app

    app = create_app({"CONTENT_DIR": str(args.content),
                      "USERS_FILE": str(args.users or default_users_file())})
    from werkzeug.serving import run_simple

    print(f"Serving {args.content} at http://{args.host}:{args.port}/wp-json/tribe/events/v1/")
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
    elif args.action == "list":
        for user in store.users():
            print(f"{user.id}\t{user.name}\t{user.role}\t{user.email}")
    elif args.action == "remove":
        if not store.remove(args.name):
            print(f"error: no user named {args.name!r}", file=sys.stderr)
            return 1
        print(f"User {args.name} removed.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="calendar_app",
        description="An events calendar that lives in git.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the HTTP interface",
                           description="Serve the calendar's HTTP interface (development "
                                       "server; see the README for gunicorn).")
    _content_arg(serve)
    _users_arg(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
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
    _users_arg(add)
    lst = users_sub.add_parser("list", help="list users", description="List users.")
    _users_arg(lst)
    rm = users_sub.add_parser("remove", help="remove a user", description="Remove a user.")
    rm.add_argument("name")
    _users_arg(rm)
    users.set_defaults(func=cmd_users)
    register_editorial(sub)  # check, diff, fix-ids, fmt, schema, new
    register_index(sub)  # reindex
    register_site(sub)  # build
    register_trash(sub)  # empty-trash
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)
