"""Record ids and their bounds (occurrences of recurring events have ids of their own)."""

from __future__ import annotations

# Ids travel as JSON numbers: clients in JavaScript read integers exactly only up to
# 2**53 - 1. WordPress ids start at 1.
MAX_JSON_ID = 2**53 - 1
# Each occurrence of a recurring event has an id of its own (occurrences.py):
# OCCURRENCE_BASE + series id * OCCURRENCE_SLOTS + its number (below OCCURRENCE_SLOTS).
OCCURRENCE_BASE = 10**13
OCCURRENCE_SLOTS = 10_000
# The largest record id: the one whose last occurrence id is still JSON-safe. It lies far
# below OCCURRENCE_BASE, so no record id is ever an occurrence's.
MAX_ID = (MAX_JSON_ID + 1 - OCCURRENCE_BASE) // OCCURRENCE_SLOTS - 1


def valid_id(value: object) -> bool:
    """True for an integer a record may have as its id (1 to MAX_ID)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID
