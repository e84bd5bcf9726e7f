"""`--watch`: rebuild on save. Content changes refresh the builder's in-memory catalog
(only the changed files are re-read), template changes just rebuild. Files are
followed by the server's own `Watcher`: one debounce, and reads (the builder's own
among them) are not changes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from ..catalog.watcher import CONTENT_FOLDERS, Watcher
from .builder import Builder, Report

log = logging.getLogger(__name__)

DEBOUNCE = 0.2  # seconds of quiet before rebuilding: one save is several events
STOP_POLL = 0.5  # seconds between the loop's looks at `stop` while nothing changes


def watch(builder: Builder, on_report: Callable[[Report], object],
          stop: threading.Event | None = None) -> None:
    catalog = builder.reader.catalog
    rebuild = threading.Event()

    def content_changed(paths: set[str], rescan: bool) -> None:
        if rescan:
            catalog.resync()
        catalog.refresh(paths)
        rebuild.set()

    watchers = [Watcher(catalog.tree.root, content_changed, (*CONTENT_FOLDERS, "media"),
                        quiet=DEBOUNCE, max_delay=2.0)]
    if builder.options.templates:
        templates = Path(builder.options.templates).resolve()
        watchers.append(Watcher(templates, lambda _paths, _rescan: rebuild.set(),
                                quiet=DEBOUNCE, max_delay=2.0))
    for watcher in watchers:
        watcher.start()
    print(f"watching {', '.join(w.root for w in watchers)} (Ctrl-C to stop)", flush=True)
    stop = stop or threading.Event()
    try:
        while not stop.is_set():
            if not rebuild.wait(STOP_POLL):
                continue
            rebuild.clear()
            try:
                report = builder.build()
            except Exception:  # a fault of one build must not end the watch (or the
                # server's builder process): the next change builds again
                log.exception("build failed; still watching")
                continue
            on_report(report)
    except KeyboardInterrupt:
        pass
    finally:
        for watcher in watchers:
            watcher.stop()
