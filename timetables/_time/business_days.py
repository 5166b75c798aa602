"""Business-day cadences: every business day, or the Nth (or Nth-last) business day of a month, at a wall time.

A business day is a local Monday to Friday that the schedule's holiday calendar does not
exclude. Both cadences are :class:`~.calendar.LocalCadence` sequences, so they follow the
calendar rule of :mod:`.wallclock` across daylight saving (a wall time in a gap runs when
the gap ends, a repeated one once, at its first instance).

* :class:`Weekdays` is every Monday to Friday; the adapter removes the holidays from it with
  an :class:`~.excluding.ExcludingCadence`, so a holiday is an *excluded* occurrence the plan
  can name, and windows tile across it (Monday's run evaluates Friday 09:00 to Monday 09:00).
* :class:`BusinessMonths` counts business days within each month: the holidays change
  *which* day is the Nth, so nothing is excluded. ``nth`` is 1 to 23 from the start or -1
  to -23 from the end; a month with fewer business days runs on its last (or first) one,
  as ``on=31`` means a month's last day. A month with no business day at all is refused
  when the schedule is parsed (:func:`first_month_without_business_day`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from .calendar import LocalCadence
from .durations import US_PER_DAY
from .epoch import EPOCH_ORDINAL, days_in_month
from .excluded_days import ExcludedDays, day_number, is_weekday
from .wallclock import WallClock

MAX_NTH = 23
"""No month has more than 23 weekdays."""
_FIRST_MONDAY = day_number(date(1970, 1, 5))


class Weekdays(LocalCadence):
    """Monday to Friday at ``time`` (microseconds after local midnight); index 0 is Monday 1970-01-05."""

    __slots__ = ("time",)

    def __init__(self, clock: WallClock, time: int) -> None:
        super().__init__(clock)
        self.time = time

    @property
    def shortest_gap(self) -> int:
        return US_PER_DAY

    def _local(self, k: int) -> int:
        week, weekday = divmod(k, 5)
        return (_FIRST_MONDAY + 7 * week + weekday) * US_PER_DAY + self.time

    def _index(self, local: int) -> int:
        week, weekday = divmod((local - self.time) // US_PER_DAY - _FIRST_MONDAY, 7)
        return 5 * week + min(weekday, 4)


def _month_start(k: int) -> tuple[int, int]:
    year, month = divmod(k, 12)
    return year + 1970, month + 1


def _business_days(year: int, month: int, holidays: ExcludedDays) -> Iterator[int]:
    """The business days (local days since 1970-01-01) of one month, in order, one at a time."""
    first = date(year, month, 1).toordinal() - EPOCH_ORDINAL
    return (day for day in range(first, first + days_in_month(year, month)) if is_weekday(day) and day not in holidays)


def business_days_of(year: int, month: int, holidays: ExcludedDays) -> list[int]:
    """The business days (local days since 1970-01-01) of one month, in order."""
    return list(_business_days(year, month, holidays))


class BusinessMonths(LocalCadence):
    """Every ``every`` months from January 1970, on business day ``nth`` of the month, at ``time``."""

    __slots__ = ("every", "nth", "time", "holidays")

    def __init__(self, clock: WallClock, every: int, nth: int, time: int, holidays: ExcludedDays) -> None:
        super().__init__(clock)
        self.every = every
        self.nth = nth
        self.time = time
        self.holidays = holidays

    @property
    def shortest_gap(self) -> int:
        return US_PER_DAY  # holidays can pull the Nth business days of two months close together

    def _day(self, k: int) -> int:
        year, month = _month_start(k * self.every)
        days = business_days_of(year, month, self.holidays)
        if not days:  # refused at parse time: every month the cadence meets has a business day
            raise ValueError(f"calendar: {year}-{month:02d} has no business day")
        return days[min(self.nth, len(days)) - 1] if self.nth > 0 else days[max(self.nth, -len(days))]

    def _local(self, k: int) -> int:
        return self._day(k) * US_PER_DAY + self.time

    def _index(self, local: int) -> int:
        today = date.fromordinal(EPOCH_ORDINAL + local // US_PER_DAY)
        k = ((today.year - 1970) * 12 + today.month - 1) // self.every
        # This month's business day may still lie ahead of `local`.
        return k - 1 if self._local(k) > local else k


def first_month_without_business_day(holidays: ExcludedDays, every: int) -> tuple[int, int] | None:
    """The first month the cadence meets (every ``every`` months from January 1970) that has no business day.

    Only a month that holds an excluded day can lack one; each is looked at once.
    """
    seen: set[int] = set()
    for first, last in zip(holidays.firsts, holidays.lasts):
        start, end = date.fromordinal(first + EPOCH_ORDINAL), date.fromordinal(last + EPOCH_ORDINAL)
        for k in range((start.year - 1970) * 12 + start.month - 1, (end.year - 1970) * 12 + end.month):
            if k in seen or k % every:
                continue
            seen.add(k)
            year, month = _month_start(k)
            # Stops at the month's first business day: a month with a holiday still has about twenty.
            if next(_business_days(year, month, holidays), None) is None:
                return year, month
    return None
