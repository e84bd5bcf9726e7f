"""Reading record files: one at a time, or thousands over two processes (a start-up
or build without a cache parses every file, and YAML is most of that time)."""

from __future__ import annotations

import os
import pickle

from . import yamlfile
from .content import ContentTree
from .records import RecordError, from_file, line_of

PARALLEL_MIN = 2000  # files; below this a fork (and pickling the results) does not pay

# ("record", data) with the record's validated data, or ("problem", line, message).
Outcome = tuple


def parse(tree: ContentTree, relpath: str, collection: str) -> Outcome:
    try:
        data = tree.read_bytes(relpath)
    except OSError as exc:
        return ("problem", 0, f"cannot read: {exc.strerror}")
    try:
        return ("record", from_file(collection, yamlfile.load(data), relpath).data)
    except yamlfile.YamlError as exc:
        return ("problem", exc.line, exc.message)
    except RecordError as exc:
        return ("problem", line_of(data.decode("utf-8", "replace"), exc.key), exc.message)


def parse_many(tree: ContentTree, files: list[tuple[str, str]]) -> dict[str, Outcome]:
    """(relpath, collection) -> outcome for each file; a forked child parses half."""
    if len(files) < PARALLEL_MIN or not hasattr(os, "fork"):
        return {relpath: parse(tree, relpath, c) for relpath, c in files}
    mine, theirs = files[: len(files) // 2], files[len(files) // 2:]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, send the outcomes, leave without any cleanup
        os.close(read_end)
        status = 1
        try:
            with os.fdopen(write_end, "wb") as fh:
                pickle.dump({p: parse(tree, p, c) for p, c in theirs}, fh,
                            protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    found = {relpath: parse(tree, relpath, c) for relpath, c in mine}
    with os.fdopen(read_end, "rb") as fh:
        try:
            found.update(pickle.load(fh))  # from our own child
        except (EOFError, pickle.UnpicklingError):
            pass  # the child died: its files are parsed below, here
    os.waitpid(pid, 0)
    for relpath, collection in theirs:
        if relpath not in found:
            found[relpath] = parse(tree, relpath, collection)
    return found
