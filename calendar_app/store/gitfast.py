"""The usual interface commit made inside the process, with libgit2 (pygit2).

`git add` and `git commit` cost three processes per write (the commit starts
`git maintenance run --auto`), each reading the index and the config: 25-60 ms under
the write lock on a busy machine, most of what a write holds it for. Here the same
commit is made in about a millisecond: the paths are staged in the index as `git add
-A -- paths` stages them, the commit's tree is HEAD's with only those paths taken from
the index (as `git commit -- paths`: whatever else is staged stays out; only the
folders on those paths' way are built again), and the branch moves only if it is
still at HEAD's commit (libgit2 checks), with its reflog.

Whenever git itself would do more than that, `commit` answers None and the caller runs
git: a signing key to use, hooks that run even with --no-verify, attributes (filters,
line endings), dates fixed by the environment, a lock held, any libgit2 error. git
then does it, or fails with its own words.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

# Hooks `git commit --no-verify` still runs: a commit made here must let git run them.
_HOOKS = ("prepare-commit-msg", "post-commit", "reference-transaction", "post-index-change")
_AUTHOR = re.compile(r"^([^<>\n]*?) *<([^<>\n]*)>$")
# git runs `maintenance run --auto` after every commit (it packs loose objects past
# gc.auto); here once per this many in-process commits of a process.
MAINTENANCE_EVERY = 64


def cleanup_message(message: str) -> str:
    """The message as `git commit -m` stores it (cleanup "whitespace"): trailing spaces
    and leading/trailing blank lines gone, runs of blank lines made one, one newline."""
    lines = [line.rstrip() for line in message.splitlines()]
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


def plain_repository(git_dir: Path, work_root: Path, env: Mapping[str, str]) -> bool:
    """Whether a commit here is git's own: nothing configured that git would do on
    top (checked on each commit, the configuration may change while serving)."""
    if any(k in env for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GIT_INDEX_FILE",
                              "GIT_DIR", "GIT_WORK_TREE")):
        return False
    if (work_root / ".gitattributes").exists() or (git_dir / "info/attributes").exists():
        return False
    return not (git_dir / "index.lock").exists()  # else git says which lock, and what to do


def commit(git_root: Path, git_dir: Path, paths: Sequence[str], message: str, author: str,
           env: Mapping[str, str]) -> bool | None:
    """Commit exactly `paths` (repository-relative, POSIX) as they are on disk: True,
    False when nothing changed, None when git must make this commit (see the module)."""
    match = _AUTHOR.match(author)
    text = cleanup_message(message)
    if match is None or not text or not plain_repository(git_dir, git_root, env):
        return None
    import pygit2  # only the serving process commits; `check` and friends never do

    try:
        repo = pygit2.Repository(str(git_dir))
        if _git_must_commit(repo, git_dir):
            return None
        return _commit(pygit2, repo, git_root, paths, text, match.groups(), env)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _git_must_commit(repo: object, git_dir: Path) -> bool:
    config = repo.config  # type: ignore[attr-defined]
    with contextlib.suppress(KeyError, ValueError):
        if config.get_bool("commit.gpgsign"):
            return True
    hooks = git_dir / "hooks"
    if "core.hooksPath" in config:
        hooks = Path(repo.workdir or git_dir) / os.path.expanduser(  # type: ignore[attr-defined]
            config["core.hooksPath"])
    return any(os.access(hooks / name, os.X_OK) for name in _HOOKS)


def _commit(pygit2: object, repo: object, git_root: Path, paths: Sequence[str], text: str,
            author: tuple[str, str], env: Mapping[str, str]) -> bool:
    index = repo.index  # type: ignore[attr-defined]
    for path in paths:
        if os.path.lexists(git_root / path):
            index.add(path)
        elif path in index:
            index.remove(path)
    head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)  # type: ignore
    changes = {tuple(path.split("/")): index[path] if path in index else None  # noqa: SIM401
               for path in paths}
    built = _tree_with(pygit2, repo, None if head is None else head.tree, changes)
    tree = built[0] if built is not None else _tree_by_index(pygit2, repo, head, index, paths)
    index.write()  # staged as `git add` leaves them, committed or not
    if head is not None and tree == head.tree_id:
        return False
    committer = pygit2.Signature(env.get("GIT_COMMITTER_NAME", "calendar-app"),  # type: ignore
                                 env.get("GIT_COMMITTER_EMAIL", "calendar-app@localhost"))
    who = pygit2.Signature(*author)  # type: ignore[attr-defined]
    repo.create_commit("HEAD", who, committer, text, tree,  # type: ignore[attr-defined]
                       [head.id] if head is not None else [])
    return True


def _tree_with(pygit2: object, repo: object, tree: object | None,
               changes: dict[tuple[str, ...], object | None]) -> tuple[object, int] | None:
    """(id, entries) of `tree` (None: none yet) with `changes` (path parts -> the index
    entry to take, None: gone) applied, built from the folders on their way alone: a
    commit in a folder of 100,000 files does not rebuild every other one (reading all
    of HEAD's tree into an index and writing it back cost ~65 ms CPU a write at 20,000
    files, this ~25). None when a path runs through a file or ends on a folder, or two
    paths do (a file becoming a folder): `_tree_by_index` then."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()  # type: ignore
    folders: dict[str, dict[tuple[str, ...], object | None]] = {}
    leaves = set()
    for parts, entry in changes.items():
        name, old = parts[0], _entry(tree, parts[0])
        if len(parts) == 1:
            if old is not None and old.type_str == "tree":  # type: ignore[attr-defined]
                return None
            leaves.add(name)
            if entry is not None:
                builder.insert(name, entry.id, entry.mode)  # type: ignore[attr-defined]
            elif old is not None:
                builder.remove(name)
        elif old is not None and old.type_str != "tree":  # type: ignore[attr-defined]
            return None
        else:
            folders.setdefault(name, {})[parts[1:]] = entry
    if leaves & folders.keys():
        return None
    for name, below in folders.items():
        old = _entry(tree, name)
        built = _tree_with(pygit2, repo, old, below)
        if built is None:
            return None
        if built[1]:
            builder.insert(name, built[0], pygit2.GIT_FILEMODE_TREE)  # type: ignore
        elif old is not None:  # git keeps no empty folder
            builder.remove(name)
    return builder.write(), len(builder)


