"""The content tree on disk: finding, reading and atomically writing record files, and
committing each interface write to git.

Nothing here knows about HTTP or validation; it moves bytes and commits.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import functools
import json
import os
import re
import secrets
import signal
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model.resources import RESOURCES
from ..model.settings import DEFAULT_SETTINGS
from . import bulkwrite, durable, gitfast, yamlfile

SETTINGS_FILE = "calendar.yaml"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
RETIRED_IDS_FILE = ".retired-ids"
# A write of this many files or more (an import) syncs each file system once at the end
# instead of each file as it is written: one fsync costs a disk flush (5 ms on a busy VM),
# 10,000 of them most of an import.
SYNC_ONCE_FROM = 32


@dataclass(frozen=True)
class FileStat:
    collection: str
    path: str  # relative, POSIX separators
    mtime_ns: int
    size: int


def git_env(**settings: str) -> dict[str, str]:
    """The environment the app runs git in: this process's, a committer identity for
    machines where git has none configured, never a prompt for a password nobody will
    type; then `settings`."""
    env = dict(os.environ)
    env.setdefault("GIT_COMMITTER_NAME", "calendar-app")
    env.setdefault("GIT_COMMITTER_EMAIL", "calendar-app@localhost")
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(settings)
    return env


# One network git call (fetch, push, ls-remote, clone) is given up after this long:
# below gunicorn's worker timeout (gunicorn_conf.py), so a stalled remote never gets a
# worker killed mid-request with its git process left running.
NETWORK_TIMEOUT = 10.0


def run_git(cwd: Path, args: list[str], env: dict[str, str] | None = None,
            timeout: float | None = None, input: str | None = None
            ) -> subprocess.CompletedProcess:
    """git in a session of its own: past `timeout` the whole process group (git and
    its ssh or remote helper) is killed, then subprocess.TimeoutExpired is raised."""
    # Decoded leniently: a remote's refs and files are anyone's bytes.
    with subprocess.Popen(["git", *args], cwd=cwd, env=env or git_env(), encoding="utf-8",
                          errors="replace",
                          stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class GitError(RuntimeError):
    """A git command failed. `str()` is the command and git's own stderr (for the log);
    `advice` says, in a sentence for the client, what to do about it."""

    def __init__(self, args: tuple[str, ...], stderr: str, git_root: Path | None) -> None:
        super().__init__(f"git {' '.join(args[:2])} failed: {stderr}")
        self.stderr = stderr
        self.advice = _advice(args[0], stderr, git_root)


_LOCK = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def _advice(command: str, stderr: str, git_root: Path | None) -> str:
    lock = _LOCK.search(stderr)
    if lock:
        path = Path(lock.group(1))
        shown = path.relative_to(git_root) if git_root and path.is_relative_to(git_root) \
            else path.name
        return (f"another git process is using the repository, or one was killed: if "
                f"none is running, remove the stale {shown.as_posix()}")
    if "failed to sign" in stderr:  # gpg or ssh signing
        return ("git is set to sign commits (commit.gpgsign) and cannot: give the "
                "server's user a signing key, or set commit.gpgsign=false for the repository")
    if "Please tell me who you are" in stderr or "empty ident" in stderr:
        return "git has no identity: set user.name and user.email for the repository"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    own = any(line.startswith(("error:", "fatal:")) for line in lines)
    if command == "commit" and lines and not own:  # only a hook's own output
        return f"a git hook refused the commit: {lines[0]}"
    return f"git {command} failed: {lines[0] if lines else 'no message'}"


class WritesBlocked(RuntimeError):
    """The repository is in a state where a commit would not land on a branch, or would
    be mixed into someone's unfinished operation: writes wait until it is over."""


