"""Blocks of ids leased from the shared repository, so that several servers sharing one
remote never hand out the same id, even while cut off from each other.

The leases live on a ref of the remote (`refs/calendar/id-leases`), outside every
branch: a chain of tiny commits whose tree holds one file, `leases`, a line per block
("instance first last time"). Taking a block is git's compare-and-swap on that ref:
fetch it, append a line above every block and every id in our tree, push the new
commit with `--force-with-lease=<ref>:<the commit we read>`. Of two instances racing,
one push is refused; that one fetches again and takes the next block.

The block an instance holds, and a high-water mark in it, are kept in a file of its own
clone. As a database sequence caches values, a process reserves `RESERVE_STEP` ids at a
time: the file's `next` moves past them, saved durably (fsync) before the first is used,
and the ids below that mark are then handed out from memory, one fsync per step of ids
instead of one per id. Every process of a clone reserves its own run, so ids from two
workers interleave and are not in creation order. A restart, or a crash, continues from
the saved mark: it never hands out an id twice, even one whose record was deleted
meanwhile, and skips at most the rest of each process's run (ids need not be dense). A
run never passes the end of the block it is in. Cut off from the remote,
an instance goes on within its block; once that is used up it refuses to make records
(`LeaseUnavailable`) rather than take an id no lease covers.

Anyone who can push may write the ref, so it is read as untrusted input: every line
must be a well-formed block within 1..ids.MAX_ID, each above the one before, or the
whole ref is refused (`BadLeases`). A ref that vanished or went backwards (its blocks
end below the highest this clone leased there) is refused too: taking blocks from it
could hand out ids already given. Refused, a server keeps serving and changing records;
only new records wait (503) until the ref is repaired (docs/deployment.md).

Leasing talks to the remote, so it is bounded: every fetch and push together within
`LEASE_TIMEOUT` (git and its helpers killed past it). After a lease timed out, the next
attempt waits as long again, so queued writes answer at once instead of each waiting.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import os
import random
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..model import clock as clocks
from ..model.ids import MAX_ID
from ..store import atomic
from ..store.content import NETWORK_TIMEOUT, git_env, run_git

log = logging.getLogger(__name__)
LEASES_REF = "refs/calendar/id-leases"
FETCHED_REF = "refs/calendar/id-leases-fetched"  # the remote's, until it is checked
LEASES_FILE = "leases"
STATE_FILE = "calendar-id-lease.json"  # in the clone's git directory
LOCK_FILE = "calendar-id-lease.lock"  # beside it: one leaser and state writer at a time
DEFAULT_BLOCK = 100
# Ids a process reserves with one durable save of the state (its cost: ~2 fsyncs under
# the write lock); at most this many minus one are skipped per process restart.
RESERVE_STEP = 16
# Seconds for one lease, every fetch and push of it together: well below gunicorn's
# worker timeout (30 s), as a create waits for it with the write lock held.
LEASE_TIMEOUT = NETWORK_TIMEOUT
MAX_LEASES_BYTES = 16 << 20  # ~200,000 lines: a larger file is not ours
_ATTEMPTS = 30  # compare-and-swap rounds before giving up (each loser retries at once)
_LOCKED_WAIT = 1.0  # seconds of fetching again while another git process holds the ref
_LINE = re.compile(r"([!-~]{1,200}) ([1-9][0-9]{0,15}) ([1-9][0-9]{0,15}) "
                   r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)")


class LeaseUnavailable(RuntimeError):
    """No id left in our block and no new block could be leased: `str()` says why."""


class BadLeases(LeaseUnavailable):
    """The leases file does not read as blocks going forward within 1..MAX_ID."""


class _TimedOut(LeaseUnavailable):
    pass


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


def _read_lines(text: str) -> Iterator[tuple[int, Lease | str]]:
    """(line number, its lease or what is wrong with it) for each non-empty line."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line:
            continue
        match = _LINE.fullmatch(line)
        if not match:
            yield number, f"{line[:80]!r} is not 'instance first last time'"
            continue
        first, last = int(match[2]), int(match[3])
        if not first <= last <= MAX_ID:
            yield number, f"ids {first}-{last} are not a block within 1-{MAX_ID}"
            continue
        yield number, Lease(match[1], first, last, match[4])


