"""`store.atomic`: the one way small state files (users, submitters, id leases, sync
state, caches) are replaced. Concurrent writers, a writer that fails half way, modes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from concurrently import run_at_once

from calendar_app.store import atomic


def _replace_often(path: Path, n: int, rounds: int = 60) -> None:
    for round_ in range(rounds):
        atomic.replace_text(path, f"{n} {round_} " + "x" * 4000)
        assert path.read_text().endswith("x" * 4000), "half a file seen"


def test_many_threads_replace_one_file_and_no_temp_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "state" / "users.yaml"
    assert run_at_once(lambda n: _replace_often(path, n), threads=8) == []
    assert [p.name for p in path.parent.iterdir()] == ["users.yaml"]


def test_a_writer_that_fails_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "lease.json"
    atomic.replace_text(path, "old")
    with pytest.raises(RuntimeError), atomic.replacing(path, durable=True) as fh:
        fh.write("half of the new")
        raise RuntimeError("disk went away")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["lease.json"]


def test_secret_files_are_private_and_others_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic.replace_text(tmp_path / "users.yaml", "x", mode=0o600)
        atomic.replace_text(tmp_path / "cache.json", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "users.yaml").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "cache.json").stat().st_mode) == 0o644


def test_binary_and_text_round_trip(tmp_path: Path) -> None:
    with atomic.replacing(tmp_path / "a.bin", binary=True) as fh:
        fh.write(b"\x00\xff")
    atomic.replace_text(tmp_path / "b.txt", "Zoë ✓")
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\xff"
    assert (tmp_path / "b.txt").read_bytes() == "Zoë ✓".encode()


def test_two_users_stores_save_at_once_and_lose_nothing(tmp_path: Path) -> None:
    """The users file had a fixed `.tmp` name: two saves at once (two processes each
    with its own store) renamed each other's temp file away, and one failed; and with
    no lock between processes, one's new user could overwrite the other's."""
    import yaml

    from calendar_app.store.users import UserStore

    path = tmp_path / "users.yaml"

    def add(n: int) -> None:
        store = UserStore(path, hash_n=16)
        for k in range(15):
            store.add(f"user{n}-{k}", "editor")

    assert run_at_once(add, threads=4) == []
    users = yaml.safe_load(path.read_text())["users"]
    assert sorted(u["name"] for u in users) == sorted(
        f"user{n}-{k}" for n in range(4) for k in range(15))
    assert len({u["id"] for u in users}) == 60
    assert sorted(p.name for p in tmp_path.iterdir()) == ["users.yaml", "users.yaml.lock"]