# (file or folder in the git dir, what is going on, how to end it), checked in order.
_BLOCKING_STATES = (
    ("rebase-merge", "a rebase is in progress", "git rebase --continue or --abort"),
    ("rebase-apply", "a rebase is in progress", "git rebase --continue or --abort"),
    ("MERGE_HEAD", "a merge is in progress", "commit the merge or git merge --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick is in progress",
     "git cherry-pick --continue or --abort"),
    ("REVERT_HEAD", "a revert is in progress", "git revert --continue or --abort"),
    ("sequencer", "a cherry-pick or revert is in progress",
     "git cherry-pick (or revert) --continue or --abort"),
    ("BISECT_LOG", "a bisect is in progress", "git bisect reset"),
)


class ContentTree:
    """A content folder; `lock_path` serializes writers across threads and processes."""

    def __init__(self, root: Path, lock_path: Path) -> None:
        self.root = Path(root).resolve()
        self.lock_path = lock_path
        self._thread_lock = threading.RLock()
        # Called with the lock held, before a write: catch up with other writers.
        self.lock_hooks: list[Callable[[], object]] = []
        # Called with the paths a crashed writer's change touched, once it is finished.
        self.recovery_hooks: list[Callable[[list[str]], object]] = []
        self._git_root: Path | None | bool = False  # False = not looked up yet
        self._unsynced: set[Path] | None = None  # folders to sync at the end of _apply
        self._unsynced_files: list[Path] | None = None  # files, too, in a large _apply
        self._fast_commits = 0  # commits gitfast made: git's maintenance every so many
        # .on: this thread's writes are flushed in a group (durable.py); .written: the
        # files and folders to flush.
        self._defer = threading.local()
        self.group_sync = durable.GroupSync()

    # -- reading -------------------------------------------------------------
    def scan(self) -> Iterator[FileStat]:
        """Every record file of every collection, subfolders included."""
        for collection in RESOURCES:
            base = self.root / collection
            if base.is_dir():
                yield from self._scan_dir(collection, base)

    def _scan_dir(self, collection: str, folder: Path) -> Iterator[FileStat]:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    yield from self._scan_dir(collection, Path(entry.path))
                elif entry.name.endswith(".yaml") and entry.is_file(follow_symlinks=False):
                    st = entry.stat()
                    yield FileStat(collection, self.relative(Path(entry.path)),
                                   st.st_mtime_ns, st.st_size)

    def relative(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root).as_posix()

    def collection_of(self, relpath: str) -> str | None:
        """The collection a relative path belongs to, if it is a record file."""
        parts = relpath.split("/")
        if len(parts) < 2 or parts[0] not in RESOURCES or not relpath.endswith(".yaml"):
            return None
        if any(p.startswith(".") for p in parts):
            return None
        return parts[0]

    def read_bytes(self, relpath: str) -> bytes:
        with open(self.root / relpath, "rb") as fh:
            data = fh.read(yamlfile.MAX_FILE_BYTES + 1)
        return data

    def read_text(self, relpath: str) -> str:
        return self.read_bytes(relpath).decode("utf-8")

    def stat(self, relpath: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of a file, as the catalog records it; None when absent."""
        try:
            st = os.stat(self.root / relpath)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def exists(self, relpath: str) -> bool:
        return (self.root / relpath).exists()

    def media_file(self, relpath: str) -> Path | None:
        """The file `media/...` names when it is a regular file reached without any
        symlink; else None. A link could lead anywhere (`media/logo.png -> /etc/...`):
        such files are neither served, measured nor copied."""
        parts = relpath.split("/")
        if parts[0] != "media" or len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
            return None
        path = self.root
        for part in parts:
            path = path / part
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                return None
            if stat.S_ISLNK(mode):
                return None
        return path if stat.S_ISREG(mode) else None

    def settings(self) -> dict:
        settings = dict(DEFAULT_SETTINGS)
        path = self.root / SETTINGS_FILE
        if path.exists():
            settings.update(yamlfile.load(path.read_bytes()))
        return settings

    def retired_ids(self) -> set[int]:
        path = self.root / RETIRED_IDS_FILE
        if not path.exists():
            return set()
        # ASCII: '¹' passes isdigit() but not int().
        return {int(t) for t in path.read_text().split() if t.isascii() and t.isdigit()}

    # -- writing -------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer at a time: a thread lock inside the process, flock across them."""
        with self._thread_lock:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.lock_path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    # Holding the lock, any intent left is a dead writer's: finish it
                    # before anyone allocates ids or reads the files it touched.
                    self._roll_forward()
                    for hook in self.lock_hooks:
                        hook()
                    yield
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def group_synced(self, settle: Callable[[], object]) -> Iterator[None]:
        """This thread's writes in the block are not flushed one by one under the lock
        (durable.py): on leaving, they are flushed with other writers' waiting then,
        and only then `settle` runs (the push, the answer)."""
        if getattr(self._defer, "on", False):
            yield  # nested: the outer block settles
            return
        self._defer.on, self._defer.written = True, set()
        try:
            yield
        finally:
            self._defer.on = False
            try:
                self.group_sync.flush(self._defer.written)
            finally:
                self._defer.written = set()
                settle()

    def _deferred(self, *paths: Path) -> bool:
        """Whether this thread's writes are flushed later, as a group; if so `paths`
        are noted for it."""
        if getattr(self._defer, "on", False):
            self._defer.written.update(paths)
            return True
        return False

    def write_text(self, relpath: str, text: str) -> None:
        self._write_atomic(self.root / relpath, text)

    def _write_atomic(self, target: Path, text: str) -> None:
        """Atomic replace: temp file in the same folder, fsync, rename. The file keeps
        its mode; a new one gets 0666 less the umask, as an editor would make it.
        Within `_apply`, the folders are synced once at the end, not once per file, and
        in a large one the files too (`durable.sync_files`); in a group-synced
        block neither (`group_synced`)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = self._temp_file(target)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                if self._unsynced_files is None and not getattr(self._defer, "on", False):
                    os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        if self._unsynced_files is None and self._deferred(target, target.parent):
            return  # a large write (an import) keeps its one syncfs, below
        if self._unsynced_files is not None:
            self._unsynced_files.append(target)
        if self._unsynced is not None:
            self._unsynced.add(target.parent)
        else:
            durable.fsync_dir(target.parent)

    @staticmethod
    def _temp_file(target: Path) -> tuple[int, str]:
        """A new temp file beside `target` (mkstemp would make it 0600)."""
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        for _ in range(100):
            tmp = str(target.parent / f".tmp-{secrets.token_hex(6)}.part")
            try:
                fd = os.open(tmp, _NEW_FILE, 0o666)  # the umask applies
            except FileExistsError:
                continue
            if mode is not None:
                os.fchmod(fd, mode)
            return fd, tmp
        raise FileExistsError(f"no free temporary name in {target.parent}")

    def remove(self, relpath: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / relpath).unlink()
        if not self._deferred((self.root / relpath).parent):
            durable.fsync_dir((self.root / relpath).parent)

    def rename(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.root / old, self.root / new)
        if not self._deferred((self.root / new).parent, (self.root / old).parent):
            durable.fsync_dir((self.root / new).parent)

    @property
    def intent_path(self) -> Path:
        return self.lock_path.with_name("pending-write.json")

    def apply(self, changes: dict[str, str | None], message: str, author: str,
              retire: list[int] = (), files: Sequence[str] = ()) -> None:
        """Write (text) or remove (None) these files and commit them as one commit;
        `files`: paths the caller has already written (images), committed with them.

        All or nothing: the whole change is first saved as an intent next to the lock;
        an error puts every file back, and a crash is rolled forward by `recover()` at
        the next start, so a write is never half done nor silently dropped.
        """
        blocked = self.blocking_state()
        if blocked:
            raise WritesBlocked(blocked)
        backups = {p: (self.read_text(p) if self.exists(p) else None) for p in changes}
        intent = {"message": message, "author": author, "changes": changes,
                  "retire": list(retire), "files": list(files)}
        self._write_atomic(self.intent_path, json.dumps(intent))
        try:
            self._apply(intent)
        except BaseException:
            for path, text in backups.items():
                if text is None:
                    self.remove(path)
                else:
                    self.write_text(path, text)
            self._unstage(list(changes))
            self.intent_path.unlink(missing_ok=True)
            raise
        self.intent_path.unlink(missing_ok=True)
        if getattr(self._defer, "on", False):  # done with: not worth a flush
            self._defer.written -= {self.intent_path, self.intent_path.parent}

    def blocking_state(self) -> str | None:
        """Why writes must wait now (the git state and how to end it), or None."""
        git_dir = self.git_dir
        if git_dir is None:
            return None
        for marker, what, how in _BLOCKING_STATES:
            if (git_dir / marker).exists():
                return f"{what} ({how})"
        try:
            head = (git_dir / "HEAD").read_text()
        except OSError:
            return None
        if not head.startswith("ref:"):
            return "HEAD is detached, not on a branch (git switch <branch>)"
        return None

    def _apply(self, intent: dict) -> None:
        touched = list(intent["changes"]) + list(intent.get("files", []))
        self._unsynced = set()  # each folder synced once, not once per file (imports)
        # Files renamed into place before their data reached the disk are safe: until
        # the intent is removed, a crash is rolled forward from it and writes them again.
        many = len(intent["changes"]) >= SYNC_ONCE_FROM
        self._unsynced_files = [] if many else None
        try:
            for path, text in intent["changes"].items():
                if text is None:
                    self.remove(path)
                else:
                    self.write_text(path, text)
            if many or not getattr(self._defer, "on", False):
                durable.sync_files(self._unsynced or (), self._unsynced_files)
        finally:
            self._unsynced = self._unsynced_files = None
        if intent["retire"]:
            ids = sorted(self.retired_ids() | set(intent["retire"]))
            self.write_text(RETIRED_IDS_FILE, "".join(f"{i}\n" for i in ids))
            touched.append(RETIRED_IDS_FILE)
        self.commit(touched, intent["message"], intent["author"],
                    [t for t in intent["changes"].values() if t is not None])

    def recover(self) -> str | None:
        """Finish a write a crash interrupted; returns its message, None if none."""
        if not self.intent_path.exists():
            return None
        with self._thread_lock:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.lock_path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    return self._roll_forward()
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    def _roll_forward(self) -> str | None:
        try:
            intent = json.loads(self.intent_path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):  # the intent itself is written atomically
            self.intent_path.unlink(missing_ok=True)
            return None
        if self.blocking_state():
            return None  # finished once the repository is back on a branch
        intent["message"] += "\n\nCompleted after an interrupted write."
        for folder in {(self.root / p).parent for p in intent["changes"]}:
            for leftover in folder.glob(".tmp-*.part"):  # half-written by the crash
                leftover.unlink(missing_ok=True)
        self._apply(intent)
        self.intent_path.unlink(missing_ok=True)
        for hook in self.recovery_hooks:
            hook(list(intent["changes"]))
        return intent["message"]

    # -- git -----------------------------------------------------------------
    @property
    def git_root(self) -> Path | None:
        if self._git_root is False:
            try:
                out = self._git("rev-parse", "--show-toplevel", cwd=self.root)
                self._git_root = Path(out.strip()).resolve()
            except GitError:
                self._git_root = None
        return self._git_root  # type: ignore[return-value]

    @functools.cached_property
    def git_dir(self) -> Path | None:
        if self.git_root is None:
            return None
        return Path(self._git("rev-parse", "--absolute-git-dir").strip())

    def _git(self, *args: str, cwd: Path | None = None, check: bool = True,
             stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=cwd or self.git_root, env=git_env(**(env or {})),
            capture_output=True, text=True, check=False, input=stdin,
        )
        if proc.returncode != 0 and not check:
            return ""
        if proc.returncode != 0:
            # `_git_root` itself, not the property: this may be the look-up failing.
            raise GitError(args, proc.stderr.strip(), self._git_root or None)
        return proc.stdout

    def _repo_paths(self, relpaths: list[str]) -> list[str]:
        root = self.git_root
        assert root is not None
        return sorted({str((self.root / p).relative_to(root)) for p in relpaths})

    def commit(self, relpaths: list[str], message: str, author: str,
               contents: Sequence[str] = ()) -> bool:
        """Commit exactly these paths (added, changed or removed) as one commit; False
        when there was nothing to commit. `contents`: texts of some of them, stored
        ahead in a large write."""
        if self.git_root is None:
            return False
        paths = self._repo_paths(relpaths)
        if len(paths) >= SYNC_ONCE_FROM:
            failed = bulkwrite.store_blobs(self.git_root, contents, git_env())
            if failed is not None:
                raise GitError(("fast-import",), failed, self._git_root or None)
            return bulkwrite.commit_many(self._git, self.git_dir, paths, message, author)
        # The usual write, under the write lock where each git process counts: made in
        # this process (gitfast.py), or by one `add` and one `commit`.
        done = gitfast.commit(self.git_root, self.git_dir, paths, message, author,
                              git_env()) if paths and self.git_dir else None
        if done is not None:
            self._fast_commits += 1
            if done and self._fast_commits % gitfast.MAINTENANCE_EVERY == 0:
                self._git_ok("maintenance", "run", "--auto", "--quiet")
            return done
        if paths and self._git_ok("add", "-A", "--", *paths) and self._git_ok(
                "commit", "-q", "--no-verify", "--author", author, "-m", message, "--", *paths):
            return True
        return self._commit_carefully(paths, message, author)

    def _git_ok(self, *args: str) -> bool:
        try:
            self._git(*args)
        except GitError:
            return False
        return True

    def _commit_carefully(self, paths: list[str], message: str, author: str) -> bool:
        """`commit` when a path is neither on disk nor known to git, or nothing changed."""
        # A path git has never seen and that is gone makes `git add` fail; such a path
        # has nothing to commit (e.g. a rename finished before a crash).
        in_index = set(self._git("ls-files", "--", *paths).split("\n"))
        in_head = set()
        if self._git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False):
            in_head = set(self._git("ls-tree", "-r", "--name-only", "HEAD", "--",
                                    *paths).split("\n"))
        present = {p for p in paths if (self.git_root / p).exists()}
        addable = [p for p in paths if p in in_index or p in present]
        known = [p for p in paths if p in in_index or p in present or p in in_head]
        if not known:
            return False
        if addable:
            self._git("add", "-A", "--", *addable)
        staged = self._git("diff", "--cached", "--name-only", "--", *known).strip()
        if not staged:
            return False
        self._git("commit", "-q", "--no-verify", "--author", author, "-m", message,
                  "--", *known)
        return True

    def committed_at(self, relpath: str) -> dt.datetime | None:
        """When this file was last changed in a commit (aware, UTC); None when it was
        never committed or has uncommitted changes (its last change is now)."""
        if self.git_root is None:
            return None
        path = self._repo_paths([relpath])[0]
        if self._git("status", "--porcelain", "--", path).strip():
            return None
        stamp = self._git("log", "-1", "--format=%ct", "--", path).strip()
        return dt.datetime.fromtimestamp(int(stamp), dt.UTC) if stamp else None

    def _unstage(self, relpaths: list[str]) -> None:
        """After a failed write: leave git's index as it was for these paths."""
        if self.git_root is None:
            return
        with contextlib.suppress(GitError):
            self._git("reset", "-q", "--", *self._repo_paths(relpaths))

    def first_commits(self, relpaths: list[str]) -> dict[str, int]:
        """relpath -> rank of the commit that first added it (0: the oldest; commits
        made in the same second still rank apart); paths never committed are absent."""
        if self.git_root is None or not relpaths:
            return {}
        by_repo = {str((self.root / p).relative_to(self.git_root)): p for p in relpaths}
        out = self._git("log", "--reverse", "--format=%x00", "--name-only",
                        "--diff-filter=A", "--", *by_repo, check=False)
        found: dict[str, int] = {}
        rank = 0
        for line in out.splitlines():
            if line.startswith("\0"):
                rank += 1
            elif line in by_repo:
                found.setdefault(by_repo[line], rank)
        return found
