"""A cadence with excluded days: every occurrence of another cadence, except those on excluded local days.

The filtered sequence is still a cadence, so everything the stepping engine does (windows,
phase, catch-up, partition keys) applies to it unchanged. In particular windows keep tiling
from one *remaining* occurrence to the next: the run after an excluded day evaluates the
time since the last run, excluded day included, so no data goes unprocessed. A Monday run
of a weekday schedule evaluates Friday's occurrence to Monday's.

An occurrence's day is the local date the zone's clock reads at that instant. Stepping
jumps over a whole run of excluded days at once (to the first instant the clock reads the
day after it), so the cost of a step is one inner step per run of excluded days that holds
an occurrence, never one per skipped occurrence. How many such runs can follow each other
is bounded when the exclusions are parsed (:mod:`.horizon`); :data:`MAX_SKIPS` is a
backstop far above that bound.
"""

from __future__ import annotations

from .cadence import Cadence
from .durations import US_PER_DAY
from .excluded_days import ExcludedDays
from .wallclock import WallClock

MAX_SKIPS = 4096
"""The most runs of excluded days one step may jump (the parse-time horizon keeps real steps under 400)."""


class ExclusionHorizonExceeded(ValueError):
    """A step jumped :data:`MAX_SKIPS` runs of excluded days: the horizon check was bypassed."""


def day_start(clock: WallClock, day: int) -> int:
    """The first instant at which ``clock`` reads local day ``day`` or later."""
    for later in range(day, day + 3):  # a zone skips at most one date at a time
        start = clock.first_instant(later * US_PER_DAY)
        if start is not None:
            return start
    raise ValueError(f"day {day}: the zone skipped three dates in a row")  # no zone in the tz database does


class ExcludingCadence:
    """The occurrences of ``inner`` whose local day on ``clock`` is not in ``days``."""

    __slots__ = ("inner", "days", "clock")

    def __init__(self, inner: Cadence, days: ExcludedDays, clock: WallClock) -> None:
        self.inner = inner
        self.days = days
        self.clock = clock

    @property
    def shortest_gap(self) -> int:
        return self.inner.shortest_gap  # removing occurrences never brings two closer

    def day_of(self, t: int) -> int:
        """The local day the clock reads at instant ``t``."""
        return self.clock.reading(t) // US_PER_DAY

    def following(self, t: int) -> int:
        occurrence = self.inner.following(t)
        for _ in range(MAX_SKIPS):
            run = self.days.run_of(self.day_of(occurrence))
            if run is None:
                return occurrence
            # The first occurrence once the run is over; `+ 1` keeps moving even where a fall-back
            # at midnight makes the clock read an excluded day again just after it ended.
            after_run = day_start(self.clock, self.days.lasts[run] + 1)
            occurrence = self.inner.at_or_after(max(after_run, occurrence + 1))
        raise ExclusionHorizonExceeded(f"exclude: more than {MAX_SKIPS} runs of excluded days in a row")

    def at_or_before(self, t: int) -> int:
        occurrence = self.inner.at_or_before(t)
        for _ in range(MAX_SKIPS):
            run = self.days.run_of(self.day_of(occurrence))
            if run is None:
                return occurrence
            before_run = day_start(self.clock, self.days.firsts[run]) - 1
            occurrence = self.inner.at_or_before(min(before_run, occurrence - 1))
        raise ExclusionHorizonExceeded(f"exclude: more than {MAX_SKIPS} runs of excluded days in a row")

    def at_or_after(self, t: int) -> int:
        return self.following(t - 1)

    def preceding(self, occurrence: int) -> int:
        return self.at_or_before(occurrence - 1)

    def is_excluded(self, occurrence: int) -> bool:
        """Whether an occurrence of ``inner`` falls on an excluded day."""
        return self.day_of(occurrence) in self.days
