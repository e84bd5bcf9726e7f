"""`--media`: the images of a batch downloaded into `media/` of the tree.

Done before the write lock is taken, like all reading: each image is written as a new
file (never over another) and committed with the import's records (`Options.files`);
a run that makes no commit removes them again (`discard`). An answer that is not an
image, or larger than MAX_IMAGE, leaves the record with the image's URL.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from . import fetch
from .batch import Batch, Problem

MAX_IMAGE = 20 << 20
FOLDER = "media"
_SUFFIXES = {"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif",
             "image/webp": ".webp", "image/svg+xml": ".svg", "image/avif": ".avif"}
Getter = Callable[[str], fetch.Response]


def download_images(batch: Batch, root: Path, get: Getter | None = None) -> list[str]:
    """Replace each image URL of the batch by a file under media/ (relative paths of
    the files written are returned)."""
    get = get or (lambda url: fetch.get(url, limit=MAX_IMAGE))
    written: list[str] = []
    done: dict[str, str] = {}
    for incoming in batch.records:
        url = incoming.fields.get("image")
        if not isinstance(url, str) or not fetch.is_url(url):
            continue
        if url not in done:
            try:
                answer = get(url)
                kind = answer.headers.get("content-type", "").split(";")[0].strip().lower()
                placed = _place(root, url, answer.body, _SUFFIXES[kind]) if (
                    kind in _SUFFIXES) else None
            except (fetch.FetchError, OSError) as exc:
                batch.problems.append(Problem(f"image of {incoming.collection} "
                                              f"{incoming.source_id}: {exc}; kept as a URL",
                                              incoming.line, incoming.source_id))
                continue
            if placed is None:
                batch.problems.append(Problem(
                    f"image of {incoming.collection} {incoming.source_id}: {url} is not an "
                    f"image ({kind or 'no type'}); kept as a URL", incoming.line,
                    incoming.source_id))
                continue
            path, new = placed
            done[url] = path
            if new:
                written.append(path)
        incoming.fields["image"] = done[url]
    return written


def _place(root: Path, url: str, body: bytes, suffix: str) -> tuple[str, bool]:
    """A path for these bytes: the same file when already there, else a new one."""
    name = Path(urllib.parse.urlsplit(url).path).stem or "image"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:80] or "image"
    digest = hashlib.sha256(body).hexdigest()[:8]
    for candidate in (f"{stem}{suffix}", f"{stem}-{digest}{suffix}"):
        path = root / FOLDER / candidate
        if path.is_file() and not path.is_symlink() and path.read_bytes() == body:
            return f"{FOLDER}/{candidate}", False
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL: never over a file another run wrote meanwhile.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
            return f"{FOLDER}/{candidate}", True
    raise fetch.FetchError(f"{url}: no free file name under {FOLDER}")


def discard(root: Path, paths: list[str]) -> None:
    """Remove images written for a run that committed nothing."""
    for path in paths:
        (root / path).unlink(missing_ok=True)
