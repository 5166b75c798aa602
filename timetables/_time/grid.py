"""Epoch-aligned interval cadences: occurrences are whole multiples of the interval since 1970-01-01 UTC.

Because the grid is anchored at the Unix epoch rather than at a start date or
at "now", every scheduler instance, restart and machine computes the same
occurrences, and each occurrence is also a bucket boundary of any query that
groups by the same interval.
"""

from __future__ import annotations

from dataclasses import dataclass

from .durations import MAX_DURATION, US_PER_DAY, US_PER_SECOND, format_duration, shown


def check_interval(field: str, value: object, us: int) -> None:
    """Refuse intervals that are not whole seconds from 1s to 366d, or neither divide a day nor are whole days.

    A divisor of 24h repeats the same times every day; "7m" or "5h" would drift
    through the day and mean a different set of times each day. Below a second a
    schedule only piles up runs faster than a scheduler loop can create them.
    """
    if us <= 0:
        raise ValueError(f"{field}: {shown(value)} must be more than zero; e.g. '5m'")
    if us % US_PER_SECOND:
        raise ValueError(
            f"{field}: {shown(value)} ({format_duration(us)}) is not a whole number of seconds; a scheduling "
            f"interval is a whole number of seconds, 1s or more, e.g. '1s', '30s' or '5m'"
        )
    if us > MAX_DURATION:
        raise ValueError(
            f"{field}: {shown(value)} ({format_duration(us)}) is longer than the maximum; a scheduling "
            f"interval is at most 366d, e.g. '7d' or '366d'"
        )
    if us < US_PER_DAY and US_PER_DAY % us:
        raise ValueError(
            f"{field}: {value!r} does not divide a day evenly; use a divisor of 24h such as 30s, 5m, "
            f"45m or 6h, or a whole number of days such as 1d or 2d"
        )
    if us > US_PER_DAY and us % US_PER_DAY:
        raise ValueError(
            f"{field}: {value!r} ({format_duration(us)}) is longer than a day but not a whole number of "
            f"days; use 1d, 2d, ... or a divisor of 24h such as 6h or 12h"
        )


@dataclass(frozen=True, slots=True)
class EpochGrid:
    """Occurrences at ``k * interval`` microseconds since the Unix epoch, for every integer ``k``."""

    interval: int

    @property
    def shortest_gap(self) -> int:
        return self.interval

    def following(self, t: int) -> int:
        return (t // self.interval + 1) * self.interval

    def at_or_before(self, t: int) -> int:
        return t - t % self.interval

    def at_or_after(self, t: int) -> int:
        return -(-t // self.interval) * self.interval

    def preceding(self, occurrence: int) -> int:
        return occurrence - self.interval
