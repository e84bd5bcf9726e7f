"""Application factory: one calendar (content tree, catalog, users, rules) per app."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from flask import Flask

from . import clock as clocks
from .catalog import Catalog
from .content import ContentTree
from .service import Service
from .users import UserStore

BUNDLED_CONTENT = Path(__file__).resolve().parent.parent / "content"
DEFAULT_BASE_PATH = "/wp-json/tribe/events/v1"


def default_users_file() -> Path:
    if os.environ.get("CALENDAR_USERS"):
        return Path(os.environ["CALENDAR_USERS"])
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "calendar-app" / "users.yaml"


def default_cache_dir(content: Path) -> Path:
    """Outside the content tree (so the watcher never sees it), one per tree."""
    content = content.resolve()
    digest = hashlib.sha1(str(content).encode()).hexdigest()[:10]
    return content.parent / ".calendar-cache" / f"{content.name}-{digest}"


@dataclass
class Calendar:
    tree: ContentTree
    catalog: Catalog
    users: UserStore
    service: Service
    clock: clocks.Clock
    cache_dir: Path


def open_calendar(content: Path, users_file: Path, cache_dir: Path | None = None,
                  now: dt.datetime | None = None) -> Calendar:
    cache_dir = cache_dir or default_cache_dir(content)
    tree = ContentTree(content, cache_dir / "write.lock")
    catalog = Catalog(tree)
    catalog.load()
    users = UserStore(users_file)
    clock = clocks.fixed(now) if now else clocks.system_now
    return Calendar(tree, catalog, users, Service(catalog, users, clock), clock, cache_dir)


def create_app(config: dict | None = None) -> Flask:
    """Config keys: CONTENT_DIR, USERS_FILE, CACHE_DIR, BASE_PATH, SITE_URL, NOW,
    MAX_CONTENT_LENGTH (bytes)."""
    app = Flask(__name__)
    app.config.update(
        CONTENT_DIR=str(BUNDLED_CONTENT),
        USERS_FILE=None,
        CACHE_DIR=None,
        BASE_PATH=DEFAULT_BASE_PATH,
        SITE_URL=None,
        NOW=None,
        MAX_CONTENT_LENGTH=1 << 20,
    )
    app.config.update(config or {})
    users_file = Path(app.config["USERS_FILE"] or default_users_file())
    cache = app.config["CACHE_DIR"]
    app.extensions["calendar"] = open_calendar(
        Path(app.config["CONTENT_DIR"]), users_file, Path(cache) if cache else None,
        app.config["NOW"])

    from . import api

    api.install(app)
    return app
