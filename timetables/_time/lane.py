"""A lane: a schedule's runs over a range as a few periodic segments, not one entry per run.

A page that draws 1,000 schedules over 70 days cannot be sent every run (a 5-minute
cadence alone has 20,160). Most cadences repeat: an epoch grid or a from-last-run interval
on absolute time, a calendar cadence or a cron without date fields on a zone's wall clock.
While the zone's UTC offset stays the same, wall-clock readings and instants differ by a
constant, so the occurrences of such a cadence repeat with its period in UTC too. The
range is cut where the offset changes; each piece is one :class:`Segment` (a first
occurrence, a period, the occurrences' offsets within one period, a count), and the
occurrences just after a change (a gap's end, the second instance of a repeated hour, a
collapsed gap under cron's ``once``) are stepped one by one with the cadence's own
``following``, so they are exactly what the scheduler creates. A cadence that does not
repeat (month ends, cron with date fields) is stepped run by run, at most
:data:`MAX_STEPS` of them; consecutive equal gaps still share one segment.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from .cadence import Cadence
from .calendar import LocalGrid
from .cron import CronCadence
from .durations import US_PER_DAY, US_PER_MINUTE
from .from_last_run import FromLastRun, origin_for
from .grid import EpochGrid
from .plan import Plan, PlannedRun
from .wallclock import _gap_end, _offset_at

MAX_STEPS = 2000
"""Occurrences a lane steps one by one at most (a lane that needs more stops at ``through``)."""
_WEEK = 7 * US_PER_DAY
_SUNDAY = 3 * US_PER_DAY
"""Local 1970-01-04 00:00, the Sunday a cron week counts from (1970-01-01 was a Thursday)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """Occurrences ``first + (j // len(offsets)) * period + offsets[j % len(offsets)]`` for ``0 <= j < count``.

    ``offsets`` ascend from 0 and are each below ``period``; microseconds since the Unix epoch.
    """

    first: int
    period: int
    offsets: tuple[int, ...]
    count: int

    def at(self, j: int) -> int:
        cycles, index = divmod(j, len(self.offsets))
        return self.first + cycles * self.period + self.offsets[index]

    @property
    def last(self) -> int:
        return self.at(self.count - 1)

    def before(self, t: int) -> int:
        """How many of the segment's occurrences are before ``t``."""
        if t <= self.first:
            return 0
        cycles, rest = divmod(t - self.first, self.period)
        return min(self.count, cycles * len(self.offsets) + bisect_left(self.offsets, rest))


@dataclass(frozen=True, slots=True)
class LaneShape:
    """Every run whose start is after ``after`` and at or before ``until``, as segments of occurrences.

    A run's window and start follow from its occurrence as in :meth:`Plan.run`: the window ends
    ``delay`` before it and starts ``lookback`` earlier, or at the previous occurrence (``before``
    for the first) minus ``delay``; the run may start ``phase`` after it. ``through`` is None when
    the segments reach ``until``, else the last occurrence they describe (the steps ran out).
    """

    after: int
    until: int
    segments: tuple[Segment, ...]
    before: int | None
    phase: int
    delay: int
    lookback: int | None
    through: int | None

    def first_run(self, after: int | None = None) -> PlannedRun | None:
        """The first run (that starts after ``after``, if given), with its window as :meth:`Plan.run` gives it.

        None when the lane has no such run.
        """
        previous = self.before
        for segment in self.segments:
            j = 0 if after is None else segment.before(after - self.phase + 1)
            if j < segment.count:
                occurrence = segment.at(j)
                previous = segment.at(j - 1) if j else previous
                if previous is None:
                    return None
                start = occurrence - self.lookback if self.lookback is not None else previous
                end = occurrence - self.delay
                return PlannedRun(occurrence, occurrence + self.phase, start - self.delay, end, occurrence - previous)
            previous = segment.last
        return None


@dataclass(frozen=True, slots=True)
class Pattern:
    """Times ``base + k * period + p`` for every integer ``k`` and each ``p`` of ``points``.

    ``zone`` None: instants; else readings of that zone's wall clock.
    """

    period: int
    points: tuple[int, ...]
    base: int
    zone: ZoneInfo | None

    def count_to(self, t: int) -> int:
        """How many times of the pattern are at or before ``t`` (from an arbitrary fixed origin)."""
        cycles, rest = divmod(t - self.base, self.period)
        return cycles * len(self.points) + bisect_right(self.points, rest)

    def from_point(self, t: int, count: int, instant: int) -> Segment:
        """The ``count`` times from ``t`` (one of them) on, as a segment starting at ``instant``."""
        index = bisect_left(self.points, (t - self.base) % self.period)
        points, size = self.points, len(self.points)
        wrap = [self.period if index + j >= size else 0 for j in range(size)]
        offsets = tuple(points[(index + j) % size] - points[index] + wrap[j] for j in range(size))
        return Segment(instant, self.period, offsets, count)


