"""The content clone's git as sync runs it (git's messages in English, to be parsed; a
network call that gets no answer in time is RemoteStalled), and making the clone."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..store.content import git_env, run_git
from .settings import RemoteStalled, SyncError, SyncSettings

# The first clone happens before serving (gunicorn's master, `serve`), outside any
# request, and may bring a large history: it gets longer than one exchange.
CLONE_TIMEOUT = 600.0


def git_reason(output: str) -> str:
    """git's own reason in its output: the first `fatal:`/`error:` line (what follows
    is advice such as "Please make sure you have the correct access rights")."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    own = [line for line in lines if line.startswith(("fatal:", "error:", "remote: error"))]
    return (own or lines or ["no message"])[0]


def git_call(cwd: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None,
             timeout: float | None = None,
             input: str | None = None) -> subprocess.CompletedProcess:
    full = git_env(GIT_EDITOR="true",  # rebase --continue keeps messages as they are
                   LC_ALL="C")  # git's messages are parsed (sync.py: _REFUSED)
    full.update(env or {})
    try:
        proc = run_git(cwd, list(args), full, timeout, input)
    except subprocess.TimeoutExpired:
        raise RemoteStalled(f"git {args[0]} got no answer from the remote within "
                            f"{timeout:.3g} s (stopped)") from None
    if check and proc.returncode:
        raise SyncError(f"git {args[0]} failed: {git_reason(proc.stderr or proc.stdout)}")
    return proc


def ours_entry(git_root: Path | None, path: str, blob: str | None) -> dict:
    """A conflict entry holding our side of `path` (None: we deleted it)."""
    if blob is None:
        return {"path": path, "ours_file": None}
    ours = subprocess.run(["git", "cat-file", "blob", blob], cwd=git_root,
                          capture_output=True, check=True).stdout
    try:
        return {"path": path, "ours_file": ours.decode("utf-8")}
    except UnicodeDecodeError:  # an image: its blob stays in git's objects
        return {"path": path, "ours_file": None, "ours_blob": blob}


def prepare_clone(content: Path, settings: SyncSettings) -> str:
    """Clone the remote into `content` when it is missing or empty; else check that
    the clone there knows the remote (by name or URL). Returns the remote's name.
    Credentials are git's (ssh keys, credential helpers): nothing is stored here."""
    content = Path(content)
    if not content.exists() or (content.is_dir() and not any(content.iterdir())):
        content.parent.mkdir(parents=True, exist_ok=True)
        git_call(content.parent, "clone", "-q", "--branch", settings.branch, "--origin",
                 "origin", settings.remote, str(content.absolute()), timeout=CLONE_TIMEOUT)
        return "origin"
    if git_call(content, "rev-parse", "--show-toplevel", check=False).returncode:
        raise SyncError(f"{content} is not a git clone; give an empty folder to clone "
                        f"{settings.remote} into")
    names = git_call(content, "remote").stdout.split()
    if settings.remote in names:
        return settings.remote
    for name in names:
        url = git_call(content, "remote", "get-url", name).stdout.strip()
        if url == settings.remote:
            return name
    raise SyncError(f"the clone in {content} has no remote named or at {settings.remote}: "
                    f"add it (git remote add origin URL) or serve an empty folder")
