"""Cron expressions with the wall-clock semantics of a Kubernetes CronJob.

The grammar is a CronJob's own, ported in :mod:`.cron_fields`. An occurrence of a
five-field expression is every instant whose *local* wall-clock reading in the
schedule's timezone matches the fields, at second 0. That is the rule a CronJob's
controller applies (it steps through real hours and minutes and tests the local
reading), and it has two consequences in a zone that observes daylight saving time:
a time inside the hour that a fall-back repeats fires twice (``30 1 * * *`` in
America/New_York fires at 01:30 EDT and again at 01:30 EST on 2026-11-01), and a
time inside the hour that a spring-forward skips never fires (``30 2 * * *`` does
not fire on 2026-03-08). Hourly-or-finer schedules therefore see the genuinely extra
hour of a fall-back day (``30 * * * *`` fires 25 times) and lose the missing one on a
spring-forward day (23 times). The opt-in ``dst="once"`` policy instead fires every
wall-clock time exactly once (see :mod:`.wallclock`). A ``TZ=`` or ``CRON_TZ=``
prefix is refused, as a CronJob refuses it: the timezone is a separate argument.

``@every <duration>`` is an :class:`~.grid.EpochGrid`: whole multiples of the
duration since 1970-01-01 00:00 UTC (a CronJob counts from its last schedule time
instead; an epoch anchor makes every scheduler instance, restart and machine compute
the same instants, whenever the DAG was parsed). The duration is written as every
tessera duration is (``5m``, ``1h30m``, ``2d``), in whole seconds from 1 s to 366 d:
a CronJob would round a sub-second one up to a second, which a scheduler cannot honour.
"""

from __future__ import annotations

import datetime
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from .cadence import Cadence
from .cron_fields import DESCRIPTORS, FIX, CronFields, CronInvalid, parse_fields
from .durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND, parse_duration
from .epoch import EPOCH_ORDINAL
from .grid import EpochGrid
from .wallclock import DstClock, DstPolicy

__all__ = ["DESCRIPTORS", "CronCadence", "CronInvalid", "parse_cron"]

_EVERY = "@every "
_MAX_EVERY = 366 * US_PER_DAY
_SEARCH_YEARS = 400  # the Gregorian calendar repeats every 400 years: a date that matches, matches by then
_CACHED_DAYS = 64


def _invalid(expression: str, problem: str) -> CronInvalid:
    return CronInvalid(f"expression: {expression!r} {problem}; {FIX}")


def _every(expression: str) -> EpochGrid:
    text = expression[len(_EVERY) :]
    if text != text.strip() or not text:
        raise _invalid(expression, "needs exactly one space between @every and its duration (e.g. '@every 5m')")
    try:
        interval = parse_duration("expression", text)
    except (ValueError, OverflowError) as error:  # a huge "1111...1.5s" overflows the float parse
        # The duration rules say precisely what is wrong; keep their verdict, in cron's words.
        reason = str(error)
        if "uppercase unit" in reason:
            problem = "has an uppercase unit; units are lowercase (ms, s, m, h, d) and M is not months"
        elif "longer than the maximum" in reason:
            problem = "is longer than 366 days; use a yearly expression such as '@yearly' instead"
        else:
            problem = "needs a duration after @every from 1s to 366d, such as '@every 5m' or '@every 1h30m'"
        raise _invalid(expression, problem) from None
    if interval % US_PER_SECOND:
        raise _invalid(expression, "is not a whole number of seconds; a scheduler cannot honour less: use 1s or more")
    if interval > _MAX_EVERY:
        raise _invalid(expression, "is longer than 366 days; use a yearly expression such as '@yearly' instead")
    return EpochGrid(interval)


def parse_cron(expression: object, zone: ZoneInfo, policy: DstPolicy) -> Cadence:
    """The cadence of a cron expression or descriptor, interpreted in ``zone``.

    :raises CronInvalid: naming the expression and what is wrong with it.
    :raises TypeError: when ``expression`` is not a string.
    """
    if not isinstance(expression, str):
        raise TypeError(f"expression: {expression!r} is a {type(expression).__name__}; {FIX}")
    if not expression.strip():
        raise _invalid(expression, "is empty")
    if "=" in expression:
        raise _invalid(expression, "sets a timezone inside the expression; pass timezone='Europe/London' instead")
    if expression.startswith(_EVERY):
        return _every(expression)
    text = DESCRIPTORS.get(expression)
    if text is None and expression.lstrip().startswith("@"):
        spelled = expression.strip().lower()
        if spelled in DESCRIPTORS or spelled.startswith("@every"):
            raise _invalid(expression, "must be spelled exactly: lowercase, one space after @every, nothing around it")
        raise _invalid(expression, "is not a known descriptor")
    return CronCadence(parse_fields(expression, text or expression), DstClock(zone, policy))


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
            days = []
            for month in range(1, 13):
                start = datetime.date(year, month, 1).toordinal() - EPOCH_ORDINAL - 1
                days.extend(start + day for day in self.fields.days_matching(year, month))
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
