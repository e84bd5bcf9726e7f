"""Blocks of ids leased from the shared repository, so that several servers sharing one
remote never hand out the same id, even while cut off from each other.

The leases live on a ref of the remote (`refs/calendar/id-leases`), outside every
branch: a chain of tiny commits whose tree holds one file, `leases`, a line per block
("instance first last time"). Taking a block is git's compare-and-swap on that ref:
fetch it, append a line above every block and every id in our tree, push the new
commit with `--force-with-lease=<ref>:<the commit we read>`. Of two instances racing,
one push is refused; that one fetches again and takes the next block.

The block an instance holds, and the next id in it, are kept in a file of its own clone
(written before the id is used), so a restart continues the same block and never hands
out an id twice, even one whose record was deleted meanwhile. Cut off from the remote,
an instance goes on within its block; once that is used up it refuses to make records
(`LeaseUnavailable`) rather than take an id no lease covers.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import random
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import clock as clocks
from .content import git_env

log = logging.getLogger(__name__)
LEASES_REF = "refs/calendar/id-leases"
LEASES_FILE = "leases"
STATE_FILE = "calendar-id-lease.json"  # in the clone's git directory
DEFAULT_BLOCK = 100
_ATTEMPTS = 30  # compare-and-swap rounds before giving up (each loser retries at once)


class LeaseUnavailable(RuntimeError):
    """No id left in our block and no new block could be leased: `str()` says why."""


@dataclass(frozen=True)
class Lease:
    instance: str
    first: int
    last: int
    time: str

    def line(self) -> str:
        return f"{self.instance} {self.first} {self.last} {self.time}\n"

    def __contains__(self, record_id: object) -> bool:
        return isinstance(record_id, int) and self.first <= record_id <= self.last


def parse_leases(text: str) -> list[Lease]:
    """The leases file; lines that do not read as a lease are skipped (never written)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
            out.append(Lease(parts[0], int(parts[1]), int(parts[2]), parts[3]))
    return out


def read_leases(repo: Path, ref: str = LEASES_REF) -> list[Lease]:
    """The leases recorded on `ref` of a local repository ([] when it has none)."""
    proc = _run(repo, "cat-file", "blob", f"{ref}:{LEASES_FILE}")
    return parse_leases(proc.stdout) if proc.returncode == 0 else []


