"""The exclusion horizon: how long exclusions may hide every occurrence of a schedule, checked once when parsed.

Exclusions only remove occurrences, so a schedule with them always has a next run; but a
set of exclusions can hide every occurrence for years (a yearly schedule on 1 January with
New Year's Day excluded never runs while the holiday calendar lasts). Such a schedule is
refused when the DAG is parsed, by one rule:

    exclusions may hide consecutive occurrences for at most :data:`MAX_HIDDEN_STRETCH`
    (366 days): from the first occurrence hidden to the last one hidden in a row.

A single excluded date of a yearly schedule hides one occurrence (a stretch of zero days)
and passes: the schedule then runs two years apart, as written. The rule is also what
keeps a scheduler step short: one step of :class:`~.excluding.ExcludingCadence` jumps one
run of excluded days per hidden occurrence, and within 366 days there are at most 367 such
runs, so no step of an accepted schedule walks far, whatever was declared.

The check is cheap where it can be. When a cadence surely fires on some day between two
runs of excluded days, no stretch spans both: a cadence that fires at least once every
``G`` local days (daily, weekly, monthly, weekdays, a plain interval) does so when the runs
are more than ``G + 1`` days apart, and a cron when a day between them matches its date
fields (read from the fields, no instants computed). So only *clusters* of runs with no
sure occurrence between them can hide a stretch together, and a cluster spanning at most
366 days cannot hide a longer one. The remaining clusters are walked run by run, with one
or two cadence steps per run.
"""

from __future__ import annotations

from .business_days import Weekdays
from .cadence import Cadence
from .calendar import LocalGrid, LocalMonths
from .cron import CronCadence
from .durations import US_PER_DAY
from .excluded_days import ExcludedDays, day_date
from .excluding import day_start
from .grid import EpochGrid
from .union import UnionCadence
from .wallclock import WallClock

MAX_HIDDEN_STRETCH = 366 * US_PER_DAY
"""The longest stretch, first to last hidden occurrence, that exclusions may hide in a row."""
_MAX_SPAN_DAYS = MAX_HIDDEN_STRETCH // US_PER_DAY
_MAX_SCAN_DAYS = 800  # a cron matching no day in this many has gaps the walk measures instead


def _days_between_occurrences(cadence: Cadence) -> int | None:
    """A ``G`` such that every ``G`` consecutive local days hold an occurrence (skipped dates aside), if known."""
    if isinstance(cadence, Weekdays):
        return 3  # Friday to Monday
    if isinstance(cadence, LocalGrid):
        return -(-cadence.step // US_PER_DAY)
    if isinstance(cadence, LocalMonths):
        return 31 * cadence.every
    if isinstance(cadence, EpochGrid):
        return -(-cadence.interval // US_PER_DAY) + 1  # absolute time: local days shift by the offset
    return None


def _fires_between(cadence: Cadence, clock: WallClock, first: int, last: int) -> bool:
    """True when ``cadence`` surely fires on a local day from ``first`` to ``last``; False when it may not."""
    if last < first:
        return False
    if isinstance(cadence, UnionCadence):
        return any(_fires_between(member, clock, first, last) for member in cadence.members)
    if isinstance(cadence, CronCadence):
        # The first day whose date matches and whose clock runs a plain 24 hours (on a DST change day
        # every matching time may fall in the gap): a cheap test, with no instants computed.
        for day in range(first, min(last, first + _MAX_SCAN_DAYS) + 1):
            if cadence.fields.matches(day_date(day)):
                start, end = clock.first_instant(day * US_PER_DAY), clock.first_instant((day + 1) * US_PER_DAY)
                if start is not None and end == start + US_PER_DAY:
                    return True
        return False
    spacing = _days_between_occurrences(cadence)
    # More than G + 1 whole days (one more for a date a zone skips): some day holds an occurrence.
    return spacing is not None and last - first + 1 > spacing + 1


def _may_hide(cadence: Cadence, first: int, last: int) -> bool:
    """False when ``cadence`` surely has no occurrence on local days ``first`` to ``last`` (a cron's dates)."""
    if isinstance(cadence, UnionCadence):
        return any(_may_hide(member, first, last) for member in cadence.members)
    if isinstance(cadence, CronCadence):
        if last - first > _MAX_SCAN_DAYS:
            return True  # a long run: assume it hides something rather than read every date of it
        return any(cadence.fields.matches(day_date(day)) for day in range(first, last + 1))
    return True


def _clusters(days: ExcludedDays, cadence: Cadence, clock: WallClock) -> list[list[int]]:
    """Runs of excluded days that could hide one long stretch together, as lists of run indexes.

    A run with no occurrence to hide neither extends a stretch nor breaks one, so it is left out.
    """
    runs = [index for index in range(len(days)) if _may_hide(cadence, days.firsts[index], days.lasts[index])]
    found: list[list[int]] = []
    cluster: list[int] = []
    for index in runs:
        if cluster and _fires_between(cadence, clock, days.lasts[cluster[-1]] + 1, days.firsts[index] - 1):
            if days.lasts[cluster[-1]] - days.firsts[cluster[0]] + 1 > _MAX_SPAN_DAYS:
                found.append(cluster)
            cluster = []
        cluster.append(index)
    if cluster and days.lasts[cluster[-1]] - days.firsts[cluster[0]] + 1 > _MAX_SPAN_DAYS:
        found.append(cluster)
    return found


def _walk(inner: Cadence, days: ExcludedDays, clock: WallClock, runs: list[int]) -> tuple[int, int] | None:
    first_hidden: int | None = None  # of the stretch being measured
    last_end = 0  # the end of the last run that hid an occurrence of that stretch
    previous_end: int | None = None

    def too_long() -> tuple[int, int] | None:
        if first_hidden is None or last_end - first_hidden <= MAX_HIDDEN_STRETCH:
            return None  # every hidden occurrence lies before last_end
        last_hidden = inner.at_or_before(last_end - 1)
        return (first_hidden, last_hidden) if last_hidden - first_hidden > MAX_HIDDEN_STRETCH else None

    for index in runs:
        start = day_start(clock, days.firsts[index])
        end = day_start(clock, days.lasts[index] + 1)
        following = inner.at_or_after(start if previous_end is None else previous_end)
        if following < start:  # an occurrence survives between the previous run and this one
            if found := too_long():
                return found
            first_hidden, following = None, inner.at_or_after(start)
        if following < end:
            first_hidden = following if first_hidden is None else first_hidden
            last_end = end
        previous_end = end
    return too_long()


def longest_hidden_stretch(inner: Cadence, days: ExcludedDays, clock: WallClock) -> tuple[int, int] | None:
    """The first stretch of consecutive occurrences of ``inner`` that ``days`` hide for too long.

    :returns: the first and last occurrence hidden in a row, when they are more than
        :data:`MAX_HIDDEN_STRETCH` apart; ``None`` when every stretch is within it.
    """
    for cluster in _clusters(days, inner, clock):
        if found := _walk(inner, days, clock, cluster):
            return found
    return None
