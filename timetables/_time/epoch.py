"""The one origin every count in the core starts from, and the calendar facts counted from it.

Instants are integer microseconds since 1970-01-01 00:00 UTC; local wall-clock readings are
integer microseconds since 1970-01-01 00:00 on the zone's clock; local calendar days are
whole days since 1970-01-01. Keeping one origin is what lets dates, times of day and
instants all be plain integer division.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

UTC_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
LOCAL_EPOCH = datetime(1970, 1, 1)
"""Naive: the zero of local wall-clock readings."""
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
"""``date.toordinal()`` of local day 0."""

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int | None, month: int) -> int:
    """How many days ``month`` has in ``year``; with ``year=None`` the most it ever has (29 for February)."""
    if month == 2 and (year is None or is_leap(year)):
        return 29
    return _DAYS_IN_MONTH[month - 1]