def parse_leases(text: str) -> list[Lease]:
    """The leases file, every line a block above the one before. Raises `BadLeases`
    naming the first line that is not."""
    out: list[Lease] = []
    for number, item in _read_lines(text):
        if isinstance(item, str):
            raise BadLeases(f"{LEASES_FILE} line {number}: {item}")
        if out and item.first <= out[-1].last:
            raise BadLeases(f"{LEASES_FILE} line {number}: ids {item.first}-{item.last} do "
                            f"not start above the block before ({out[-1].first}-"
                            f"{out[-1].last})")
        out.append(item)
    return out


def next_lease(leases: list[Lease], highest_used: int, instance: str, block_size: int,
               stamp: str) -> Lease:
    """The block to lease next: above every lease and every id used, within MAX_ID."""
    first = max([highest_used, *(lease.last for lease in leases)]) + 1
    if first > MAX_ID:
        raise LeaseUnavailable(f"every id up to {MAX_ID} is used or leased")
    return Lease(instance, first, min(first + block_size - 1, MAX_ID), stamp)


def read_leases(repo: Path, ref: str = LEASES_REF) -> list[Lease]:
    """The leases recorded on `ref` of a local repository ([] when it has none), for
    the editorial tools: every well-formed block counts as taken; the other lines are
    logged and skipped (the servers refuse such a ref until it is repaired)."""
    proc = _run(repo, "cat-file", "blob", f"{ref}:{LEASES_FILE}")
    if proc.returncode != 0:
        return []
    out = []
    for number, item in _read_lines(proc.stdout):
        if isinstance(item, str):
            log.warning("%s:%s line %d skipped: %s", ref, LEASES_FILE, number, item)
        else:
            out.append(item)
    return out


