"""Editorial tools benchmark: `check` (and `check --against`, `fmt --check`, `diff`) on
generated content trees.

    python bench/check_bench.py [--sizes 10000] [--keep DIR]

Reuses the event generator of bench/build_bench.py. Each command runs in a new
process, as an editor or CI would run it; the figure includes interpreter start-up.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from build_bench import generate


def timed(args: list[str], cwd: Path) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "calendar_app", *args], cwd=cwd, check=False,
                          capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return time.perf_counter() - started, proc.returncode


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost")
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def bench(size: int, root: Path) -> None:
    content = generate(root, size)
    files = sum(1 for _ in content.rglob("*.yaml"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "content")
    git(root, "commit", "-q", "-m", "generated")
    git(root, "checkout", "-q", "-b", "pr")
    (content / "events" / "2027" / "bench-new.yaml").write_text(
        "id: 10000\ntitle: Colliding\nstart_date: 2027-01-01 10:00\n"
        "end_date: 2027-01-01 11:00\nvenue: the-blue-lantern\n")
    git(root, "add", "content")
    git(root, "commit", "-q", "-m", "pr")
    rows = [
        ("check", ["check", "content", "--format", "json"]),
        ("check --against main", ["check", "content", "--against", "main", "--format", "json"]),
        ("check --canonical", ["check", "content", "--canonical", "--format", "json"]),
        ("fmt --check", ["fmt", "content", "--check"]),
        ("diff main HEAD", ["diff", "main", "HEAD", "--content", "content"]),
    ]
    print(f"\n{size} events ({files} record files)")
    for label, args in rows:
        seconds, code = timed(args, root)
        print(f"  {label:<24} {seconds:6.2f} s  (exit {code})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    for size in args.sizes:
        if args.keep:
            target = args.keep / str(size)
            target.mkdir(parents=True, exist_ok=True)
            bench(size, target)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                bench(size, Path(tmp))


if __name__ == "__main__":
    main()
