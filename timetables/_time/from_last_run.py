"""Plain intervals counted from the last run: the unanchored day, week and month cadences.

Without a wall-clock anchor a calendar cadence is "plus one day, plus seven days, plus thirty
days" from the last run: each occurrence is the previous scheduled run's occurrence plus one
period, on absolute time (no daylight saving). Such a sequence is a grid ``origin + k * interval``
whose origin is any one of its occurrences, so everything the stepping engine asks stays O(1)
arithmetic once the origin is known. The origin is never "now" after the first run: it is read
from what Airflow stores (the last run's data interval, the DAG's start date), so every
scheduler and every restart computes the same occurrences. See :func:`origin_for` for the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from .durations import US_PER_SECOND


@dataclass(frozen=True, slots=True)
class FromLastRun:
    """Occurrences at ``origin + k * interval`` for every integer ``k`` (``origin`` kept modulo ``interval``)."""

    interval: int
    origin: int = 0

    @property
    def shortest_gap(self) -> int:
        return self.interval

    def rebased(self, occurrence: int) -> FromLastRun:
        """The same interval, stepping from ``occurrence``."""
        return FromLastRun(self.interval, occurrence % self.interval)

    def following(self, t: int) -> int:
        return t - (t - self.origin) % self.interval + self.interval

    def at_or_before(self, t: int) -> int:
        return t - (t - self.origin) % self.interval

    def at_or_after(self, t: int) -> int:
        return t + (self.origin - t) % self.interval

    def preceding(self, occurrence: int) -> int:
        return occurrence - self.interval


def first_occurrence(moment: int, phase: int) -> int:
    """The occurrence of a first run due at ``moment``: its start minus the phase, in whole seconds."""
    due = moment - phase
    return due - due % US_PER_SECOND


def origin_for(*, last: int | None, earliest: int | None, moment: int, phase: int) -> int:
    """Where a sequence from the last run steps from.

    The last scheduled run's occurrence when there is one; else the DAG's start date (the
    first run's period starts there, as Airflow reads a start date); else, for a DAG with
    neither, the moment it is first scheduled (Airflow stores that first run, and every later
    one steps from it, so the wall clock is read once).
    """
    if last is not None:
        return last
    if earliest is not None:
        return earliest
    return first_occurrence(moment, phase)