class IdLeases:
    """The ids this clone may hand out. `allocate` is called with the tree's write lock
    held (one caller at a time across threads and processes of this clone); the state
    file has a lock of its own for `ensure_block`, which runs without it."""

    def __init__(self, repo: Path, remote: str, instance: str | None = None,
                 block_size: int = DEFAULT_BLOCK, state_file: Path | None = None,
                 clock: clocks.Clock = clocks.system_now,
                 timeout: float = LEASE_TIMEOUT, step: int = RESERVE_STEP) -> None:
        if block_size < 1 or step < 1 or not timeout > 0:
            raise ValueError("block_size and step must be at least 1, timeout above 0")
        self.repo = Path(repo)
        self.remote = remote
        self.block_size = block_size
        self.state_file = state_file or _git_dir(self.repo) / STATE_FILE
        self.timeout = timeout
        self._instance = _instance_name(instance) if instance else None
        self._clock = clock  # the time a lease line records, for people reading it
        self.step = step
        self._lock = threading.Lock()
        # This process's reserved run [next, end), all below the state file's mark; tied
        # to the process that reserved it: a fork (gunicorn's workers) starts without.
        self._held: tuple[int, int, int] = (os.getpid(), 0, 0)
        self.lease_attempts = 0  # compare-and-swap rounds, for tests and measurements
        self.durable_saves = 0  # state file fsyncs, for tests and measurements

    def allocate(self, highest_used: int, taken: Callable[[int], bool]) -> int:
        """A new id: the next one of this process's reserved run not `taken` (an id in
        the tree, retired, or written by hand meanwhile); else a new run from the state
        file's mark, in a newly leased block above `highest_used` and every lease when
        ours is used up. Raises `LeaseUnavailable`."""
        with self._lock:
            pid, candidate, end = self._held
            if pid != os.getpid():
                candidate = end = 0
            while candidate < end and taken(candidate):
                candidate += 1
            if candidate >= end:
                candidate, end = self._reserve(highest_used, taken)
            self._held = (os.getpid(), candidate + 1, end)
            return candidate

    def _reserve(self, highest_used: int, taken: Callable[[int], bool]) -> tuple[int, int]:
        """A run of ids for this process, (first free, end): the state's mark moved past
        it and saved durably before any of it is used, so no restart repeats one. With
        `_lock` held."""
        with self._other_processes_out():
            state = self._load()
            candidate, last = state.get("next", 1), state.get("last", 0)
            while candidate <= last and taken(candidate):
                candidate += 1
            if candidate > last:
                lease = self._lease_block(highest_used, state)
                state.update(first=lease.first, last=lease.last)
                candidate, last = lease.first, lease.last  # above every id taken
            end = min(candidate + self.step, last + 1)  # never past the block
            state["next"] = end
            self._save(state)
            return candidate, end

    def ensure_block(self, highest_used: int) -> None:
        """Lease a block now, at start, if none has an id left: a server cut off from
        the remote right after it starts can still make records. A remote out of
        reach now, or silent for `timeout`, is not an error yet: the server starts
        without a block and the first new record says why."""
        try:
            with self._exclusive():
                state = self._load()
                if state.get("next", 1) <= state.get("last", 0):
                    return
                lease = self._lease_block(highest_used, state)
                state.update(first=lease.first, last=lease.last, next=lease.first)
                self._save(state)
        except LeaseUnavailable as exc:
            log.warning("no block of ids leased at start: %s", exc)

    def current(self) -> tuple[int, int] | None:
        """(the clone's mark: the first id no process reserved, last id) of the block
        held, None when none is."""
        state = self._load()
        return (state["next"], state["last"]) if "last" in state else None

    # -- the local state --------------------------------------------------------
    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """One thread, then one process."""
        with self._lock, self._other_processes_out():
            yield

    @contextlib.contextmanager
    def _other_processes_out(self) -> Iterator[None]:
        """One process (a POSIX lock: never inherited by a fork)."""
        with open(self.state_file.with_name(LOCK_FILE), "a+") as fh:
            fcntl.lockf(fh, fcntl.LOCK_EX)
            yield

    def _load(self) -> dict:
        try:
            state = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            state = {}
        except (OSError, ValueError) as exc:
            raise LeaseUnavailable(f"{self.state_file} cannot be read ({exc}): it says "
                                   "which ids this server already handed out") from None
        if not isinstance(state, dict) or not all(
                isinstance(state.get(key, 0), int) for key in ("first", "next", "last")):
            raise LeaseUnavailable(f"{self.state_file} is not a lease state")
        state.setdefault("instance", self._instance or _default_instance())
        if self._instance:
            state["instance"] = self._instance
        return state

    def _save(self, state: dict) -> None:
        self.durable_saves += 1
        atomic.replace_text(self.state_file, json.dumps(state), durable=True)

    # -- the remote ref -----------------------------------------------------------
    def _lease_block(self, highest_used: int, state: dict) -> Lease:
        """A new block for `state`'s instance, within `timeout`; records in `state`
        what the remote showed (saved by the caller with the block)."""
        waited = state.get("stalled_until", 0) - time.time()
        if waited > 0:
            raise LeaseUnavailable(f"{self.remote} did not answer within "
                                   f"{self.timeout:g} s; asking again in {waited:.0f} s")
        try:
            lease = self._lease_until(time.monotonic() + self.timeout, highest_used, state)
        except _TimedOut as exc:
            state["stalled_until"] = time.time() + self.timeout
            self._save(state)
            raise LeaseUnavailable(str(exc)) from None
        state.pop("stalled_until", None)
        state["seen"] = lease.last
        return lease

    def _lease_until(self, deadline: float, highest_used: int, state: dict) -> Lease:
        why = ""
        for attempt in range(_ATTEMPTS):
            self.lease_attempts += 1
            old_sha, leases = self._fetch(deadline, state)
            stamp = self._clock().astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            lease = next_lease(leases, highest_used, state["instance"], self.block_size,
                               stamp)
            new_sha = self._commit(old_sha, [*leases, lease])
            proc = self._network(deadline, "push", "--porcelain", "--no-verify",
                                 f"--force-with-lease={LEASES_REF}:{old_sha or ''}",
                                 self.remote, f"{new_sha}:{LEASES_REF}")
            if proc.returncode == 0:
                _run(self.repo, "update-ref", LEASES_REF, new_sha)
                return lease
            why = _last_line(proc.stderr or proc.stdout)
            if "rejected" not in proc.stdout:  # not a lost race: unreachable, refused
                raise LeaseUnavailable(f"could not lease new ids from {self.remote}: {why}")
            time.sleep(random.uniform(0, 0.01 * (attempt + 1)))  # let the winner go
        raise LeaseUnavailable(f"{_ATTEMPTS} concurrent attempts to lease ids from "
                               f"{self.remote} failed: {why}")

    def _fetch(self, deadline: float, state: dict) -> tuple[str | None, list[Lease]]:
        """The remote's leases commit (None when there is none yet) and its leases,
        checked against what this clone leased there before (`seen`)."""
        seen = max(state.get("seen", 0), state.get("last", 0))
        locked_until = time.monotonic() + _LOCKED_WAIT
        while True:
            proc = self._network(deadline, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                                 "--refmap=", self.remote, f"+{LEASES_REF}:{FETCHED_REF}")
            # Our lock file does not bind a git child that outlived its process (a worker
            # killed mid-fetch): its ref update ends within moments, then ours goes through.
            if proc.returncode == 0 or "cannot lock ref" not in proc.stderr \
                    or time.monotonic() > locked_until:
                break
            time.sleep(0.02)
        if proc.returncode != 0:
            if "cannot lock ref" in proc.stderr:
                raise LeaseUnavailable(
                    f"cannot lock ref {FETCHED_REF} in {self.repo}: another git process has "
                    "held it for a second; if none is running, remove its .lock file")
            if "couldn't find remote ref" not in proc.stderr:
                raise LeaseUnavailable(f"could not reach {self.remote} to lease new ids: "
                                       f"{_last_line(proc.stderr)}; try again once it can "
                                       "be reached")
            if seen:
                raise LeaseUnavailable(
                    f"{LEASES_REF} is gone from {self.remote}, though this server leased "
                    f"ids up to {seen} there: no ids are leased until it is restored "
                    f"(git push {self.remote} {LEASES_REF} from this clone)")
            return None, []
        sha = _run(self.repo, "rev-parse", "--verify", "-q", FETCHED_REF).stdout.strip()
        size = _run(self.repo, "cat-file", "-s", f"{sha}:{LEASES_FILE}").stdout.strip()
        if not size.isascii() or not size.isdigit() or int(size) > MAX_LEASES_BYTES:
            raise BadLeases(f"{LEASES_REF} on {self.remote} holds no {LEASES_FILE} file "
                            f"of at most {MAX_LEASES_BYTES} bytes")
        text = _run(self.repo, "cat-file", "blob", f"{sha}:{LEASES_FILE}").stdout
        try:
            leases = parse_leases(text)
        except BadLeases as exc:
            raise BadLeases(f"{LEASES_REF} on {self.remote} is refused: {exc}") from None
        ours = (state.get("first"), state.get("last"))
        if max((x.last for x in leases), default=0) < seen or (
                "first" in state and ours not in {(x.first, x.last) for x in leases}):
            raise LeaseUnavailable(
                f"{LEASES_REF} on {self.remote} went backwards: this server leased ids up "
                f"to {seen} there and they are no longer all recorded; no ids are leased "
                f"until it is restored (git push --force {self.remote} {LEASES_REF} from "
                "this clone)")
        _run(self.repo, "update-ref", LEASES_REF, sha)
        return sha, leases

    def _network(self, deadline: float, *args: str) -> subprocess.CompletedProcess:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise subprocess.TimeoutExpired(["git", *args], self.timeout)
            return _run(self.repo, *args, timeout=remaining)
        except subprocess.TimeoutExpired:
            raise _TimedOut(f"{self.remote} did not answer within {self.timeout:g} s "
                            f"(git {args[0]}) to lease new ids") from None

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