class _Blob(NamedTuple):
    id: object  # pygit2.Oid
    mode: int


def tree_with(repo: object, tree: object | None,
              changes: Mapping[str, tuple[str, int] | None]) -> object | None:
    """The id of `tree` with `changes` (path -> (blob id, mode), None: gone) applied,
    built from the folders on their way (`_tree_with`); None where a whole index must
    build it (a file becoming a folder, or the reverse)."""
    import pygit2

    entries = {tuple(path.split("/")): None if change is None
               else _Blob(pygit2.Oid(hex=change[0]), change[1])
               for path, change in changes.items()}
    built = _tree_with(pygit2, repo, tree, entries)
    return None if built is None else built[0]


def _entry(tree: object | None, name: str) -> object | None:
    return tree[name] if tree is not None and name in tree else None  # type: ignore[index]


def _tree_by_index(pygit2: object, repo: object, head: object | None, index: object,
                   paths: Sequence[str]) -> object:
    """HEAD's tree with `paths` as the index has them, through a whole index."""
    only = pygit2.Index()  # type: ignore[attr-defined]
    if head is not None:
        only.read_tree(head.tree)  # type: ignore[attr-defined]
    for path in paths:
        if path in index:  # type: ignore[operator]
            only.add(index[path])  # type: ignore[index]
        elif path in only:
            only.remove(path)
    return only.write_tree(repo)


def read_ref(git_dir: Path | None, name: str) -> str | None:
    """The commit a full ref name (or HEAD) points to, as `git rev-parse --verify -q`
    gives it: "" when there is no such ref, None when git must answer."""
    if git_dir is None or (name != "HEAD" and not name.startswith("refs/")):
        return None  # git's own lookup rules for short names
    import pygit2

    try:
        ref = pygit2.Repository(str(git_dir)).references.get(name)
        return "" if ref is None else str(ref.resolve().target)
    except (pygit2.GitError, KeyError, ValueError):
        return None


def set_ref(git_dir: Path | None, name: str, sha: str, message: str) -> bool:
    """`git update-ref name sha` (with a reflog entry where git would write one);
    False when git must do it."""
    if git_dir is None or not name.startswith("refs/"):
        return False
    import pygit2

    try:
        repo = pygit2.Repository(str(git_dir))
        repo.create_reference_direct(name, pygit2.Oid(hex=sha), True, message=message)
    except (pygit2.GitError, KeyError, ValueError):
        return False
    return True


def preload() -> None:
    """Import libgit2 now (the serving process, before forking workers): ~0.3 s that a
    first write would otherwise pay holding the write lock."""
    import pygit2  # noqa: F401


def delete_ref(git_dir: Path | None, name: str) -> bool:
    """`git update-ref -d name`; False when git must do it."""
    if git_dir is None or not name.startswith("refs/"):
        return False
    import pygit2

    try:
        ref = pygit2.Repository(str(git_dir)).references.get(name)
        if ref is not None:
            ref.delete()
    except (pygit2.GitError, KeyError, ValueError):
        return False
    return True


def ahead(git_dir: Path | None, local: str, upstream: str) -> int | None:
    """How many commits `local` has that `upstream` lacks (full ref names; an absent
    upstream lacks them all); None when git must count."""
    if git_dir is None:
        return None
    import pygit2

    try:
        repo = pygit2.Repository(str(git_dir))
        mine = repo.references.get(local)
        if mine is None:
            return 0
        theirs = repo.references.get(upstream)
        head = mine.resolve().target
        if theirs is None:
            return sum(1 for _ in repo.walk(head))
        return repo.ahead_behind(head, theirs.resolve().target)[0]
    except (pygit2.GitError, KeyError, ValueError):
        return None
