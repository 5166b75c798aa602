"""The one interface every cadence (epoch grid, calendar, cron) offers the stepping engine."""

from __future__ import annotations

from typing import Protocol


class Cadence(Protocol):
    """A strictly increasing sequence of occurrences, in microseconds since the Unix epoch.

    Implementations must be pure and deterministic: the same arguments give the
    same answer in every process, on every machine.
    """

    @property
    def shortest_gap(self) -> int:
        """The shortest nominal spacing of two consecutive occurrences (a DST fold can bring two closer)."""
        ...

    def following(self, t: int) -> int:
        """The first occurrence strictly after ``t``."""
        ...

    def at_or_before(self, t: int) -> int:
        """The last occurrence at or before ``t``."""
        ...

    def at_or_after(self, t: int) -> int:
        """The first occurrence at or after ``t``."""
        ...

    def preceding(self, occurrence: int) -> int:
        """The occurrence just before ``occurrence`` (which is itself an occurrence)."""
        ...
