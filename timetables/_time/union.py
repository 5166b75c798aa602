"""A union of cadences: the merged, strictly increasing sequence of every member's occurrences.

Two members that fire at the same instant give one occurrence (a run is never doubled).
Each step asks every member once and keeps the nearest answer, so a step costs one step of
each member; a union holds at most :data:`MAX_MEMBERS` of them, and a union inside a union
is flattened into it when built, so there is no nesting to walk.

Windows tile across the union as across any cadence: each run evaluates the time since
the union's previous occurrence, whichever member that came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from .business_days import BusinessMonths, Weekdays
from .cadence import Cadence
from .calendar import LocalGrid, LocalMonths
from .cron import CronCadence
from .durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND
from .excluding import ExcludingCadence

MAX_MEMBERS = 16
"""The most cadences one union merges (every step of the union steps each of them)."""


def times_of_day(cadence: Cadence) -> frozenset[int] | None:
    """The local times of day (microseconds after midnight) a wall-clock cadence fires at; ``None`` if unknown."""
    while isinstance(cadence, ExcludingCadence):
        cadence = cadence.inner
    if isinstance(cadence, CronCadence):
        return frozenset(minute * US_PER_MINUTE for minute in cadence.fields.minutes_of_day)
    if isinstance(cadence, LocalGrid):
        step = min(cadence.step, US_PER_DAY)
        return frozenset(range(cadence.base % step, US_PER_DAY, step))
    if isinstance(cadence, (LocalMonths, Weekdays, BusinessMonths)):
        return frozenset({cadence.time})
    return None


def _nearest_other_time(members: Sequence[Cadence]) -> int:
    """The least nominal spacing of two different times of day of two different members (a day if none)."""
    times = [times_of_day(member) for member in members]
    if any(found is None for found in times):
        return US_PER_SECOND  # an absolute-time member can fire at any time of local day
    least = US_PER_DAY
    for index, mine in enumerate(times):
        for theirs in times[index + 1 :]:
            for a in mine:  # type: ignore[union-attr]
                for b in theirs:  # type: ignore[union-attr]
                    apart = abs(a - b)
                    if apart:  # equal times are one occurrence
                        least = min(least, apart, US_PER_DAY - apart)
    return least


class UnionCadence:
    """Every occurrence of any of ``members`` (two to :data:`MAX_MEMBERS` cadences)."""

    __slots__ = ("members", "_shortest_gap")

    def __init__(self, members: Sequence[Cadence]) -> None:
        if not 2 <= len(members) <= MAX_MEMBERS:
            raise ValueError(f"members: {len(members)} cadences; a union merges 2 to {MAX_MEMBERS}")
        self.members = tuple(members)
        gaps = [member.shortest_gap for member in self.members]
        self._shortest_gap = min(*gaps, _nearest_other_time(self.members))

    @property
    def shortest_gap(self) -> int:
        """The least nominal spacing: within one member, or between the times of day of two members."""
        return self._shortest_gap

    def following(self, t: int) -> int:
        return min(member.following(t) for member in self.members)

    def at_or_before(self, t: int) -> int:
        return max(member.at_or_before(t) for member in self.members)

    def at_or_after(self, t: int) -> int:
        return min(member.at_or_after(t) for member in self.members)

    def preceding(self, occurrence: int) -> int:
        return self.at_or_before(occurrence - 1)
