"""Group commit of pushes: writers waiting for their pushes share one.

Every interface commit gets a number (`commit_made`, under the content tree's write
lock, so numbers follow the branch's order). A writer in `wait` mode then lets go of
the write lock and queues on the push lock (`leading`: a file lock, so the threads and
the worker processes of one instance queue together). Whoever holds it looks at the
marks first: `pushed`, the highest number known to be on the remote, and `failed`,
the highest one a push gave up on (the write answers "queued" then, and the exchange
thread retries; a push the remote failed gives up on every number it carried, one that
lost every race to other instances on its leading write's alone: the writers behind it
lead again). If its number is not covered, it leads: it reads the counter, then
the branch head, and pushes that head, which holds every commit numbered so far,
its own and those of the writers queued behind it; they find themselves covered
when their turn comes and answer at once.

Only the marks and the counter are kept here, in two small files of the state folder:
the commits themselves are git's, and a crash loses nothing a mark claims, since a
mark is written only after the remote took the push. A counter that went back (a
lost file) starts again above the pushed mark, so no new commit is ever taken for
pushed.

A push refused because another instance pushed first backs off a random while
(`back_off`) before fetching: the instances that lost a race do not all come back at
the same moment to race again, and the writes arriving meanwhile join the next push.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

from ..store.atomic import replace_text

COUNTER_FILE = "commits-made"
MARKS_FILE = "push-marks.json"
LOCK_FILE = "push.lock"
# The back-off after the first lost race in a row, doubled at each next one, capped.
BACKOFF_SECONDS = 0.02
BACKOFF_CAP = 0.25


class PushGroup:
    """The counter, the marks and the push lock of one clone's state folder."""

    def __init__(self, state_dir: Path) -> None:
        self.counter_path = Path(state_dir) / COUNTER_FILE
        self.marks_path = Path(state_dir) / MARKS_FILE
        self.lock_path = Path(state_dir) / LOCK_FILE

    def made(self) -> int:
        """How many commits were numbered (read before the branch head, every one of
        them is in it: a commit is made before it is counted)."""
        try:
            return int(self.counter_path.read_text() or 0)
        except (OSError, ValueError):
            return 0

    def commit_made(self) -> int:
        """Number the commit just made; the write lock is held. Above the pushed mark
        even if the counter went back (lost, or older than the marks after a power
        cut): a new commit is never taken for pushed."""
        number = max(self.made(), self.marks()["pushed"]) + 1
        replace_text(self.counter_path, str(number))
        return number

    def marks(self) -> dict[str, int]:
        """{"pushed": n, "failed": n}: commits up to n are on the remote; the last push
        that gave up covered commits up to n."""
        marks = {"pushed": 0, "failed": 0}
        with contextlib.suppress(OSError, ValueError, TypeError, OverflowError):
            saved = json.loads(self.marks_path.read_text())
            marks.update({k: int(saved[k]) for k in marks if k in saved})
        return marks

    def record(self, covered: int, pushed: bool) -> None:
        """After a push (`pushed`) or a give-up covering commits up to `covered`; the
        push lock is held, so marks only grow."""
        marks = self.marks()
        key = "pushed" if pushed else "failed"
        if covered > marks[key]:
            marks[key] = covered
            replace_text(self.marks_path, json.dumps(marks))

    @contextlib.contextmanager
    def leading(self) -> Iterator[None]:
        """The push lock: one pusher at a time among this clone's threads and processes
        (flock holds per open file, so each taker opens its own)."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)



def back_off(lost: int, deadline: float, rng: random.Random | None = None) -> float:
    """Sleep a random part of the back-off after the `lost`-th race lost in a row
    (≥ 1), never past `deadline` (monotonic) nor over BACKOFF_CAP; the seconds slept."""
    ceiling = min(BACKOFF_CAP, BACKOFF_SECONDS * 2 ** min(max(lost, 1) - 1, 16))
    pause = min((rng or random).uniform(0, ceiling), max(0.0, deadline - time.monotonic()))
    if pause > 0:
        time.sleep(pause)
    return max(pause, 0.0)
