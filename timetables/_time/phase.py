"""Stable phases: an offset after each occurrence at which a run may start.

The phase spreads runs of many workflows that share a cadence across the
interval, so they do not all hit the same database at the same instant. It is
derived from a fixed hash (SHA-256) of the workflow reference, never from the
built-in ``hash()`` (salted per process), so every scheduler instance, every
restart and every machine computes the same phase.
"""

from __future__ import annotations

import hashlib

from .durations import US_PER_MINUTE

MAX_DEFAULT_SPREAD = 15 * US_PER_MINUTE


def default_spread_bound(shortest_gap: int) -> int:
    """What ``Spread()`` without ``max`` spreads over, for every cadence.

    Below the shortest gap between consecutive occurrences, so a run always starts before
    the next occurrence, and below 15 minutes, so results never arrive later than that.
    """
    return min(shortest_gap, MAX_DEFAULT_SPREAD)


def stable_hash(key: str) -> int:
    """A 64-bit integer from ``key`` that is identical in every Python process."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def spread_phase(key: str, bound: int, step: int) -> int:
    """A phase in ``[0, bound)``, a whole multiple of ``step``, picked by hashing ``key``.

    With ``bound=15m, step=1m`` this is the anti-herd offset of 0 to 14 whole
    minutes; with ``step=1s`` it spreads at one-second resolution.
    """
    slots = max(1, -(-bound // step))  # ceil: the last slot may be shorter than a step
    return (stable_hash(key) % slots) * step
