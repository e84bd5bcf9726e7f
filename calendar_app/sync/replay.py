"""Integrating a fetched remote head in-process when nobody's changes overlap.

After a refused push, `git rebase` (with its merge driver, `notes copy`, a process per
step) was most of what a write cost with several instances on one remote. In the
usual case there is nothing to merge: the remote's new commits changed other records
than ours. Then our unpushed commits are replayed here with libgit2 (pygit2): each one
again on the fetched head, with its own author, message and committer identity, its
tree the previous one's with only its own paths changed; only the paths the remote
changed are checked out into the work tree and index; then the branch moves.

Anything unusual answers None and git does it as before (sync.py: `_move_displaced`
and `_rebase`, so slugs, key-level merges and conflict records stay exactly as they
were): a path both sides changed (or a file on one side where the other has a folder),
a merge commit or an empty one of ours, a message in another encoding, submodules,
attributes or hooks-free plumbing git would not do the same way (gitfast.py decides),
a work-tree file at a path the remote changed that differs from what was committed.

A crash between the checkout and the branch move would leave the remote's files in
the work tree under our old head: a marker file (old head, new head, paths) is written
first and `finish` completes it under the write lock before anything else happens.

A write's push after a lost race needs the result before the write lock: `rebuild`
makes the commits as objects only (they are pushed at once), and `adopt`, under the
write lock, replays onto them what was committed since (often nothing) and then does
what `replay` does: marker, checkout, branch move. Nothing outside the lock touches the
branch, the index, the work tree or the marker; a crash before `adopt` leaves the
branch behind the remote with commits it already has, which git's rebase drops.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..store import atomic, gitfast

MAX_COMMITS = 1000  # more unpushed commits than this: git rebases (a long outage)
_GITLINK = 0o160000


@dataclass(frozen=True)
class Replayed:
    """The branch went from `old` to `new`; `changed`: repository paths the remote's
    commits changed (what the work tree got)."""
    old: str
    new: str
    changed: frozenset[str]


def replay(git_dir: Path, git_root: Path, branch: str, target: str,
           marker: Path) -> Replayed | None:
    """Put the local branch's commits that `target` lacks on top of `target`; None when
    git must (see the module). Called with the write lock held."""
    return _in_repo(git_dir, git_root, lambda pygit2, repo: _replay(
        pygit2, repo, f"refs/heads/{branch}", target, marker))


def rebuild(git_dir: Path, git_root: Path, branch: str, target: str) -> Replayed | None:
    """Our commits made again on `target` as objects only, without the write lock: the
    branch, index and work tree are left alone (`new` can be pushed at once; `adopt`
    moves the branch there afterwards). None when git must integrate (as `replay`)."""
    return _in_repo(git_dir, git_root, lambda pygit2, repo: _plan(
        pygit2, repo, f"refs/heads/{branch}", target))


def adopt(git_dir: Path, git_root: Path, branch: str, rebuilt: Replayed,
          marker: Path) -> Replayed | None:
    """Under the write lock, once `rebuilt` (from `rebuild`) is on the remote: the
    branch moved onto it as `replay` would have (marker, the remote's paths checked
    out), the commits written since `rebuilt.old` replayed on top of it; None where git
    must integrate (they touched the remote's paths, the work tree differs there)."""
    return _in_repo(git_dir, git_root, lambda pygit2, repo: _replay(
        pygit2, repo, f"refs/heads/{branch}", rebuilt.new, marker, rebuilt.old))


def _in_repo(git_dir: Path, git_root: Path,
             run: Callable[[object, object], Replayed | None]) -> Replayed | None:
    if not gitfast.plain_repository(git_dir, git_root, os.environ):
        return None
    import pygit2

    try:
        return run(pygit2, pygit2.Repository(str(git_dir)))
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _replay(pygit2: object, repo: object, ref_name: str, target_hex: str,
            marker: Path, base_hex: str = "") -> Replayed | None:
    planned = _plan(pygit2, repo, ref_name, target_hex, base_hex)
    if planned is not None:
        _apply(pygit2, repo, repo.references[ref_name], planned, marker,  # type: ignore
               f"rebase (in-process): onto {target_hex}")
    return planned


def _plan(pygit2: object, repo: object, ref_name: str, target_hex: str,
          base_hex: str = "") -> Replayed | None:
    """Our commits since the merge base (or since `base_hex`, which the branch must
    hold: the remote's changes are then those from it to the target) made again on the
    target, as objects only; None where git must integrate."""
    head_ref = repo.references.get(ref_name)  # type: ignore[attr-defined]
    if head_ref is None or repo.head_is_detached or repo.head.name != ref_name:  # type: ignore
        return None
    head = head_ref.target
    target = repo[pygit2.Oid(hex=target_hex)].peel(pygit2.Commit)  # type: ignore
    base = pygit2.Oid(hex=base_hex) if base_hex \
        else repo.merge_base(head, target.id)  # type: ignore[attr-defined]
    if base is None or (head != base and not repo.descendant_of(head, base)):  # type: ignore
        return None
    theirs = _changes(repo, repo[base].tree, target.tree)  # type: ignore[index]
    ours = _our_commits(pygit2, repo, head, base)
    if ours is None or any(_gitlink(change) for change in theirs.values()):
        return None
    for _commit, changes in ours:
        if not changes or _overlap(theirs, changes) or any(map(_gitlink, changes.values())):
            return None
    if not _clean(pygit2, repo, theirs):
        return None
    new = _build(pygit2, repo, target, ours)
    return Replayed(str(head), str(new), frozenset(theirs))


def _apply(pygit2: object, repo: object, head_ref: object, planned: Replayed,
           marker: Path, message: str) -> None:
    """The marker, the remote's paths checked out, the branch moved, the marker gone."""
    paths = sorted(planned.changed)
    atomic.replace_text(marker, json.dumps({"ref": head_ref.name,  # type: ignore
                                            "old": planned.old, "new": planned.new,
                                            "paths": paths}))
    new = pygit2.Oid(hex=planned.new)  # type: ignore[attr-defined]
    if paths:
        repo.checkout_tree(repo[new].tree, paths=paths,  # type: ignore[attr-defined,index]
                           strategy=pygit2.enums.CheckoutStrategy.FORCE)  # type: ignore
    _move(head_ref, new, message)
    marker.unlink()


def _move(ref: object, new: object, message: str) -> None:
    """The branch's move, last: until it, the marker says what to finish."""
    ref.set_target(new, message)  # type: ignore[attr-defined]


def _our_commits(pygit2: object, repo: object, head: object, base: object
                 ) -> list[tuple[object, dict]] | None:
    """Our commits since `base`, oldest first, each with its changes; None if one is
    not a plain single-parent commit or there are too many."""
    walker = repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL  # type: ignore
                       | pygit2.enums.SortMode.REVERSE)  # type: ignore[attr-defined]
    walker.hide(base)
    found = []
    for commit in walker:
        if len(commit.parent_ids) != 1 or commit.message_encoding or len(found) >= MAX_COMMITS:
            return None
        found.append((commit, _changes(repo, commit.parents[0].tree, commit.tree)))
    return found


