"""The test suite's content repository, made both ways: `git init` + `add` + `commit` per
test (as before) and a copy of one committed template (tests/conftest.py `make_repo`).
CPU time includes git's processes, so the figures survive a loaded machine.

    python bench/suite_fixture_bench.py [N]
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import conftest  # the fixtures' own module, from tests/


def cpu() -> float:
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(count: int) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        os.environ.setdefault(f"GIT_{who}_NAME", "Bench")
        os.environ.setdefault(f"GIT_{who}_EMAIL", "bench@example.org")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        conftest.make_repo(root / "warm")  # the template, once per process
        ways = {"git init + add + commit": lambda d: conftest._init_repo(d / "repo",
                                                                         conftest.SAMPLE),
                "template copy": conftest.make_repo}
        for name, make in ways.items():
            started, wall = cpu(), time.perf_counter()
            for n in range(count):
                make(root / f"{name[:3]}{n}")
            print(f"{name}: {(cpu() - started) / count * 1000:.0f} ms CPU, "
                  f"{(time.perf_counter() - wall) / count * 1000:.0f} ms wall per repository")
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
