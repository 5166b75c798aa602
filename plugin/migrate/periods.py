"""Where a schedule repeats itself, so a whole year is compared by stepping a bounded part of it.

The argument (why counting copies is the same as stepping them):

1. A schedule has a *period* ``P`` when its fire times, read on its zone's wall clock, are unchanged
   by a shift of ``P``: a cron whose day-of-month and month fields are ``*`` repeats every day, or
   every week when it names plain weekdays (no ``L``, ``#`` or ``W``); a union of such crons, every
   week if any member names weekdays; a ``timedelta`` step ``d`` repeats every ``lcm(d, 1 day)`` of
   absolute time (which the UTC cron proposed for its grid and the epoch-aligned ``Every`` share).
   Anything else (a day of the month, a month, an ``EventsTimetable``, a calendar step) has no
   period here and is stepped run by run over the whole range.
2. Between two UTC-offset changes of the zone the wall clock is UTC plus a constant, so there the
   fire times are unchanged by a shift of ``P`` in UTC too.
3. A run's facts are functions of the fire times near it: its occurrence, its start (the
   occurrence plus a constant phase, at most :data:`~.proposals.MAX_SPREAD`) and its window (back
   to the previous fire, at most ``P`` earlier, or a fixed interval back). Airflow's timetables
   and tessera's compute them from the zone's rules around the run, not from the date, and a DST
   rule looks at most :data:`SLACK` around a change. So every run whose surroundings
   ``[occurrence - P - interval - SLACK, occurrence + SLACK]`` hold no boundary (an offset change,
   the DAG's start or end date, the range's ends) is, on either side, the run one period earlier
   shifted by ``P``; so is the difference between the sides.

Hence each stretch between boundaries, less a :func:`margin` at each end (stepped run by run),
holds ``n`` whole periods: the first two are stepped, the second is checked to be the first
shifted by ``P`` on both sides (if not, the assumption failed and the rest is stepped run by
run), and the other ``n - 2`` are counted as copies of the second. The test
``tests/plugin/migrate/test_compare.py`` checks the result against stepping the whole year run
by run, on random dense crons (every minute, every five) in DST zones and on intervals.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass

from .current import Current

DAY = datetime.timedelta(days=1)
WEEK = datetime.timedelta(days=7)
SLACK = datetime.timedelta(days=1)
"""How far from a clock change a DST rule (Airflow's or tessera's) moves a run: within its day."""
MAX_PERIOD = datetime.timedelta(days=28)
"""The longest period used; a longer one (a 61-minute step repeats every 30.5 days) is stepped run by run."""
_DAILY_ALIASES = {"@hourly", "@daily", "@midnight"}
_WEEKLY_ALIASES = {"@weekly"}
_PLAIN_WEEKDAYS = re.compile(r"^[0-7a-z*?,/-]+$")
"""A day-of-week field that names weekdays only (no ``L``, ``#`` or ``W``, whose days move within a month)."""


def _cron_period(expression: str) -> datetime.timedelta | None:
    words = expression.strip().lower()
    if words in _DAILY_ALIASES:
        return DAY
    if words in _WEEKLY_ALIASES:
        return WEEK
    fields = words.split()
    if len(fields) != 5:
        return None  # an alias of a month or a year, or a seconds field: no period here
    _, _, day_of_month, month, day_of_week = fields
    if day_of_month not in ("*", "?") or month != "*":
        return None
    if day_of_week in ("*", "?"):
        return DAY
    return WEEK if _PLAIN_WEEKDAYS.match(day_of_week) and "l" not in day_of_week else None


def period_of(current: Current) -> datetime.timedelta | None:
    """The period both sides of ``current``'s comparison repeat with (see the module docstring), or None."""
    if current.kind in ("cron", "crons"):
        periods = [_cron_period(expression) for expression in current.expressions]
        if not periods or None in periods:
            return None
        return max(p for p in periods if p is not None)  # a day divides a week
    if current.kind == "delta" and current.delta is not None and current.delta > datetime.timedelta(0):
        step = current.delta // datetime.timedelta(microseconds=1)
        day = DAY // datetime.timedelta(microseconds=1)
        period = datetime.timedelta(microseconds=step * day // math.gcd(step, day))
        return period if period <= MAX_PERIOD else None
    return None


def margin(period: datetime.timedelta, interval: datetime.timedelta | None) -> datetime.timedelta:
    """How far around a boundary runs are stepped run by run: a run's surroundings (module docstring, 3.)."""
    return period + (interval or datetime.timedelta(0)) + SLACK


@dataclass(frozen=True, slots=True)
class Span:
    """Runs with occurrence in ``(low, high]`` are stepped; the ``copies`` periods after ``high`` count as them.

    A span with copies is one period long and follows the span of the period before it, which
    its runs must repeat shifted by the period for the copies to count.
    """

    low: datetime.datetime
    high: datetime.datetime
    copies: int = 0


def spans(
    since: datetime.datetime,
    until: datetime.datetime,
    *,
    period: datetime.timedelta | None,
    boundaries: list[datetime.datetime],
    around: datetime.timedelta,
) -> list[Span]:
    """``(since, until]`` cut into spans, in order: stepped near each boundary, counted in whole periods between.

    Without a period it is one span; with one, at most three per boundary (offset change, start or end date)
    plus four.
    """
    if period is None:
        return [Span(since, until)]
    stepped: list[tuple[datetime.datetime, datetime.datetime]] = []
    for at in sorted({since, until, *(b for b in boundaries if since < b < until)}):
        low, high = max(since, at - around), min(until, at + around)
        if stepped and low <= stepped[-1][1]:
            stepped[-1] = (stepped[-1][0], max(stepped[-1][1], high))
        else:
            stepped.append((low, high))
    found: list[Span] = []
    start = since  # where the next stepped span starts (a stretch's remainder joins its next margin)
    for (_, high), following in zip(stepped, [*stepped[1:], None]):
        if following is None:
            found.append(Span(start, high))
            break
        whole = (following[0] - high) // period
        if whole < 3:
            continue  # too short to repeat: stepped with the margins either side
        found.append(Span(start, high))
        found.append(Span(high, high + period))
        found.append(Span(high + period, high + 2 * period, copies=whole - 2))
        start = high + whole * period
    return found