def _instance_name(name: str) -> str:
    """A name as a lease line holds it: printable ASCII without spaces, 200 at most."""
    return re.sub(r"[^!-~]", "-", name)[:200] or "server"


def _default_instance() -> str:
    """A name for the leases file (only for people reading it: safety never depends on
    names being unique); made once per clone and kept in the state file."""
    return _instance_name(f"{socket.gethostname() or 'server'}-{os.urandom(3).hex()}")


def _git_dir(repo: Path) -> Path:
    out = _run(repo, "rev-parse", "--absolute-git-dir")
    if out.returncode != 0:
        raise LeaseUnavailable(f"{repo} is not in a git repository: "
                               f"{_last_line(out.stderr)}")
    return Path(out.stdout.strip())


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _run(repo: Path, *args: str, input: str | None = None,
         timeout: float | None = None) -> subprocess.CompletedProcess:
    """git through content.run_git (no git process outlives its timeout)."""
    env = git_env()
    env.setdefault("GIT_AUTHOR_NAME", "calendar-app")  # commit-tree takes no --author
    env.setdefault("GIT_AUTHOR_EMAIL", "calendar-app@localhost")
    proc = run_git(repo, list(args), env=env, timeout=timeout, input=input)
    if proc.returncode != 0 and args[0] in ("hash-object", "mktree", "commit-tree"):
        raise LeaseUnavailable(f"git {args[0]} failed: {_last_line(proc.stderr)}")
    return proc
