"""A large write (an import) syncs the file system once instead of each file, and stays
all-or-nothing: files renamed into place unsynced are written again from the intent
when the write was cut off (store/content.py `_apply`, `_sync_written`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git

from calendar_app.store import content as content_mod
from calendar_app.store.content import SYNC_ONCE_FROM, ContentTree

AUTHOR = "Importer <importer@example.org>"


def _changes(n: int, word: str = "Imported") -> dict[str, str]:
    return {f"venues/bulk-{i}.yaml": f"id: {9000 + i}\nname: {word} {i}\nslug: bulk-{i}\n"
            for i in range(n)}


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)
    monkeypatch.setattr(content_mod.os, "fsync", counting)
    return calls


def _syncfs_calls(monkeypatch: pytest.MonkeyPatch, works: bool) -> list[Path]:
    calls: list[Path] = []
    real = content_mod.bulkwrite.syncfs

    def recording(folder: Path) -> bool:
        calls.append(folder)
        return real(folder) if works else False
    monkeypatch.setattr(content_mod.bulkwrite, "syncfs", recording)
    return calls


def test_a_large_write_syncs_the_file_system_once(content: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    syncs, fsyncs = _syncfs_calls(monkeypatch, True), _fsyncs(monkeypatch)
    before = int(git(content, "rev-list", "--count", "HEAD"))
    changes = _changes(SYNC_ONCE_FROM)
    tree.apply(changes, "Import 32 venues", AUTHOR)
    assert len(syncs) == 1
    assert len(fsyncs) <= 3  # the intent and its folder, not one a file
    for path, text in changes.items():
        assert (content / path).read_text() == text
    assert int(git(content, "rev-list", "--count", "HEAD")) == before + 1
    assert git(content, "log", "-1", "--format=%an <%ae>|%s").strip() == f"{AUTHOR}|Import 32 venues"
    assert git(content, "status", "--porcelain").strip() == ""
    assert not list((content / "venues").glob(".tmp-*"))
    assert not tree.intent_path.exists()


def test_a_small_write_syncs_each_file_as_before(content: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    syncs, fsyncs = _syncfs_calls(monkeypatch, True), _fsyncs(monkeypatch)
    tree.apply(_changes(SYNC_ONCE_FROM - 1), "A few venues", AUTHOR)
    assert syncs == []
    assert len(fsyncs) >= SYNC_ONCE_FROM - 1


def test_without_syncfs_each_file_is_synced_after_all(content: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    syncs, fsyncs = _syncfs_calls(monkeypatch, False), _fsyncs(monkeypatch)
    changes = _changes(SYNC_ONCE_FROM + 5)
    tree.apply(changes, "Import", AUTHOR)
    assert len(syncs) == 1
    assert len(fsyncs) >= len(changes) + 1  # every file, then the folder
    assert all((content / p).read_text() == t for p, t in changes.items())


def test_files_left_unsynced_by_a_crash_are_written_again(content: Path, tmp_path: Path) -> None:
    """A crash after the renames, before the sync: the files may be empty on disk. The
    intent, written and synced first, rolls the whole write forward at the next start."""
    tree = ContentTree(content, tmp_path / "lock")
    changes = _changes(SYNC_ONCE_FROM + 8, "Rolled")
    for path in changes:  # what a crash can leave: renamed, data never written
        (content / path).parent.mkdir(parents=True, exist_ok=True)
        (content / path).write_text("")
    (content / "venues/.tmp-0123456789ab.part").write_text("id: 1\nna")
    tree.lock_path.parent.mkdir(parents=True, exist_ok=True)
    tree.intent_path.write_text(json.dumps({"message": "Import", "author": AUTHOR,
                                            "changes": changes, "retire": [], "files": []}))
    assert tree.recover() is not None
    assert all((content / p).read_text() == t for p, t in changes.items())
    assert not list((content / "venues").glob(".tmp-*"))
    assert "Completed after an interrupted write." in git(content, "log", "-1", "--format=%B")
    assert git(content, "status", "--porcelain").strip() == ""
    assert not tree.intent_path.exists()


def test_a_failed_large_write_puts_every_file_back(content: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    old = "venues/bulk-3.yaml"
    (content / old).write_text("id: 9003\nname: Before\nslug: bulk-3\n")
    git(content, "add", old)
    git(content, "commit", "-qm", "before")
    head = git(content, "rev-parse", "HEAD")

    def broken(folder: Path) -> bool:
        raise OSError("disk gone")
    monkeypatch.setattr(content_mod.bulkwrite, "syncfs", broken)
    with pytest.raises(OSError, match="disk gone"):
        tree.apply(_changes(SYNC_ONCE_FROM + 2), "Import", AUTHOR)
    assert (content / old).read_text() == "id: 9003\nname: Before\nslug: bulk-3\n"
    assert not (content / "venues/bulk-0.yaml").exists()
    assert git(content, "rev-parse", "HEAD") == head
    assert git(content, "status", "--porcelain").strip() == ""


def test_a_large_commit_takes_removals_and_leaves_other_staged_work_alone(
        content: Path, tmp_path: Path) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    tree.apply(_changes(SYNC_ONCE_FROM), "First import", AUTHOR)
    # Someone's own work, staged in the index: not part of the import's commit.
    (content / "notes.txt").write_text("mine\n")
    git(content, "add", "notes.txt")
    changes: dict[str, str | None] = {f"venues/bulk-{i}.yaml": None for i in range(10)}
    changes.update(_changes(SYNC_ONCE_FROM + 4, "Again"))
    del changes["venues/bulk-0.yaml"]
    changes |= {f"venues/bulk-{i}.yaml": None for i in range(3)}
    changes["venues/never-there.yaml"] = None  # git never had it: passed over
    tree.apply(changes, "Second import", AUTHOR)
    shown = git(content, "show", "--name-status", "--format=%s", "HEAD")
    assert shown.startswith("Second import")
    assert "D\tcontent/venues/bulk-0.yaml" in shown or "D\tvenues/bulk-0.yaml" in shown
    assert "notes.txt" not in shown and "never-there" not in shown
    assert not (content / "venues/bulk-2.yaml").exists()
    assert (content / "venues/bulk-35.yaml").read_text().startswith("id: 9035\nname: Again")
    # The index holds what was committed, and the staged note still waits.
    assert [line for line in git(content, "status", "--porcelain").splitlines()
            if "venues/" in line] == []
    staged = git(content, "diff", "--cached", "--name-only").split()
    assert len(staged) == 1 and staged[0].endswith("notes.txt")


def test_a_large_write_that_changes_nothing_makes_no_commit(content: Path,
                                                             tmp_path: Path) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    changes = _changes(SYNC_ONCE_FROM)
    tree.apply(changes, "Import", AUTHOR)
    head = git(content, "rev-parse", "HEAD")
    tree.apply(changes, "Import again", AUTHOR)
    assert git(content, "rev-parse", "HEAD") == head
    assert not list(tree.git_dir.glob("calendar-app-index-*"))


def test_a_large_write_stores_its_texts_as_one_pack(content: Path, tmp_path: Path) -> None:
    tree = ContentTree(content, tmp_path / "lock")
    loose_before = int(git(content, "count-objects").split()[0])
    # Above git's fastimport.unpackLimit (100), below which it makes loose objects.
    tree.apply(_changes(150, "Packed"), "Import", AUTHOR)
    counts = dict(line.split(": ") for line in git(content, "count-objects", "-v").splitlines())
    assert int(counts["in-pack"]) >= 150
    # Only the trees and the commit are loose: no blob was written one file each.
    assert int(counts["count"]) - loose_before <= 5
    blob = git(content, "rev-parse", "HEAD:" + str(
        (content / "venues/bulk-7.yaml").relative_to(
            Path(git(content, "rev-parse", "--show-toplevel").strip()))))
    assert git(content, "cat-file", "-p", blob.strip()).startswith("id: 9007\nname: Packed 7")
