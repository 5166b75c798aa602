"""Calendar cadences: every N hours, days, weeks or months at a wall-clock time in a timezone.

An anchored cadence is a strictly increasing sequence of *local* times
``local(k)`` (see :mod:`.wallclock`), one per period, indexed by an integer
``k`` counted from a fixed local epoch, never from "now", so every scheduler
computes the same occurrences:

* every N days: the local dates ``1970-01-01 + k*N days``;
* every N weeks: the given weekday of the weeks ``k*N`` weeks after the
  (Monday-started) week of 1970-01-05;
* every N months: the months ``k*N`` months after January 1970, on the given
  day, or on the month's last day when it is shorter (31 means month's end);
* every N hours: the wall times ``at + k*N hours``; N divides 24, so these are
  the same times every day.

The period is added on the local calendar and only then converted to an
instant, so "daily at 09:00" stays 09:00 across daylight saving and the real
spacing on a transition day is 23 or 25 hours. Conversion follows the rule of
:mod:`.wallclock`: a wall time runs at the first instant the clock reads it or
later (a gap time when the gap ends, a repeated time at its first instance),
and a date the zone skipped entirely has no run. Occurrences are the distinct
instants so obtained: a run is never lost and never doubled.

Unanchored cadences (no wall time) are not built here: they are plain fixed
intervals on absolute time (:class:`~.grid.EpochGrid`).
"""

from __future__ import annotations

from datetime import date

from .durations import US_PER_DAY
from .epoch import EPOCH_ORDINAL, days_in_month
from .wallclock import WallClock

_FIRST_WEEK_ORDINAL = date(1970, 1, 5).toordinal()  # the Monday that starts week 0


class LocalCadence:
    """Occurrences at the first instants the zone's clock reads ``local(k)``, for every integer ``k``.

    Subclasses give the local-time sequence (``_local``) and its inverse
    (``_index``); the stepping below is written once, for all of them. Every
    loop moves ``k`` towards an occurrence that exists, and local times grow by
    at least an hour per step, so each ends within a few steps.
    """

    __slots__ = ("clock",)

    def __init__(self, clock: WallClock) -> None:
        self.clock = clock

    def _local(self, k: int) -> int:
        raise NotImplementedError

    def _index(self, local: int) -> int:
        """The largest ``k`` with ``_local(k) <= local``."""
        raise NotImplementedError

    def following(self, t: int) -> int:
        # Every k at or below this index reads at or before the clock at t, so its instant is <= t.
        k = self._index(self.clock.reading(t)) + 1
        while True:
            occurrence = self.clock.first_instant(self._local(k))
            if occurrence is not None and occurrence > t:
                return occurrence
            k += 1

    def preceding(self, occurrence: int) -> int:
        # An occurrence is where the clock first reads its local time, so no k above this index
        # can map before it; ks at or below it map at or before it, equal ones (gap) are skipped.
        k = self._index(self.clock.reading(occurrence))
        while True:
            earlier = self.clock.first_instant(self._local(k))
            if earlier is not None and earlier < occurrence:
                return earlier
            k -= 1

    def at_or_after(self, t: int) -> int:
        return self.following(t - 1)

    def at_or_before(self, t: int) -> int:
        return self.preceding(self.following(t))


class LocalGrid(LocalCadence):
    """Local times ``base + k * step``: every N hours, days or weeks."""

    __slots__ = ("base", "step")

    def __init__(self, clock: WallClock, base: int, step: int) -> None:
        super().__init__(clock)
        self.base = base
        self.step = step

    @property
    def shortest_gap(self) -> int:
        return self.step

    def _local(self, k: int) -> int:
        return self.base + k * self.step

    def _index(self, local: int) -> int:
        return (local - self.base) // self.step


class LocalMonths(LocalCadence):
    """Every ``every`` months from January 1970, on ``day`` (clamped to the month's length) at ``time``."""

    __slots__ = ("every", "day", "time")

    def __init__(self, clock: WallClock, every: int, day: int, time: int) -> None:
        super().__init__(clock)
        self.every = every
        self.day = day
        self.time = time

    @property
    def shortest_gap(self) -> int:
        return 28 * self.every * US_PER_DAY  # the shortest month, every `every` months

    def _local(self, k: int) -> int:
        year, month = divmod(k * self.every, 12)
        year, month = year + 1970, month + 1
        ordinal = date(year, month, min(self.day, days_in_month(year, month))).toordinal()
        return (ordinal - EPOCH_ORDINAL) * US_PER_DAY + self.time

    def _index(self, local: int) -> int:
        today = date.fromordinal(EPOCH_ORDINAL + local // US_PER_DAY)
        k = ((today.year - 1970) * 12 + today.month - 1) // self.every
        # The run of month k may still lie ahead within the month that holds `local`.
        return k - 1 if self._local(k) > local else k


def daily(clock: WallClock, time: int, every: int) -> LocalGrid:
    """Every ``every`` days at ``time`` (microseconds after local midnight), counting from 1970-01-01."""
    return LocalGrid(clock, time, every * US_PER_DAY)


def weekly(clock: WallClock, time: int, every: int, weekday: int) -> LocalGrid:
    """Every ``every`` weeks on ``weekday`` (0 = Sunday), counting from the week of Monday 1970-01-05."""
    first = _FIRST_WEEK_ORDINAL + (weekday - 1) % 7
    return LocalGrid(clock, (first - EPOCH_ORDINAL) * US_PER_DAY + time, 7 * every * US_PER_DAY)


def monthly(clock: WallClock, time: int, every: int, day: int) -> LocalMonths:
    """Every ``every`` months from January 1970 on ``day`` (a day the month lacks means its last day)."""
    return LocalMonths(clock, every, day, time)


def hourly(clock: WallClock, time: int, every: int) -> LocalGrid:
    """Every ``every`` hours (a divisor of 24) on the wall clock, through ``time``."""
    step = every * US_PER_DAY // 24
    return LocalGrid(clock, time % step, step)
