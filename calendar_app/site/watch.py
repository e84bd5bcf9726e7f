"""`--watch`: rebuild on save. Content changes refresh the builder's in-memory catalog
(only the changed files are re-read), template changes just rebuild."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from .builder import Builder, Report

DEBOUNCE = 0.2  # seconds of quiet before rebuilding: one save is several events


class _Collector(FileSystemEventHandler):
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.changed = threading.Event()
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        with self.lock:
            for name in (event.src_path, getattr(event, "dest_path", "")):
                if name:
                    self.paths.add(str(name))
        self.changed.set()

    def take(self) -> set[str]:
        with self.lock:
            paths, self.paths = self.paths, set()
            self.changed.clear()
            return paths


def watch(builder: Builder, on_report: Callable[[Report], object],
          stop: threading.Event | None = None) -> None:
    content = builder.calendar.tree.root
    folders = [content]
    if builder.options.templates:
        folders.append(Path(builder.options.templates).resolve())
    collector = _Collector()
    observer = Observer()
    for folder in folders:
        observer.schedule(collector, str(folder), recursive=True)
    observer.start()
    print(f"watching {', '.join(map(str, folders))} (Ctrl-C to stop)", flush=True)
    stop = stop or threading.Event()
    try:
        while not stop.is_set():
            if not collector.changed.wait(0.5):
                continue
            time.sleep(DEBOUNCE)
            changed = collector.take()
            relpaths = []
            for name in changed:
                path = Path(name)
                if content in path.parents:
                    relpaths.append(path.relative_to(content).as_posix())
            if relpaths:
                builder.calendar.catalog.refresh(relpaths)
            on_report(builder.build())
    except KeyboardInterrupt:
        pass
    finally:
        observer.stop()
        observer.join()
