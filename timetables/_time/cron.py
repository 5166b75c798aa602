"""Cron expressions with the wall-clock semantics of a Kubernetes CronJob.

An occurrence of a five-field expression is every instant whose *local*
wall-clock reading in the schedule's timezone matches the fields, at second 0.
That is the rule a CronJob's controller applies (it steps through real hours
and minutes and tests the local reading), and it has two consequences in a
zone that observes daylight saving time: a time inside the hour that a
fall-back repeats fires twice (``30 1 * * *`` in America/New_York fires at
01:30 EDT and again at 01:30 EST on 2026-11-01), and a time inside the hour
that a spring-forward skips never fires (``30 2 * * *`` does not fire on
2026-03-08). Hourly-or-finer schedules therefore see the genuinely extra hour
of a fall-back day (``30 * * * *`` fires 25 times) and lose the missing one on
a spring-forward day (23 times). The opt-in ``dst="once"`` policy instead fires
every wall-clock time exactly once (see :mod:`.wallclock`).

croniter parses and validates the fields (names, ranges, steps, lists, 7 as
Sunday). Matching is then done here, per local calendar day, because the day
rule must be the CronJob's own: day-of-month and day-of-week are OR-ed when
both are restricted and AND-ed when either is written as ``*`` or ``?``
(a ``*/2`` counts as restricted). Extensions a CronJob refuses (``L``, ``W``,
``#``, hashed ``H``, seconds or year fields, ``CRON_TZ=``) are refused.

``@every <duration>`` is an :class:`~.grid.EpochGrid`: whole multiples of the
duration since 1970-01-01 00:00 UTC (a CronJob counts from its last schedule
time instead; an epoch anchor makes every scheduler instance, restart and
machine compute the same instants, whenever the DAG was parsed).
"""

from __future__ import annotations

import calendar
import datetime
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from croniter import CroniterError, croniter

