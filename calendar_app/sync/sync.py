"""Keeping the content clone in step with a branch of a shared remote repository.

The server is one clone among others (editors, CI, other instances):

- its commits are pushed to `remote`/`branch` (`push="wait"`: before the write is
  answered, so an answered write is in the shared repository; `"queue"`: right after,
  from a thread). Writers waiting share pushes: see pushgroup.py.
  The queue is git itself: commits on the branch that the remote-tracking branch
  lacks. Nothing else has to survive a crash; the first exchange after a start
  pushes what a crash left behind.
- what others pushed (merged pull requests) is fetched and integrated on a signed
  webhook, by polling, and before retrying a push the remote refused (someone pushed
  first): local commits are rebased on the remote branch; a record changed on both
  sides is merged key by key (fieldmerge.py); where both changed one key, the remote
  wins and our value is kept in a conflict record under `.calendar/conflicts/`,
  committed and pushed like any change, listed by `sync status`, reported by `check`.

Pushing runs under the push lock (one pusher per clone); integrating under the push
lock and then the content tree's write lock (always in this order), so no interface
write (in any worker process) happens during a rebase, and one process integrates at a
time. A push that does not integrate holds only the push lock: writes go on meanwhile.
A write's push that is refused (`_lead`) fetches, makes our commits again on the
fetched head as objects (replay.rebuild) and pushes them at once; only then does it
take the write lock, to move the branch onto them (replay.adopt; where paths overlap,
an integration first: an in-process replay or git's rebase). Never the write lock for
the fetch or the push. Fetching holds neither: the write lock is held for
network I/O only while an exchange (webhook, polling, the background thread) fetches
again after a refused push, and every network call of one exchange together gets
`SyncSettings.timeout`, below gunicorn's worker timeout. A call that gets no answer
in time is killed with its process group and marks the remote stalled (shared state):
writes then answer "queued" at once, without trying, until an exchange from the
background thread gets through again.
`integrated_hooks` get the content-relative paths an integration changed (the
catalog re-reads them, the journal tells the other workers) before the lock is let go.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..model import clock as clocks
from ..store import gitfast, yamlfile
from ..store.conflicts import CONFLICTS_DIR, conflict_record
from ..store.content import ContentTree
from . import displaced, gitrebase, netfast, pushgroup, replay
from .clone import git_call, git_reason, ours_entry
from .pushgroup import PushGroup
from .settings import RemoteStalled, SyncError, SyncSettings
from .state import STATE_FILE, read_state, write_state

log = logging.getLogger(__name__)

MAX_ROUNDS = 5  # push refused, fetch, rebase, push again: give up (queued) after this
RETRY_SECONDS = 10.0  # a failed exchange is tried again this soon, polling or not
# The exchange thread's wait before retrying writes answered "queued" (`wait` mode): the
# next write's push often carries them (a push holds the whole branch).
QUEUED_GRACE_SECONDS = 0.5
AUTHOR = "calendar-app <calendar-app@localhost>"
# git's words for a push refused because the remote branch moved on. Two pushes that
# arrive together at one server: the second one's ref update finds the ref already moved
# ("cannot lock ref ...: is at X but expected Y", "[remote rejected] (failed to update
# ref)"), a lost race like a non-fast-forward, not a broken remote.
_REFUSED = re.compile(r"\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*"
                      r"(?:lock|stale|failed to update ref)|stale info|cannot lock ref")


@dataclass(frozen=True)
class SyncResult:
    """What one exchange did: `state` "pushed" (nothing of ours is missing from the
    remote) or "queued" (some is: `error` says why); `changed`: paths integrated."""
    state: str
    head: str
    changed: frozenset[str] = frozenset()
    error: str = ""


class RemoteSync:
    """Exchanges commits between one content clone and its remote branch."""

    def __init__(self, tree: ContentTree, settings: SyncSettings, remote: str,
                 state_dir: Path, clock: clocks.Clock = clocks.system_now) -> None:
        self.tree = tree
        self.settings = settings
        self.remote = remote  # the remote's name in the clone
        self.branch = settings.branch
        self.state_path = Path(state_dir) / STATE_FILE
        self.spool = Path(state_dir) / "merge-conflicts.jsonl"
        self.attributes = Path(state_dir) / "merge-attributes"
        self.clock = clock
        self.group = PushGroup(Path(state_dir))
        self.replay_marker = Path(state_dir) / "replay.json"
        tree.lock_hooks.append(self._finish_replay)
        self._url: str | None = None
        # Called, under the write lock, with the content-relative paths changed.
        self.integrated_hooks: list[Callable[[set[str]], object]] = []
        # .outcome: this thread's last write's sync; .waiting: the number of its commit
        # whose push it waits for once the write lock is let go.
        self._local = threading.local()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        # The highest number of this process's commits answered "queued"; writers raise it.
        self._queued_upto = 0
        self._queued_lock = threading.Lock()
        self._pid = 0
        self.caught_up = threading.Event()  # set once this process's first exchange is done

    @property
    def upstream(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    def git(self, *args: str, check: bool = True, env: Mapping[str, str] | None = None,
            timeout: float | None = None, input: str | None = None
            ) -> subprocess.CompletedProcess:
        """Run git in the clone (no prompts, C locale, a committer identity)."""
        root = self.tree.git_root
        if root is None:
            raise SyncError(f"{self.tree.root} is not in a git repository")
        return git_call(root, *args, check=check, env=env, timeout=timeout, input=input)

    def _rev(self, ref: str) -> str:
        # Refs are read in this process when they can be (gitfast.py): a refused push
        # reads a dozen, a git process each otherwise.
        fast = gitfast.read_ref(self.tree.git_dir, ref)
        return self.git("rev-parse", "--verify", "-q", ref, check=False).stdout.strip() \
            if fast is None else fast

    def _set_ref(self, ref: str, sha: str, why: str) -> None:
        if not gitfast.set_ref(self.tree.git_dir, ref, sha, why):
            self.git("update-ref", "-m", why, ref, sha)

    def _has_unpushed(self) -> bool:
        count = gitfast.ahead(self.tree.git_dir, f"refs/heads/{self.branch}", self.upstream)
        return bool(self.unpushed()) if count is None else count > 0

    def unpushed(self) -> list[str]:
        """Local commits the remote branch lacks, oldest first ("sha subject")."""
        since = [f"^{self.upstream}"] if self._rev(self.upstream) else []
        out = self.git("log", "--reverse", "--format=%h %s", self.branch, *since).stdout
        return out.splitlines()

    # -- background ----------------------------------------------------------------
    def start(self) -> None:
        """The exchange thread of this process: an exchange right away (pushing what
        a crash or an unreachable remote left), then every `poll` seconds, sooner
        after a failure, and woken by writes whose push is queued."""
        if self._pid == os.getpid() and self._thread is not None:
            return
        self._pid = os.getpid()
        self._wake = threading.Event()
        self.caught_up = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="calendar-sync", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None and self._pid == os.getpid():
            self._thread.join(timeout=self.settings.timeout + 5)
        self._thread = None

    def _loop(self) -> None:
        delay: float | None = 0.0
        while True:
            woken = self._wake.wait(delay)
            if self._stopping.is_set():
                return
            self._wake.clear()
            # Woken by a queued write; the first exchange pushes what a crash left.
            result = self.retry_queued() if woken and self.caught_up.is_set() \
                else self.exchange()
            if result is None:
                continue
            self.caught_up.set()
            delay = self.settings.poll or None
            if result.state == "queued":
                delay = min(delay or RETRY_SECONDS, RETRY_SECONDS)

    # -- writes --------------------------------------------------------------------
    def on_commit(self) -> None:
        """After each interface commit, the write lock held: number it (no more here,
        every writer waits for this lock)."""
        self._local.waiting = self.group.commit_made()
        self._local.outcome = ""

    def settle(self) -> None:
        """Once a write let go of the write lock: in `wait` mode, wait until its commit
        is on the remote (pushed by us or by whoever led the group); not while the
        remote is stalled, nor in `queue` mode: queued, for the exchange thread."""
        number = getattr(self._local, "waiting", 0)
        if not number:
            return
        self._local.waiting = 0
        self._local.outcome = "queued"
        if self.settings.push == "wait" and not read_state(self.state_path).get("stalled"):
            self._local.outcome = self.await_push(number)
        if self._local.outcome == "queued":
            with self._queued_lock:
                self._queued_upto = max(self._queued_upto, number)
            self._wake.set()  # the exchange thread retries until the remote takes it

    def retry_queued(self) -> SyncResult | None:
        """After writes answered "queued", in `wait` mode: a write's push (`_lead`, no
        fetch first) after QUEUED_GRACE_SECONDS, or None if a later push carried them
        (or stopping). An exchange woke for each queued write before: a `git fetch`
        and rounds under the write lock, a third of three instances' CPU per write."""
        if self.settings.push != "wait":
            return self.exchange()
        if self._stopping.wait(QUEUED_GRACE_SECONDS):
            return None
        with self._queued_lock:
            upto = self._queued_upto
        with self.group.leading():
            if self.group.marks()["pushed"] >= upto:
                return None
            return self._lead(time.monotonic() + self.settings.timeout)

    def await_push(self, number: int) -> str:
        """"pushed" once commit `number` is on the remote, "queued" if the push covering
        it gave up (or the remote is stalled)."""
        with self.group.leading():
            marks = self.group.marks()
            if marks["pushed"] >= number:
                return "pushed"
            if marks["failed"] >= number or read_state(self.state_path).get("stalled"):
                return "queued"
            return self._lead(time.monotonic() + self.settings.timeout, number).state

    def _lead(self, deadline: float, own: int = 0) -> SyncResult:
        """Push the branch head for everyone queued, the push lock held. Refused: fetch
        and integrate (the write lock held only for integrating), push again. Writes
        go on during every push and fetch and join the next push. `own`: the leading
        write's number (0: none), the only one to answer "queued" if every race is lost
        to other instances: the writers behind it lead pushes of their own."""
        covered = self.group.made()  # before the head: every commit counted is in it
        changed: set[str] = set()
        rebuilt: replay.Replayed | None = None  # pushed instead of the branch's head
        try:
            for lost in range(1, MAX_ROUNDS + 1):
                head = self._push(deadline, rebuilt.new if rebuilt else "")
                if head:
                    if rebuilt:
                        changed |= self._adopt(rebuilt)
                    break
                pushgroup.back_off(lost, deadline)  # another instance won: let it go first
                fetched = self._fetch(deadline, fast=True)  # refused: someone pushed first
                made = self.group.made()  # before the rebuild reads the branch
                rebuilt = self._rebuild(fetched)
                if rebuilt:
                    covered = made
                    continue
                with self.tree.locked():
                    previous = self._rev(self.upstream)
                    self._set_ref(self.upstream, fetched, "fetched")
                    changed |= self._integrate(previous)
                    covered = self.group.made()
            else:
                lost_all = SyncError(f"the remote branch moved on during each of "
                                     f"{MAX_ROUNDS} pushes; trying again later")
                return self._failed(lost_all, changed, own or covered)
        except Exception as exc:  # noqa: BLE001  (_failed logs what is not SyncError)
            return self._failed(exc, changed, covered)
        self._save_state(error="", pushed=True, upstream=head)
        self.group.record(covered, pushed=True)
        return SyncResult("pushed", head, frozenset(changed))

    def take_outcome(self) -> str:
        """What became of this thread's last write ("pushed", "queued"; "" if none)."""
        outcome = getattr(self._local, "outcome", "")
        self._local.outcome = ""
        return outcome

    # -- exchanging ----------------------------------------------------------------
    def exchange(self, fetch: bool = True) -> SyncResult:
        """Fetch the remote branch (writes go on meanwhile), then integrate it and push
        ours under the push lock and the write lock."""
        deadline = time.monotonic() + self.settings.timeout
        fetched = ""
        if fetch:
            known = read_state(self.state_path).get("upstream", "")
            try:
                fetched = self._fetch(deadline)
            except Exception as exc:  # noqa: BLE001  (_failed logs what is not SyncError)
                return self._failed(exc, set())
        with self.group.leading(), self.tree.locked():
            if fetch and read_state(self.state_path).get("upstream", "") != known:
                fetched = ""  # pushed or integrated meanwhile: that fetch may predate it
            return self._rounds(deadline, fetch, fetched)

    def _rounds(self, deadline: float, fetch: bool, fetched: str) -> SyncResult:
        """Integrate and push, the push lock and the write lock held: `fetched`, the
        remote's head fetched just before taking them ("": fetch now); without `fetch`
        push first. No commit is made meanwhile, so a push covers the counter."""
        changed: set[str] = set()
        try:
            for _ in range(MAX_ROUNDS):
                if fetch:
                    previous = self._rev(self.upstream)
                    # The push lock is held: the fetch may be made in-process (netfast).
                    self._set_ref(self.upstream, fetched or self._fetch(deadline, fast=True),
                                  "fetched")
                    fetched = ""
                    changed |= self._integrate(previous)
                if (fetch and not self._has_unpushed()) or self._push(deadline):
                    self._save_state(error="", pushed=True)
                    self.group.record(self.group.made(), pushed=True)
                    return SyncResult("pushed", self._rev("HEAD"), frozenset(changed))
                fetch = True  # refused: someone pushed first; integrate theirs
            raise SyncError(f"the remote branch moved on during each of {MAX_ROUNDS} "
                            "pushes; trying again later")
        except Exception as exc:  # noqa: BLE001  (any failure leaves the commits queued)
            return self._failed(exc, changed, self.group.made())

    def _failed(self, exc: Exception, changed: set[str], covered: int = 0) -> SyncResult:
        """Any failure leaves the commits queued, a stalled remote is remembered; the
        writers waiting for commits up to `covered` answer "queued" (push lock held)."""
        if not isinstance(exc, SyncError):
            log.exception("sync with %s failed", self.remote)
        self._save_state(error=str(exc), stalled=isinstance(exc, RemoteStalled))
        self.group.record(covered, pushed=False)
        return SyncResult("queued", self._rev("HEAD"), frozenset(changed), str(exc))

    def _network(self, deadline: float, *args: str) -> subprocess.CompletedProcess:
        """A git call that talks to the remote, within what is left of `deadline`."""
        left = deadline - time.monotonic()
        if left <= 0:  # spent waiting for the lock, say: not the remote's fault
            raise SyncError(f"no time left for git {args[0]} in this exchange "
                            f"({self.settings.timeout:g} s); trying again later")
        return self.git(*args, check=False, timeout=left)

    def _fetch(self, deadline: float, fast: bool = False) -> str:
        """The remote branch's head, fetched into a ref of this thread's own: without
        the write lock, other processes of this clone may fetch at the same time, and
        the remote-tracking branch moves only under the lock. `fast`: in-process where
        it can be (netfast.py; a write's refused push, the push lock held)."""
        ref = f"refs/calendar/fetching/{os.getpid()}-{threading.get_ident()}"
        spec = f"+refs/heads/{self.branch}:{ref}"
        if not (fast and netfast.fetch(self.tree.git_dir, self.remote, spec, deadline)):
            # --refmap= : no opportunistic update of the remote-tracking branch, which
            # would race with the one made under the lock ("cannot lock ref").
            # --no-auto-maintenance: the commits' own runs often enough (gitfast.py).
            proc = self._network(deadline, "fetch", "-q", "--no-write-fetch-head",
                                 "--refmap=", "--no-auto-maintenance", self.remote, spec)
            if proc.returncode:
                raise SyncError(f"git fetch failed: {git_reason(proc.stderr or proc.stdout)}")
        head = self._rev(ref)
        if not gitfast.delete_ref(self.tree.git_dir, ref):
            self.git("update-ref", "-d", ref)
        return head

    def _rebuild(self, fetched: str) -> replay.Replayed | None:
        """Our commits made again on `fetched` as objects, without the write lock
        (replay.rebuild), so the push after a lost race goes out at once: integrating
        first kept the write lock and the next push 50-150 ms behind the fetch under
        load, while other instances pushed every 30-60 ms, so a lead that lost once
        kept losing (bench/RESULTS.md, writes10). None: integrate first, as before."""
        git_dir, root = self.tree.git_dir, self.tree.git_root
        if git_dir is None or root is None or self.tree.blocking_state() \
                or replay.rewritten(git_dir, read_state(self.state_path).get("upstream", ""),
                                    fetched) is not False:
            return None
        return replay.rebuild(git_dir, root, self.branch, fetched)

    def _adopt(self, rebuilt: replay.Replayed) -> set[str]:
        """Once the rebuilt commits are on the remote (the remote-tracking branch too):
        the branch moved onto them under the write lock (replay.adopt), else integrated
        as any fetch is; the content-relative paths changed."""
        with self.tree.locked():
            if self.tree.blocking_state() or not (adopted := replay.adopt(
                    self.tree.git_dir, self.tree.git_root, self.branch, rebuilt,
                    self.replay_marker)):
                try:
                    return self._integrate()
                except SyncError as exc:  # pushed all the same: the next exchange retries
                    self._save_state(error=str(exc))
                    return set()
            return self._integrated(self._content_paths(adopted.changed))

    def _push(self, deadline: float, head: str = "") -> str:
        """Push the branch (or commit `head`): the head pushed, "" when refused (the
        remote moved on); in-process where it can be (netfast.py), else with git."""
        head = head or self._rev(f"refs/heads/{self.branch}")
        fast = netfast.push(self.tree.git_dir, self.remote, head,
                            f"refs/heads/{self.branch}", deadline)
        if fast == "refused":
            return ""
        if fast == "pushed":
            self._set_ref(self.upstream, head, "update by push")
            return head
        proc = self._network(deadline, "push", "--porcelain", self.remote,
                             f"{head}:refs/heads/{self.branch}")
        if proc.returncode == 0:
            self._set_ref(self.upstream, head, "update by push")
            return head
        if _REFUSED.search(proc.stdout + proc.stderr):
            return ""
        raise SyncError(f"git push failed: {git_reason(proc.stderr)}")

    def _integrate(self, previous: str = "") -> set[str]:
        """Bring the remote branch's commits into the branch and the work tree;
        `previous`: the remote-tracking branch before this fetch."""
        target = self._rev(self.upstream)
        if not target:
            return set()  # the remote has no such branch yet: the push makes it
        if replay.on_branch(self.tree.git_dir) != self.branch and self.git(
                "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip() != self.branch:
            raise SyncError(f"the clone is not on branch {self.branch} "
                            f"(git switch {self.branch})")
        blocked = self.tree.blocking_state()
        if blocked:
            raise SyncError(f"cannot integrate: {blocked}")
        old = self._rev("HEAD")
        known = read_state(self.state_path).get("upstream") or previous
        behind = gitfast.ahead(self.tree.git_dir, self.upstream, f"refs/heads/{self.branch}")
        conflicts: list[dict] = []
        replayed = None  # in this process when nothing overlaps (replay.py), else git
        if self._rewritten(known, target):
            conflicts = self._adopt_rewritten(known, target)
        elif behind == 0 or (behind is None and self.git(
                "rev-list", "--count", f"HEAD..{self.upstream}").stdout.strip() == "0"):
            return set()
        elif not (replayed := replay.replay(self.tree.git_dir, self.tree.git_root,
                                            self.branch, target, self.replay_marker)):
            if not self._has_unpushed():
                self.git("merge", "-q", "--ff-only", self.upstream)
            else:
                displaced.move_displaced(self, target)
                conflicts = gitrebase.rebase(self)
        if conflicts:
            self._record_conflicts(conflicts)
        return self._integrated(self._content_paths(replayed.changed) if replayed
                                else self._changed_paths(old, self._rev("HEAD")))

    def _integrated(self, changed: set[str]) -> set[str]:
        """After an integration, the write lock held: the hooks get the content paths
        it changed (the catalog re-reads them), the state says so; `changed` back."""
        for hook in self.integrated_hooks:
            hook(changed)
        self._save_state(integrated=True)
        return changed

    def _finish_replay(self) -> None:
        """A replay a crash cut short is completed first thing under the write lock."""
        if self.replay_marker.exists() and self.tree.git_dir is not None:
            changed = self._content_paths(replay.finish(self.tree.git_dir, self.replay_marker))
            for hook in self.integrated_hooks:
                hook(changed)

    def _rewritten(self, known: str, target: str) -> bool:
        """Whether the remote's branch lost a commit we pushed or integrated (`known`,
        the branch as we last saw it): rewritten, by a force-push."""
        fast = replay.rewritten(self.tree.git_dir, known, target)
        if fast is not None:
            return fast
        if not known or known == target or self.git(
                "cat-file", "-e", f"{known}^{{commit}}", check=False).returncode:
            return False
        return self.git("merge-base", "--is-ancestor", known, target,
                        check=False).returncode == 1

    def _adopt_rewritten(self, known: str, target: str) -> list[dict]:
        """The remote's branch was rewritten on purpose (say, to remove a commit that
        held a private address): nothing it dropped is pushed again. The branch becomes
        the remote's; our commits never pushed are not replayed on a history they were
        not made on: what they changed goes to conflict records, for a person."""
        ours = self.git("rev-list", "--count", f"{known}..HEAD").stdout.strip()
        dropped = self.git("rev-list", "--count", f"{target}..{known}").stdout.strip()
        paths = self.git("diff", "--name-only", "-z", "--no-renames", known, "HEAD").stdout
        entries = []
        for path in filter(None, paths.split("\0")):
            blob = self.git("rev-parse", "--verify", "-q", f"HEAD:{path}", check=False)
            entry = ours_entry(self.tree.git_root, path, blob.stdout.strip() or None)
            entries.append({**entry, "rewritten": True})
        self.git("reset", "-q", "--keep", target)
        note = (f"the remote branch was rewritten (force-pushed) from {known[:12]} to "
                f"{target[:12]}: {dropped} commit(s) it dropped were not pushed again; "
                f"{ours} commit(s) of ours, never pushed, are kept in "
                f"{len(entries)} conflict record(s)")
        log.warning("%s/%s: %s", self.remote, self.branch, note)
        self._save_state(rewritten=note)
        return entries

    def _record_conflicts(self, conflicts: list[dict]) -> None:
        """One conflict record per file, committed (and so pushed): our side of what
        the remote's side replaced, for a person to decide."""
        now = self.clock().astimezone(dt.UTC)
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        remote_head = self._rev(self.upstream)
        written = []
        for n, entry in enumerate(conflicts):
            record = conflict_record(entry, self._content_path(entry["path"]),
                                     now.isoformat(timespec="seconds"), remote_head)
            name = re.sub(r"[^A-Za-z0-9_-]+", "-", record["record"]).strip("-")
            # The remote's head tells apart integrations within one second.
            relpath = f"{CONFLICTS_DIR}/{stamp}-{remote_head[:8]}-{n}-{name}.yaml"
            self.tree.write_text(relpath, yamlfile.dump(record))
            written.append(relpath)
        self.tree.commit(written, f"sync: {len(written)} conflict record(s): the remote's "
                         "values kept, ours saved for review", AUTHOR)

    def _content_path(self, repo_path: str) -> str:
        root = self.tree.git_root
        assert root is not None
        full = root / repo_path
        return self.tree.relative(full) if full.is_relative_to(self.tree.root) else repo_path

    def _changed_paths(self, old: str, new: str) -> set[str]:
        out = self.git("diff", "--name-only", "-z", "--no-renames", old, new).stdout
        return self._content_paths(out.split("\0"))

    def _content_paths(self, repo_paths: Iterable[str]) -> set[str]:
        root = self.tree.git_root
        assert root is not None
        return {(root / p).relative_to(self.tree.root).as_posix()
                for p in repo_paths if p and (root / p).is_relative_to(self.tree.root)}

    # -- state ---------------------------------------------------------------------
    def _save_state(self, error: str | None = None, pushed: bool = False,
                    integrated: bool = False, stalled: bool = False,
                    rewritten: str = "", upstream: str = "") -> None:
        state = read_state(self.state_path)
        now = self.clock().astimezone(dt.UTC).isoformat(timespec="seconds")
        if self._url is None:
            self._url = self.git("remote", "get-url", self.remote, check=False).stdout.strip()
        state.update({"remote": self.remote, "branch": self.branch, "url": self._url})
        if error is not None:
            state["stalled"] = stalled  # cleared by the next exchange that gets through
            state["last_error"] = error
            state["last_error_at"] = now if error else state.get("last_error_at", "")
        if pushed:
            state["last_exchange_at"] = now
        if integrated:
            state["last_integrated_at"] = now
        if pushed or integrated:  # the remote's head as we last saw it (force-pushes)
            state["upstream"] = upstream or self._rev(self.upstream)
        if rewritten:
            state["rewritten"] = rewritten
            state["rewritten_at"] = now
        write_state(self.state_path, state)
