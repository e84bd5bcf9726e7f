"""The one place the app asks what time it is, so tests can fix "now"."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

Clock = Callable[[], dt.datetime]


def system_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def fixed(moment: dt.datetime) -> Clock:
    """A clock that always answers `moment` (aware; naive is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return lambda: moment
