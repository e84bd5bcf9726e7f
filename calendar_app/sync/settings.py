"""How a server's sync with its remote is set up (`serve`, the configuration, the CLI),
checked where it is given; the errors sync reports."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.content import NETWORK_TIMEOUT

PUSH_MODES = ("wait", "queue")
# What README recommends in the shared (bare) repository's configuration: every push
# there otherwise runs `git maintenance run --auto` (gc) after the ref update, a process
# per push that finds nothing to do nearly every time; a shared repository is kept by
# its own scheduled `git maintenance run` (or its host's). The rest of a push's work
# on the remote (receive-pack, unpack-objects, the connectivity check) is what makes
# it safe and stays.
REMOTE_CONFIG = {"receive.autoGC": "false"}


class SyncError(RuntimeError):
    """Sync cannot be set up or an exchange failed; the message says why."""


class RemoteStalled(SyncError):
    """A network git call got no answer in time (and was killed)."""


@dataclass(frozen=True)
class SyncSettings:
    remote: str  # a remote's name in the clone, or the URL to clone from
    branch: str = "main"
    webhook_secret: str = ""
    poll: float = 0.0  # seconds between fetches; 0: webhooks only
    push: str = "wait"  # see the module docstring
    timeout: float = NETWORK_TIMEOUT  # seconds for the network calls of one exchange

    def __post_init__(self) -> None:
        if self.push not in PUSH_MODES:
            raise SyncError(f"push mode must be one of {', '.join(PUSH_MODES)}, "
                            f"not {self.push!r}")
        problem = poll_problem(self.poll) or timeout_problem(self.timeout)
        if problem:
            raise SyncError(problem)


MIN_POLL = 0.1  # seconds: a shorter period is a busy loop, not polling


def poll_problem(value: float) -> str:
    """What is wrong with a polling period ("" when nothing): 0 is off."""
    if not isinstance(value, (int, float)) or not (value == 0 or MIN_POLL <= value < 1e9):
        return (f"the polling period must be 0 (off) or a number of seconds from "
                f"{MIN_POLL:g}, not {value!r}")
    return ""


def seconds(value: object, name: str) -> float:
    """A setting in seconds as given: a number, or text (the environment)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SyncError(f"{name} must be a number of seconds, not {value!r}") from None


def timeout_problem(value: float) -> str:
    """What is wrong with a network timeout ("" when nothing)."""
    if not isinstance(value, (int, float)) or not 0 < value < 1e9:
        return f"the network timeout must be a positive number of seconds, not {value!r}"
    return ""
