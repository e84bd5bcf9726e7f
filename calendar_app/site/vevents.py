"""Each event's VEVENT, made once and kept in the builder's stash with the signature it
was made for (its records, base URL, templates): the event's own .ics and every feed
that carries it concatenate the same bytes.

A cold build makes them ahead, while it plans (site/ahead.py): what the render
processes would have made, the same function of the same records.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ical, paths
from .model import EventView, SiteModel
from .pages import event_deps
from .plan import Output, signature
from .stash import Stash


class Vevents:
    """The VEVENT of an event (call it), from the stash when made for its signature."""

    def __init__(self, stash: Stash, model: SiteModel, base_url: str,
                 sig_inputs: Callable[[], tuple[dict[int, bytes], bytes]]) -> None:
        self.stash = stash
        self.model = model
        self.host = ical.uid_host(model.settings, base_url)
        self.base_url = base_url
        self.sig_inputs = sig_inputs  # the build's fingerprints and common digest, now
        self.sigs: dict[int, str] = {}

    def sig(self, event: EventView) -> str:
        found = self.sigs.get(event.id)
        if found is None:  # worked out where it is needed: in the worker processes
            probe = Output(event.ics_path, event_deps(self.model, event),
                           f"vevent {self.host}", bytes)  # only signed, never rendered
            found = self.sigs[event.id] = signature(probe, *self.sig_inputs())
        return found

    def __call__(self, event: EventView) -> bytes:
        sig = self.sig(event)
        cached = self.stash.data.get(event.id)
        if cached is None or cached[0] != sig:
            cached = (sig, self._make(event))
            self.stash.update({event.id: cached})
        return cached[1]

    def _make(self, event: EventView) -> bytes:
        return ical.vevent(event, self.model, self.host,
                           self.base_url + paths.folder(event.path))

    def missing(self, stopped: Callable[[], bool]) -> dict[int, tuple[str, bytes]]:
        """The VEVENTs the stash lacks, made until `stopped()` (site/ahead.py: in a
        child while the builder plans; what is left is made while rendering)."""
        known, made = self.stash.data, {}
        for n, event in enumerate(self.model.events):
            if n % 64 == 0 and stopped():
                break
            sig = self.sig(event)
            if (known.get(event.id) or ("",))[0] != sig:
                made[event.id] = (sig, self._make(event))
        return made
