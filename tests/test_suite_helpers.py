"""The suite's own helpers (conftest.py, gitserver.py) do what they promise."""

from __future__ import annotations

import threading
from pathlib import Path

from conftest import commit_count, git, make_repo
from gitserver import serve_in_thread
from werkzeug.serving import make_server


def test_commit_count_is_what_git_rev_list_counts(tmp_path: Path) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    git(repo, "checkout", "-qb", "side")
    (content / "side.txt").write_text("side\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "on the side")
    git(repo, "checkout", "-q", "main")
    (content / "main.txt").write_text("main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "on main")
    git(repo, "merge", "-q", "--no-edit", "side")  # both parents' lines count
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 4
    assert commit_count(content) == commit_count(repo) == 4


def test_a_test_server_takes_no_connection_forever() -> None:
    """serve_in_thread: when select() announced a connection that is gone before
    accept() (a client that reset it), the server's loop goes on, so shutdown() ends."""
    server = make_server("127.0.0.1", 0, lambda environ, respond: [], threaded=True)
    thread = serve_in_thread(server)
    try:
        # What serve_forever does once select() said a connection waits; none does.
        handled = threading.Thread(target=server._handle_request_noblock, daemon=True)
        handled.start()
        handled.join(5)
        assert not handled.is_alive(), "accept() waits for a connection that never comes"
    finally:
        server.shutdown()
        thread.join(5)