from .cadence import Cadence
from .durations import US_PER_DAY, US_PER_MINUTE, parse_duration
from .epoch import EPOCH_ORDINAL, days_in_month
from .grid import EpochGrid
from .wallclock import DstClock, DstPolicy

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_FIX = (
    "write five fields 'minute hour day-of-month month day-of-week' such as '0 6 * * *', or one of "
    "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or '@every 5m'"
)
_FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")
_NAMES = (
    frozenset(),
    frozenset(),
    frozenset(),
    frozenset(m.lower() for m in calendar.month_abbr if m),
    frozenset(("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)
_SYNTAX = re.compile(r"[0-9a-z*?,/\-]+")
_EQUAL_RANGE = re.compile(r"^([0-9a-z]+)-\1(?:/\d+)?$")
_FULL = (range(60), range(24), range(1, 32), range(1, 13), range(7))

_SEARCH_YEARS = 400  # the Gregorian calendar repeats every 400 years: a date that matches, matches by then
_CACHED_DAYS = 64


class CronInvalid(ValueError):
    """A cron expression a CronJob would refuse; the message names the expression and the fix."""


@dataclass(frozen=True, slots=True)
class CronFields:
    """A parsed five-field expression: what it matches on a local calendar day."""

    minutes_of_day: tuple[int, ...]
    months: frozenset[int]
    days: frozenset[int]
    weekdays: frozenset[int]
    """0 is Sunday."""
    days_or: bool
    """Both day fields are restricted, so a date matching either one matches."""

    def matches(self, date: datetime.date) -> bool:
        if date.month not in self.months:
            return False
        day, weekday = date.day in self.days, (date.weekday() + 1) % 7 in self.weekdays
        return (day or weekday) if self.days_or else (day and weekday)


def _invalid(expression: str, problem: str) -> CronInvalid:
    return CronInvalid(f"expression: {expression!r} {problem}; {_FIX}")


def _is_star(field: str) -> bool:
    # A CronJob treats a day field as unrestricted when one of its list items is * or ?
    # with no step above 1; only then is the other day field AND-ed rather than OR-ed.
    for item in field.split(","):
        span, _, step = item.partition("/")
        if span in ("*", "?") and step in ("", "1"):
            return True
    return False


def parse_fields(expression: str, text: str) -> CronFields:
    """Parse five whitespace-separated fields (``text``); errors name ``expression``."""
    fields = text.lower().split()
    if len(fields) != 5:
        raise _invalid(expression, f"has {len(fields)} fields, not 5 (seconds and year fields are not supported)")
    for index, field in enumerate(fields):
        names = set(re.findall(r"[a-z]+", field)) - _NAMES[index]
        if not _SYNTAX.fullmatch(field) or names:
            raise _invalid(
                expression,
                f"has an unsupported {_FIELD_NAMES[index]} field {field!r} (use numbers, names, *, "
                f"ranges a-b, steps /n and lists a,b; L, W, # and H are not supported)",
            )
    # croniter reads an equal range such as "1-1" as the whole cycle; a CronJob reads one value.
    normalized = [",".join(_EQUAL_RANGE.sub(r"\1", item) for item in field.split(",")) for field in fields]
    try:
        expanded, _ = croniter.expand(" ".join(normalized))
    except CroniterError as error:
        raise _invalid(expression, f"is not valid ({error})") from None
    sets = [frozenset(_FULL[i]) if values == ["*"] else frozenset(values) for i, values in enumerate(expanded)]
    minutes, hours, days, months, weekdays = sets
    days_or = not (_is_star(fields[2]) or _is_star(fields[4]))
    if not days_or and not any(day <= days_in_month(None, month) for month in months for day in days):
        raise _invalid(expression, "never fires: no month in its month field has such a day of the month")
    return CronFields(
        tuple(sorted(hour * 60 + minute for hour in hours for minute in minutes)),
        months,
        days,
        frozenset(day % 7 for day in weekdays),
        days_or,
    )


def parse_cron(expression: object, zone: ZoneInfo, policy: DstPolicy) -> Cadence:
    """The cadence of a cron expression or descriptor, interpreted in ``zone``.

    :raises CronInvalid: naming the expression and what is wrong with it.
    :raises TypeError: when ``expression`` is not a string.
    """
    if not isinstance(expression, str):
        raise TypeError(f"expression: {expression!r} is a {type(expression).__name__}; {_FIX}")
    text = " ".join(expression.split())
    if not text:
        raise _invalid(expression, "is empty")
    if "=" in text:
        raise _invalid(expression, "sets a timezone inside the expression; pass timezone='Europe/London' instead")
    lowered = text.lower()
    if lowered.startswith("@every"):
        try:
            return EpochGrid(parse_duration("expression", lowered[len("@every") :].strip()))
        except ValueError:
            problem = "has no positive duration after @every (e.g. '@every 5m' or '@every 1h30m')"
            raise _invalid(expression, problem) from None
    if lowered.startswith("@"):
        if lowered not in DESCRIPTORS:
            raise _invalid(expression, "is not a known descriptor")
        text = DESCRIPTORS[lowered]
    return CronCadence(parse_fields(expression, text), DstClock(zone, policy))


class CronCadence:
    """Occurrences of a five-field expression on one timezone's wall clock (see the module docstring).

    Each local day's instants are computed once and kept in a small cache, so stepping
    through a schedule costs a few dictionary look-ups per occurrence. Since a UTC offset
    is always under a day, the instants of local day ``d`` lie strictly between UTC days
    ``d - 1`` and ``d + 2``; the searches below rely on that bound to stop.
    """

    __slots__ = ("fields", "clock", "_instants_by_day", "_days_by_year")

    def __init__(self, fields: CronFields, clock: DstClock) -> None:
        self.fields = fields
        self.clock = clock
        self._instants_by_day: dict[int, list[int]] = {}
        self._days_by_year: dict[int, list[int]] = {}

    @property
    def shortest_gap(self) -> int:
        minutes = self.fields.minutes_of_day
        if len(minutes) < 2:
            return US_PER_DAY  # one time a day (or fewer): at least a day apart
        # Within a day, and from the day's last time to the next matching day's first.
        gaps = [later - earlier for earlier, later in zip(minutes, minutes[1:])]
        gaps.append(minutes[0] + 24 * 60 - minutes[-1])
        return min(gaps) * US_PER_MINUTE

    def _instants(self, day: int) -> list[int]:
        instants = self._instants_by_day.get(day)
        if instants is None:
            if len(self._instants_by_day) >= _CACHED_DAYS:
                self._instants_by_day.clear()
            instants = self._instants_by_day[day] = self.clock.instants(day, self.fields.minutes_of_day)
        return instants

    def _days_in(self, year: int) -> list[int]:
        """The local days (since 1970-01-01) of ``year`` whose date matches, ascending."""
        days = self._days_by_year.get(year)
        if days is None:
            if not 1 <= year <= 9999:
                raise ValueError(f"cron: year {year} is outside the supported range 1-9999")
            if len(self._days_by_year) >= 8:
                self._days_by_year.clear()
            first = datetime.date(year, 1, 1).toordinal()
            last = datetime.date(year, 12, 31).toordinal()
            matches = self.fields.matches
            days = [o - EPOCH_ORDINAL for o in range(first, last + 1) if matches(datetime.date.fromordinal(o))]
            self._days_by_year[year] = days
        return days

    def _days_up(self, day: int) -> Iterator[int]:
        year = datetime.date.fromordinal(day + EPOCH_ORDINAL).year
        for current in range(year, year + _SEARCH_YEARS):
            days = self._days_in(current)
            for index in range(bisect_left(days, day), len(days)):
                yield days[index]
        raise ValueError(f"cron: no occurrence within {_SEARCH_YEARS} years after day {day}")

    def _days_down(self, day: int) -> Iterator[int]:
        year = datetime.date.fromordinal(day + EPOCH_ORDINAL).year
        for current in range(year, year - _SEARCH_YEARS, -1):
            days = self._days_in(current)
            for index in range(bisect_right(days, day) - 1, -1, -1):
                yield days[index]
        raise ValueError(f"cron: no occurrence within {_SEARCH_YEARS} years before day {day}")

    def following(self, t: int) -> int:
        best: int | None = None
        for day in self._days_up(t // US_PER_DAY - 1):
            if best is not None and (day - 1) * US_PER_DAY >= best:
                break
            instants = self._instants(day)
            index = bisect_right(instants, t)
            if index < len(instants) and (best is None or instants[index] < best):
                best = instants[index]
        return best  # type: ignore[return-value]

    def at_or_before(self, t: int) -> int:
        best: int | None = None
        for day in self._days_down(t // US_PER_DAY + 1):
            if best is not None and (day + 2) * US_PER_DAY <= best:
                break
            instants = self._instants(day)
            index = bisect_right(instants, t) - 1
            if index >= 0 and (best is None or instants[index] > best):
                best = instants[index]
        return best  # type: ignore[return-value]

    def at_or_after(self, t: int) -> int:
        return self.following(t - 1)

    def preceding(self, occurrence: int) -> int:
        return self.at_or_before(occurrence - 1)

    def back(self, occurrence: int, steps: int) -> int:
        for _ in range(steps):
            occurrence = self.preceding(occurrence)
        return occurrence
