"""What a user writes for a business-day cadence, validated and described (the twin of :mod:`.calendar_spec`).

========================  ======================================  ===========================
cadence                   written as                              occurrences
========================  ======================================  ===========================
every business day        ``Every.business_day(at, timezone=)``   Monday to Friday at ``at``,
                                                                  holidays excluded
Nth business day          ``Every.month(business_day=N, at=,      the Nth business day of every
of a month                timezone=)``, N = 1 to 23               ``every`` months (1 to 12)
Nth-last business day     ``business_day=-N``, N = 1 to 23        ``-1`` is the last one
========================  ======================================  ===========================

Both are always anchored: ``at`` and ``timezone`` are required, since "a business day"
is a local date. The holidays (``calendar=``) are resolved by the adapter into an
:class:`~.excluded_days.ExcludedDays` and handed to :meth:`BusinessDaySpec.cadence`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .business_days import MAX_NTH, BusinessMonths, Weekdays
from .cadence import Cadence
from .calendar_spec import CalendarSpec
from .durations import US_PER_DAY, US_PER_MINUTE, shown
from .excluded_days import ExcludedDays
from .wallclock import WallClock, load_zone

BUSINESS_DAY = "business_day"
_EXAMPLE = {
    BUSINESS_DAY: "Every.business_day(at='09:00', timezone='America/New_York')",
    "month": "Every.month(business_day=-1, at='18:00', timezone='America/New_York')",
}


def _parse_nth(nth: object) -> int:
    if isinstance(nth, bool) or not isinstance(nth, int):
        raise TypeError(
            f"business_day: {shown(nth)} is a {type(nth).__name__}; give a whole number: 1 to {MAX_NTH} counts "
            f"business days from the month's start, -1 to -{MAX_NTH} from its end (-1 = the last business day)"
        )
    if not (1 <= nth <= MAX_NTH or -MAX_NTH <= nth <= -1):
        raise ValueError(
            f"business_day: {shown(nth)} is not a business day of a month; use 1 to {MAX_NTH} from the month's "
            f"start or -1 to -{MAX_NTH} from its end (a month has at most {MAX_NTH} weekdays; -1 = the last one)"
        )
    return nth


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True, slots=True)
class BusinessDaySpec:
    """A validated business-day cadence; build one with :meth:`parse`."""

    unit: str
    """``"business_day"`` (every business day) or ``"month"`` (the Nth business day of a month)."""
    every: int
    nth: int | None
    """The business day of the month (1 to 23, or -1 to -23 from the end); ``None`` for every business day."""
    at: int
    """Minutes after local midnight."""
    timezone: str

    on = None  # a business-day cadence has no weekday or day of the month

    @classmethod
    def parse(cls, unit: str, *, every: object, nth: object, at: object, timezone: object) -> BusinessDaySpec:
        """Validate what the user wrote; every error names the field, the value and what is allowed."""
        if unit == "month":
            nth = _parse_nth(nth)
        elif every != 1 or isinstance(every, bool):
            raise ValueError(f"every: {shown(every)} is not allowed; a business-day cadence runs every business day")
        missing = [name for name, value in (("at", at), ("timezone", timezone)) if value is None]
        if missing:
            also = " (so is timezone)" if len(missing) == 2 else ""
            raise ValueError(
                f"{missing[0]}: missing{also}; a business day is a local date, so a business-day cadence runs at "
                f"a wall-clock time in a zone: give {_EXAMPLE[unit]}"
            )
        # The calendar rules check every, at and timezone: a business day recurs like a day, a month like a month.
        shared = CalendarSpec.parse(
            "day" if unit == BUSINESS_DAY else "month",
            every=every,
            on=1 if unit == "month" else None,
            at=at,
            timezone=timezone,
        )
        assert shared.at is not None and shared.timezone is not None
        return cls(unit, shared.every, nth if unit == "month" else None, shared.at, shared.timezone)  # type: ignore[arg-type]

    @property
    def period_us(self) -> int:
        """One nominal period: a day, or 30 days per month."""
        return US_PER_DAY if self.unit == BUSINESS_DAY else 30 * self.every * US_PER_DAY

    @property
    def at_text(self) -> str:
        return f"{self.at // 60:02d}:{self.at % 60:02d}"

    def cadence(self, holidays: ExcludedDays) -> Cadence:
        """The cadence: every weekday (the caller excludes ``holidays`` from it), or the Nth business day."""
        clock = WallClock(load_zone("timezone", self.timezone))
        time = self.at * US_PER_MINUTE
        if self.nth is None:
            return Weekdays(clock, time)
        return BusinessMonths(clock, self.every, self.nth, time, holidays)

    def describe(self) -> str:
        """The cadence as a sentence: ``"every business day at 09:00 America/New_York"``."""
        where = f"at {self.at_text} {self.timezone}"
        if self.nth is None:
            return f"every business day {where}"
        which = "last" if self.nth == -1 else (_ordinal(self.nth) if self.nth > 0 else f"{_ordinal(-self.nth)}-last")
        head = "monthly" if self.every == 1 else f"every {self.every} months"
        return f"{head} on the {which} business day {where}"