def _smallest_period(period: int, points: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """The same times with the shortest period that repeats them (a cron ``*/5`` is every 5 minutes)."""
    size, every = len(points), set(points)
    for cycles in sorted((k for k in range(1, size + 1) if size % k == 0 and period % k == 0), reverse=True):
        shorter = period // cycles
        head = points[: size // cycles]
        if all(p < shorter for p in head) and {p + i * shorter for p in head for i in range(cycles)} == every:
            return shorter, head
    return period, points


@functools.lru_cache(maxsize=256)
def _cron_pattern(cadence: CronCadence) -> Pattern | None:
    fields = cadence.fields
    if fields.days_or or len(fields.months) < 12 or len(fields.days) < 31:
        return None  # dates that do not recur every day or week
    minutes = [m * US_PER_MINUTE for m in fields.minutes_of_day]
    if len(fields.weekdays) == 7:
        period, points = _smallest_period(US_PER_DAY, tuple(minutes))
        return Pattern(period, points, 0, cadence.clock.zone)
    week = tuple(day * US_PER_DAY + m for day in sorted(fields.weekdays) for m in minutes)
    period, points = _smallest_period(_WEEK, week)
    return Pattern(period, points, _SUNDAY % period, cadence.clock.zone)


def pattern_of(cadence: Cadence) -> Pattern | None:
    """How the cadence repeats, or None when it does not (month ends, cron with date fields)."""
    if isinstance(cadence, EpochGrid):
        return Pattern(cadence.interval, (0,), 0, None)
    if isinstance(cadence, FromLastRun):
        return Pattern(cadence.interval, (0,), cadence.origin % cadence.interval, None)
    if isinstance(cadence, LocalGrid):
        return Pattern(cadence.step, (0,), cadence.base % cadence.step, cadence.clock.zone)
    if isinstance(cadence, CronCadence):
        return _cron_pattern(cadence)
    return None


@functools.lru_cache(maxsize=64)
def offset_spans(zone: ZoneInfo, first_day: int, last_day: int) -> tuple[tuple[int, int, int, int], ...]:
    """``(start, end, offset, change)`` for the pieces of days ``[first_day, last_day]`` with one UTC offset.

    ``change`` is how far the offset moved at ``start`` (0 for the first piece). Sampled once a
    day: no zone changes its offset twice within a day.
    """
    spans, start = [], first_day * US_PER_DAY
    offset, change = _offset_at(zone, start), 0
    for day in range(first_day + 1, last_day + 2):
        t = day * US_PER_DAY
        if (now := _offset_at(zone, t)) != offset:
            moved = _gap_end(zone, t - US_PER_DAY, t)
            spans.append((start, moved, offset, change))
            start, offset, change = moved, now, abs(now - offset)
    spans.append((start, (last_day + 1) * US_PER_DAY, offset, change))
    return tuple(spans)


class _Segments:
    """Segments built from occurrences in order; one by one ones that keep their gap share a segment."""

    def __init__(self) -> None:
        self.done: list[Segment] = []
        self.steps = 0

    def step(self, occurrence: int) -> None:
        self.steps += 1
        last = self.done[-1] if self.done else None
        if last is not None and len(last.offsets) == 1:
            if last.count == 1:
                self.done[-1] = Segment(last.first, occurrence - last.first, (0,), 2)
                return
            if occurrence - last.last == last.period:
                self.done[-1] = Segment(last.first, last.period, (0,), last.count + 1)
                return
        self.done.append(Segment(occurrence, 1, (0,), 1))

    def add(self, segment: Segment) -> None:
        self.done.append(segment)


def _repeating(
    cadence: Cadence, pattern: Pattern, first: int, last: int, days: tuple[int, int]
) -> tuple[list[Segment], int | None]:
    found = _Segments()
    if pattern.zone is None:
        spans: tuple[tuple[int, int, int, int], ...] = ((first, last + 1, 0, 0),)
    else:
        spans = offset_spans(pattern.zone, *days)
    occurrence = first
    for start, end, offset, change in spans:
        if occurrence > last:
            break
        # Just after an offset change some readings are ambiguous or skipped: step them one by one.
        while occurrence < min(end, start + change) and occurrence <= last:
            if found.steps >= MAX_STEPS:
                return found.done, found.done[-1].last
            found.step(occurrence)
            occurrence = cadence.following(occurrence)
        if occurrence >= end or occurrence > last:
            continue
        # From here to the next change every time of the pattern is an occurrence, `offset` from its reading.
        reading, until = occurrence + offset, min(end - 1, last) + offset
        count = pattern.count_to(until) - pattern.count_to(reading - 1)
        segment = pattern.from_point(reading, count, occurrence)
        found.add(segment)
        occurrence = cadence.following(segment.last)
    return found.done, None


def _stepped(cadence: Cadence, first: int, last: int) -> tuple[list[Segment], int | None]:
    found = _Segments()
    occurrence = first
    while occurrence <= last:
        if found.steps >= MAX_STEPS:
            return found.done, found.done[-1].last
        found.step(occurrence)
        occurrence = cadence.following(occurrence)
    return found.done, None


def lane(
    plan: Plan,
    after: int,
    until: int,
    *,
    earliest: int | None = None,
    latest: int | None = None,
    anchor: int | None = None,
) -> LaneShape:
    """The runs :meth:`Plan.upcoming` lists from ``after`` through ``until`` (any count), as a lane.

    The same anchoring and bounds as ``upcoming``: the first run is the first that starts after
    ``after`` in the DAG's period bounds, the last the last that starts at or before ``until``.
    """
    plan = plan.anchored_at(origin_for(last=anchor, earliest=earliest, moment=after, phase=plan.phase))
    low, high = plan.period_bounds(earliest, latest)
    cadence = plan.cadence
    first = cadence.following(after - plan.phase)
    if low is not None and first < low:
        first = low
    last = cadence.at_or_before(until - plan.phase)
    if high is not None and last > high:
        last = high
    shape = functools.partial(LaneShape, after, until, phase=plan.phase, delay=plan.delay, lookback=plan.lookback)
    if first > last:
        return shape(segments=(), before=None, through=None)
    pattern = pattern_of(cadence)
    if pattern is None:
        segments, through = _stepped(cadence, first, last)
    else:  # the days of the whole range, the same for every DAG asked about it: the zone's spans are cached
        days = (min(first, after) // US_PER_DAY - 1, max(last, until) // US_PER_DAY + 1)
        segments, through = _repeating(cadence, pattern, first, last, days)
    return shape(segments=tuple(segments), before=cadence.preceding(first), through=through)
