"""Reading record files: one at a time, or thousands over two processes (a start-up
or build without a cache parses every file, and YAML is most of that time)."""

from __future__ import annotations

from ..model.records import RecordError, from_file, line_of
from . import parallel, yamlfile
from .content import ContentTree

PARALLEL_MIN = 2000  # files; below this a fork (and pickling the results) does not pay

# ("record", data) with the record's validated data, or ("problem", line, message).
Outcome = tuple


def parse(tree: ContentTree, relpath: str, collection: str) -> Outcome:
    try:
        data = tree.read_bytes(relpath)
    except OSError as exc:
        return ("problem", 0, f"cannot read: {exc.strerror}")
    return parse_data(data, relpath, collection)


def parse_data(data: bytes, relpath: str, collection: str) -> Outcome:
    """The outcome of a file's bytes, read already."""
    try:
        return ("record", from_file(collection, yamlfile.load(data), relpath).data)
    except yamlfile.YamlError as exc:
        return ("problem", exc.line, exc.message)
    except RecordError as exc:
        text = data.decode("utf-8", "replace")
        return ("problem", line_of(text, exc.key, exc.at), exc.message)


def parse_many(tree: ContentTree, files: list[tuple[str, str]]) -> dict[str, Outcome]:
    """(relpath, collection) -> outcome for each file; a forked child parses half."""
    workers = 2 if len(files) >= PARALLEL_MIN else 1
    try:
        outcomes = parallel.run(files, lambda f: parse(tree, *f), _half, workers=workers)
    except RuntimeError:  # the child died (killed): parse everything here
        outcomes = [parse(tree, relpath, c) for relpath, c in files]
    return {relpath: outcome for (relpath, _), outcome in zip(files, outcomes)}


def _half(file: tuple[str, str], workers: int) -> int:
    return hash(file[0]) % workers