def _changes(repo: object, old: object, new: object) -> dict[str, tuple[str, int] | None]:
    """path -> (blob, mode) in `new`, or None where `new` lacks it (no rename finding)."""
    found: dict[str, tuple[str, int] | None] = {}
    for delta in repo.diff(old, new).deltas:  # type: ignore[attr-defined]
        if delta.status_char() != "A":
            found[delta.old_file.path] = None
        if delta.status_char() != "D":
            found[delta.new_file.path] = (str(delta.new_file.id), delta.new_file.mode)
    return found


def _gitlink(change: tuple[str, int] | None) -> bool:
    return change is not None and change[1] == _GITLINK


def _overlap(theirs: dict, ours: dict) -> bool:
    """Whether both changed one path, or one side a file where the other has a folder
    (a folder both sides only put files into is no overlap)."""
    return bool(theirs.keys() & _with_folders(ours) or ours.keys() & _with_folders(theirs))


def _with_folders(changes: dict) -> set[str]:
    """The paths and every folder above them."""
    found = set()
    for path in changes:
        parts = path.split("/")
        found.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    return found


def _clean(pygit2: object, repo: object, paths: dict) -> bool:
    """Whether the work tree and index hold, at each path the remote changed, what our
    head has there (a local edit there is git's to refuse)."""
    for path in paths:
        try:
            if repo.status_file(path):  # type: ignore[attr-defined]
                return False
        except KeyError:  # neither in the index nor on disk
            continue
    return True