class IdLeases:
    """The ids this clone may hand out. `allocate` is called with the tree's write lock
    held (one caller at a time across threads and processes of this clone)."""

    def __init__(self, repo: Path, remote: str, instance: str | None = None,
                 block_size: int = DEFAULT_BLOCK, state_file: Path | None = None,
                 clock: clocks.Clock = clocks.system_now) -> None:
        if block_size < 1:
            raise ValueError("block_size must be at least 1")
        self.repo = Path(repo)
        self.remote = remote
        self.block_size = block_size
        self.state_file = state_file or _git_dir(self.repo) / STATE_FILE
        self._instance = instance
        self._clock = clock  # the time a lease line records, for people reading it
        self._lock = threading.Lock()
        self.lease_attempts = 0  # compare-and-swap rounds, for tests and measurements

    def allocate(self, highest_used: int, taken: Callable[[int], bool]) -> int:
        """A new id: the next one of our block not `taken` (an id in the tree, retired,
        or written by hand meanwhile); a newly leased block above `highest_used` and
        every lease when ours is used up. Raises `LeaseUnavailable`."""
        with self._lock:
            state = self._load()
            candidate, last = state.get("next", 1), state.get("last", 0)
            while candidate <= last and taken(candidate):
                candidate += 1
            if candidate > last:
                lease = self._lease_block(highest_used, state["instance"])
                state.update(first=lease.first, last=lease.last)
                candidate = lease.first  # above every id taken: nothing to skip
            state["next"] = candidate + 1
            self._save(state)  # before the id is used: a restart never repeats it
            return candidate

    def ensure_block(self, highest_used: int) -> None:
        """Lease a block now, at start, if none has an id left: a server cut off from
        the remote right after it starts can still make records. A remote out of
        reach now is not an error yet (the first new record will say so)."""
        with self._lock:
            state = self._load()
            if state.get("next", 1) <= state.get("last", 0):
                return
            try:
                lease = self._lease_block(highest_used, state["instance"])
            except LeaseUnavailable as exc:
                log.warning("no block of ids leased at start: %s", exc)
                return
            state.update(first=lease.first, last=lease.last, next=lease.first)
            self._save(state)

    def current(self) -> tuple[int, int] | None:
        """(next id, last id) of the block held, None when none is."""
        state = self._load()
        return (state["next"], state["last"]) if "last" in state else None

    # -- the local state --------------------------------------------------------
    def _load(self) -> dict:
        try:
            state = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            state = {}
        state.setdefault("instance", self._instance or _default_instance())
        if self._instance:
            state["instance"] = self._instance
        return state

    def _save(self, state: dict) -> None:
        tmp = self.state_file.with_name(self.state_file.name + ".tmp")
        with open(tmp, "w") as fh:
            json.dump(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.state_file)
        fd = os.open(self.state_file.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- the remote ref -----------------------------------------------------------
    def _lease_block(self, highest_used: int, instance: str) -> Lease:
        why = ""
        for attempt in range(_ATTEMPTS):
            self.lease_attempts += 1
            old_sha, leases = self._fetch()
            first = max([highest_used, *(lease.last for lease in leases)]) + 1
            stamp = self._clock().astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            lease = Lease(instance, first, first + self.block_size - 1, stamp)
            new_sha = self._commit(old_sha, [*leases, lease])
            proc = _run(self.repo, "push", "--porcelain", "--no-verify",
                        f"--force-with-lease={LEASES_REF}:{old_sha or ''}", self.remote,
                        f"{new_sha}:{LEASES_REF}")
            if proc.returncode == 0:
                _run(self.repo, "update-ref", LEASES_REF, new_sha)
                return lease
            why = _last_line(proc.stderr or proc.stdout)
            if "rejected" not in proc.stdout:  # not a lost race: unreachable, refused
                raise LeaseUnavailable(f"could not lease new ids from {self.remote}: {why}")
            time.sleep(random.uniform(0, 0.01 * (attempt + 1)))  # let the winner go
        raise LeaseUnavailable(f"{_ATTEMPTS} concurrent attempts to lease ids from "
                               f"{self.remote} failed: {why}")

    def _fetch(self) -> tuple[str | None, list[Lease]]:
        """The remote's leases commit (None when there is none yet) and its leases."""
        proc = _run(self.repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                    self.remote, f"+{LEASES_REF}:{LEASES_REF}")
        if proc.returncode != 0:
            if "couldn't find remote ref" in proc.stderr:
                _run(self.repo, "update-ref", "-d", LEASES_REF)
                return None, []
            raise LeaseUnavailable(f"could not reach {self.remote} to lease new ids: "
                                   f"{_last_line(proc.stderr)}")
        sha = _run(self.repo, "rev-parse", "--verify", "-q", LEASES_REF).stdout.strip()
        return sha, read_leases(self.repo)

    def _commit(self, parent: str | None, leases: list[Lease]) -> str:
        text = "".join(lease.line() for lease in leases)
        blob = _run(self.repo, "hash-object", "-w", "--stdin", input=text).stdout.strip()
        tree = _run(self.repo, "mktree", input=f"100644 blob {blob}\t{LEASES_FILE}\n")
        last = leases[-1]
        args = ["commit-tree", tree.stdout.strip(), "-m",
                f"lease ids {last.first}-{last.last} to {last.instance}"]
        if parent:
            args += ["-p", parent]
        return _run(self.repo, *args).stdout.strip()


def _default_instance() -> str:
    """A name for the leases file (only for people reading it: safety never depends on
    names being unique); made once per clone and kept in the state file."""
    return f"{socket.gethostname() or 'server'}-{os.urandom(3).hex()}"


def _git_dir(repo: Path) -> Path:
    out = _run(repo, "rev-parse", "--absolute-git-dir")
    if out.returncode != 0:
        raise LeaseUnavailable(f"{repo} is not in a git repository: "
                               f"{_last_line(out.stderr)}")
    return Path(out.stdout.strip())


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _run(repo: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    env = git_env()
    env.setdefault("GIT_AUTHOR_NAME", "calendar-app")  # commit-tree takes no --author
    env.setdefault("GIT_AUTHOR_EMAIL", "calendar-app@localhost")
    proc = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True,
                          text=True, env=env, check=False)
    if proc.returncode != 0 and args[0] in ("hash-object", "mktree", "commit-tree"):
        raise LeaseUnavailable(f"git {args[0]} failed: {_last_line(proc.stderr)}")
    return proc
