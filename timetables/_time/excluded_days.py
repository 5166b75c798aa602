"""Excluded local days: the dates a schedule skips, each with the reason a person reads.

A day here is a *local* calendar day of the schedule's zone, counted as whole days since
1970-01-01 (the same count as :mod:`.epoch`). What a user excludes (single dates, date
ranges, the dates of a holiday calendar) arrives as :class:`ExcludedSpan` values: a first
and last day, inclusive, and a reason. :class:`ExcludedDays` keeps them two ways:

* merged into sorted, disjoint *runs* of consecutive days, which is what stepping asks
  ("is this day excluded, and where does its run end?"): one binary search;
* as given, sorted by first day, so the plan can say *why* a day is excluded (a date can
  be a holiday and fall inside a range too: every reason is kept).

Every span lies inside 1900-2999 and is at most :data:`MAX_SPAN_DAYS` long: the callers
check that when they parse what a user wrote, so the searches below stay short.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from .epoch import EPOCH_ORDINAL
from .supported import FIRST_DATE, LAST_DATE

FIRST_DAY = FIRST_DATE.toordinal() - EPOCH_ORDINAL
"""The first local day an exclusion may name."""
LAST_DAY = LAST_DATE.toordinal() - EPOCH_ORDINAL
"""The last local day an exclusion may name."""
MAX_SPAN_DAYS = 366
"""The longest one excluded range may be: a pause longer than a year is the DAG's end_date's job."""


def day_number(value: date) -> int:
    """A date as local days since 1970-01-01."""
    return value.toordinal() - EPOCH_ORDINAL


def day_date(day: int) -> date:
    """Local days since 1970-01-01 as a date."""
    return date.fromordinal(day + EPOCH_ORDINAL)


def is_weekday(day: int) -> bool:
    """Monday to Friday (1970-01-01, day 0, was a Thursday)."""
    return (day + 3) % 7 < 5


@dataclass(frozen=True, slots=True)
class ExcludedSpan:
    """Days ``first`` to ``last`` (inclusive, local days since 1970-01-01), skipped because of ``reason``."""

    first: int
    last: int
    reason: str


class ExcludedDays:
    """A set of excluded local days: merged runs for stepping, the spans as given for reasons."""

    __slots__ = ("firsts", "lasts", "spans", "_span_firsts")

    def __init__(self, spans: Iterable[ExcludedSpan]) -> None:
        self.spans: tuple[ExcludedSpan, ...] = tuple(sorted(spans, key=lambda s: (s.first, s.last, s.reason)))
        self._span_firsts = [span.first for span in self.spans]
        firsts: list[int] = []
        lasts: list[int] = []
        for span in self.spans:
            if lasts and span.first <= lasts[-1] + 1:  # overlapping or adjacent: one run
                lasts[-1] = max(lasts[-1], span.last)
            else:
                firsts.append(span.first)
                lasts.append(span.last)
        self.firsts: tuple[int, ...] = tuple(firsts)
        self.lasts: tuple[int, ...] = tuple(lasts)

    def __len__(self) -> int:
        """How many runs of consecutive excluded days there are."""
        return len(self.firsts)

    def __bool__(self) -> bool:
        return bool(self.firsts)

    def combined(self, other: ExcludedDays) -> ExcludedDays:
        """The days excluded by either."""
        return ExcludedDays(self.spans + other.spans)

    def run_of(self, day: int) -> int | None:
        """The index of the run holding ``day``, or ``None`` when ``day`` is not excluded."""
        index = bisect_right(self.firsts, day) - 1
        return index if index >= 0 and self.lasts[index] >= day else None

    def __contains__(self, day: int) -> bool:
        return self.run_of(day) is not None

    def runs_from(self, day: int) -> range:
        """The indexes of the runs that end on or after ``day``, in order."""
        return range(bisect_left(self.lasts, day), len(self.firsts))

    def reasons(self, day: int) -> list[str]:
        """Why ``day`` is excluded: the reason of every span holding it, in order (empty when it is not)."""
        found = []
        # A span holding `day` starts at most MAX_SPAN_DAYS before it; spans are sorted by their first day.
        for index in range(bisect_left(self._span_firsts, day - MAX_SPAN_DAYS), bisect_right(self._span_firsts, day)):
            span = self.spans[index]
            if span.last >= day and span.reason not in found:
                found.append(span.reason)
        return found
