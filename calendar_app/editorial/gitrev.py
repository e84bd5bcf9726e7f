"""Reading content trees out of git revisions, fast: one `ls-tree` and one
`cat-file --batch` process per revision, never a checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class GitError(RuntimeError):
    pass


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    env = dict(os.environ)
    env.setdefault("GIT_COMMITTER_NAME", "calendar-app")
    env.setdefault("GIT_COMMITTER_EMAIL", "calendar-app@localhost")
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          env=env, check=False)
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(message or f"git {args[0]} failed")
    return proc.stdout


def prefix_of(content_dir: Path) -> tuple[Path, str]:
    """(repository root, the content tree's path inside it with a trailing slash or "")."""
    toplevel = git(content_dir, "rev-parse", "--show-toplevel").decode().strip()
    prefix = git(content_dir, "rev-parse", "--show-prefix").decode().strip()
    return Path(toplevel), prefix


def resolve(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()


def merge_base(repo: Path, a: str, b: str) -> str | None:
    try:
        return git(repo, "merge-base", a, b).decode().strip() or None
    except GitError:
        return None  # unrelated histories


def ls_tree(repo: Path, rev: str, prefix: str) -> dict[str, str]:
    """relative path (below `prefix`) -> blob sha, for every file of the tree."""
    args = ["ls-tree", "-r", "-z", "--full-tree", rev]
    if prefix:
        args += ["--", prefix.rstrip("/")]
    out: dict[str, str] = {}
    for entry in git(repo, *args).split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":  # symlinks are not records
            continue
        rel = path.decode("utf-8", "surrogateescape")
        out[rel[len(prefix):]] = sha.decode()
    return out


def read_blobs(repo: Path, shas: list[str]) -> dict[str, bytes]:
    """Contents of many blobs through a single `git cat-file --batch`."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    raw = git(repo, "cat-file", "--batch", input=("\n".join(unique) + "\n").encode())
    out: dict[str, bytes] = {}
    pos = 0
    for sha in unique:
        header_end = raw.index(b"\n", pos)
        header = raw[pos:header_end].split()
        if len(header) < 3 or header[1] == b"missing":
            pos = header_end + 1
            continue
        size = int(header[2])
        start = header_end + 1
        out[sha] = raw[start:start + size]
        pos = start + size + 1  # content is followed by a newline
    return out


def blob_sha(data: bytes) -> str:
    """The sha git gives these bytes as a blob (to match work-tree files to revisions)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
