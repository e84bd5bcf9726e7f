"""Light imports (issue 21, item 4): `import calendar_app` and the commands that work
on files alone (`check`, `fmt`, `diff`, `build`) load none of the server's libraries,
so the pre-commit `check` does not start the whole server. Each command runs in a fresh
interpreter under `-X importtime`, which lists every module it imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_repo

SERVER_ONLY = ("flask", "whoosh", "watchdog")


def imported(args: list[str], cwd: Path) -> set[str]:
    """Top-level names of the modules `python -X importtime *args` imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, check=False,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    # Lines: "import time: <self us> | <cumulative us> | <indent><module>".
    return {line.rsplit("|", 1)[1].strip().split(".")[0]
            for line in proc.stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


@pytest.mark.parametrize("command", [
    ["-c", "import calendar_app"],
    ["-m", "calendar_app", "check", "content"],
    ["-m", "calendar_app", "fmt", "--check", "content"],
    ["-m", "calendar_app", "diff", "HEAD"],
    ["-m", "calendar_app", "build", "--out", "public", "--base-url", "https://example.org/"],
], ids=["import", "check", "fmt", "diff", "build"])
def test_file_commands_import_no_server_library(tmp_path: Path, command: list[str]) -> None:
    repo = make_repo(tmp_path).parent
    loaded = imported(command, repo)
    assert "calendar_app" in loaded
    assert not loaded & set(SERVER_ONLY), sorted(loaded & set(SERVER_ONLY))


def test_the_server_still_loads_them(tmp_path: Path) -> None:
    """The check above sees imports: the app factory's own are found."""
    loaded = imported(["-c", "import calendar_app.http.app"], tmp_path)
    assert set(SERVER_ONLY) <= loaded
