"""An output of the build and what it depends on.

Every output names the records it shows (`deps`, record ids) and a `shape` string for
everything else that changes it (which events a list page holds, the navigation, the
day marked as today). The builder hashes those with the records' fingerprints; an
output whose hash matches the manifest is neither rendered nor written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

from ..model.records import Record


@dataclass(slots=True)
class Output:
    path: str  # relative to the output folder, POSIX
    deps: tuple[int, ...]
    shape: str
    render: Callable[[], bytes]
    kind: str = "page"
    same_as: str = ""  # an output made just before with the same bytes (a hard link)


def fingerprint(record: Record) -> bytes:
    """A digest of everything a record holds (data is plain values: repr is stable)."""
    return hashlib.blake2b(repr(sorted(record.data.items())).encode(),
                           digest_size=12).digest()


def signature(output: Output, fingerprints: dict[int, bytes], common: bytes) -> str:
    digest = _hashed(common).copy()
    # The path too: a signature names one output's bytes (relative links differ
    # between pages of the same shape), the key of outstore.py's stored outputs.
    digest.update(f"{output.path}\0{output.kind}\0{output.shape}\0".encode())
    # One update with every dependency's fingerprint (a feed has 20,000 of them).
    digest.update(b"".join(map(fingerprints.get, output.deps, repeat(b"?"))))
    return digest.hexdigest()


def catalog_digest(fingerprints: dict[int, bytes]) -> str:
    """One digest of every record's fingerprint (what the list snapshots answer from)."""
    return hashlib.blake2b(b"".join(fingerprints[i] for i in sorted(fingerprints)),
                           digest_size=16).hexdigest()


@lru_cache(maxsize=4)
def _hashed(common: bytes):
    return hashlib.blake2b(common, digest_size=16)


def ids(records: Iterable[Record | None]) -> tuple[int, ...]:
    return tuple(r.id for r in records if r is not None)