def _build(pygit2: object, repo: object, target: object, ours: list) -> object:
    """Our commits again on `target`, one by one; the newest one's id. Each tree is the
    previous one with the commit's paths changed, built from the folders on their way
    (gitfast.tree_with): a whole index written per commit cost ~4 ms each at a few
    hundred files, and a clone that lost a race replays every unpushed commit."""
    tree, parent = target.tree.id, target.id  # type: ignore[attr-defined]
    for commit, changes in ours:
        tree = gitfast.tree_with(repo, repo[tree], changes) \
            or _tree_by_index(pygit2, repo, tree, changes)  # type: ignore[index]
        committer = pygit2.Signature(commit.committer.name, commit.committer.email)  # type: ignore
        parent = repo.create_commit(None, commit.author, committer,  # type: ignore
                                    commit.raw_message, tree, [parent])
    return parent


def _tree_by_index(pygit2: object, repo: object, tree: object, changes: dict) -> object:
    """`tree` with `changes` applied through a whole index (a file becoming a folder:
    what goes is removed before what comes is added)."""
    index = pygit2.Index()  # type: ignore[attr-defined]
    index.read_tree(repo[tree])  # type: ignore[index]
    for path, change in sorted(changes.items(), key=lambda item: item[1] is not None):
        if change is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=change[0]),  # type: ignore
                                        change[1]))
    return index.write_tree(repo)


def finish(git_dir: Path, marker: Path) -> set[str]:
    """Complete a replay a crash cut short (the write lock held): the branch moves to
    the replayed head if it is still at the old one, and the marked paths are checked
    out as the branch has them. The repository paths checked out (none: no marker)."""
    try:
        left = json.loads(marker.read_text())
        paths = [str(p) for p in left["paths"]]
    except FileNotFoundError:
        return set()
    except (OSError, ValueError, KeyError, TypeError):  # a torn marker: nothing moved
        marker.unlink(missing_ok=True)
        return set()
    import pygit2

    repo = pygit2.Repository(str(git_dir))
    ref = repo.references.get(str(left["ref"]))
    if ref is not None and str(ref.target) == left["old"] and left["new"] in repo:
        ref.set_target(pygit2.Oid(hex=left["new"]), "rebase (in-process): finished")
    if paths and ref is not None:
        repo.checkout_tree(repo[ref.target].tree, paths=paths,
                           strategy=pygit2.enums.CheckoutStrategy.FORCE)
    marker.unlink()
    return set(paths)


def rewritten(git_dir: Path | None, known: str, target: str) -> bool | None:
    """Whether the remote branch lost `known` (a commit we had seen on it): `known` is
    a commit here and not an ancestor of `target`. None when git must answer."""
    if git_dir is None:
        return None
    import pygit2

    try:
        repo = pygit2.Repository(str(git_dir))
        if not known or known == target or known not in repo:
            return False
        if not isinstance(repo[known], pygit2.Commit):
            return False
        return not repo.descendant_of(target, known)
    except (pygit2.GitError, KeyError, ValueError):
        return None


def on_branch(git_dir: Path | None) -> str | None:
    """The branch HEAD is on (short name); None when detached or unsure (git says)."""
    try:
        head = (Path(git_dir) / "HEAD").read_text() if git_dir else ""
    except OSError:
        return None
    return head[16:].strip() if head.startswith("ref: refs/heads/") else None
