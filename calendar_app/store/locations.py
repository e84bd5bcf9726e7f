"""Where a calendar's parts are unless told otherwise: the users file, the cache folder
beside the content tree, the interface's base path. Light on purpose: the command line,
the builder and the server all start from here."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .starter import StarterError, serving_content

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


def command_tree(content: Path | None, cache_dir: str | None) -> tuple[Path, Path]:
    """(content, cache folder) a maintenance command works on: the calendar `serve`
    would serve; exits with the reason when that is the sample inside the code."""
    try:
        content, _made = serving_content(content)
    except StarterError as exc:
        raise SystemExit(f"error: {exc}") from None
    return content, Path(cache_dir) if cache_dir else default_cache_dir(content)
