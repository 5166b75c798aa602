"""Which occurrences exclusions removed, and why: the public answer the plan, the CLI and the page show.

The scheduler never creates a run for an excluded occurrence, so nothing in Airflow's
database records it; the record is here, computed from the same cadence the scheduler
steps. The public plan's ``excluded`` (:func:`excluded_occurrences`) lists, for a span of
time, every occurrence the schedule would have had but for its exclusions (a date, a range,
a holiday), each with the reasons a person reads ("Independence Day (observed) (holidays
US-NY)"). An occurrence that a union still runs through another member is not excluded, and
is not listed.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ._time.cadence import Cadence
from ._time.durations import shown
from ._time.excluding import ExcludingCadence, day_start
from ._time.horizon import longest_hidden_stretch
from ._time.union import UnionCadence
from ._time.wallclock import WallClock, load_zone
from .exclusions import Exclusions
from .instants import from_us, to_us

MAX_EXCLUDED = 1000
"""The most excluded occurrences one answer lists."""
_MAX_RUNS_SCANNED = 4 * MAX_EXCLUDED  # runs of excluded days that hide nothing still cost a step each


@dataclass(frozen=True)
class ExcludedOccurrence:
    """An occurrence the schedule skips, and why."""

    occurrence: datetime.datetime
    """The instant the run would have been due (UTC)."""
    local_date: str
    """Its local date in the schedule's zone, ``YYYY-MM-DD``."""
    reasons: tuple[str, ...]
    """Why, as a person reads it: ``("Christmas Day (holidays US-NY)",)``."""


def _local(instant: int, zone: ZoneInfo) -> str:
    return from_us(instant).astimezone(zone).isoformat()


def with_exclusions(field: str, cadence: Cadence, exclusions: Exclusions | None, timezone: str) -> Cadence:
    """``cadence`` without the occurrences on ``exclusions``' local days in ``timezone`` (checked for the horizon).

    :raises ValueError: naming ``field`` when the exclusions hide every occurrence for more than a year.
    """
    if exclusions is None:
        return cadence
    days = exclusions.days()
    if not days:
        return cadence
    zone = load_zone("timezone", timezone)
    clock = WallClock(zone)
    stretch = longest_hidden_stretch(cadence, days, clock)
    if stretch is not None:
        first, last = (_local(instant, zone) for instant in stretch)
        raise ValueError(
            f"{field}: {shown(exclusions.describe(), 120)} hides every occurrence from {first} to {last}; "
            f"exclusions may hide a schedule for at most 366 days in a row: exclude fewer dates, or pause the DAG "
            f"or set its end_date for a longer stop"
        )
    return ExcludingCadence(cadence, days, clock)


def _removed(cadence: Cadence, after: int, until: int, count: int) -> dict[int, list[str]]:
    """Up to ``count`` occurrences per exclusion layer in ``(after, until]`` that a layer removed, with reasons."""
    found: dict[int, list[str]] = {}
    if isinstance(cadence, UnionCadence):
        for member in cadence.members:
            for occurrence, reasons in _removed(member, after, until, count).items():
                found.setdefault(occurrence, []).extend(r for r in reasons if r not in found.get(occurrence, []))
        return found
    if not isinstance(cadence, ExcludingCadence):
        return found
    found.update(_removed(cadence.inner, after, until, count))
    days, inner, listed = cadence.days, cadence.inner, 0
    for scanned, run in enumerate(days.runs_from(cadence.day_of(after))):
        start = max(day_start(cadence.clock, days.firsts[run]), after + 1)
        end = day_start(cadence.clock, days.lasts[run] + 1)
        if start > until or scanned >= _MAX_RUNS_SCANNED or listed >= count:
            break
        occurrence = inner.at_or_after(start)
        while occurrence < end and occurrence <= until and listed < count:
            reasons = found.setdefault(occurrence, [])
            reasons += [r for r in days.reasons(cadence.day_of(occurrence)) if r not in reasons]
            listed += 1
            occurrence = inner.following(occurrence)
    return found


def excluded_occurrences(
    cadence: Cadence, timezone: str, after: datetime.datetime, until: datetime.datetime, count: int
) -> list[ExcludedOccurrence]:
    """What :meth:`PublicPlan.excluded <tessera.timetables.public_plan.PublicPlan.excluded>` answers for ``cadence``.

    ``timezone`` is the schedule's zone: each occurrence's local date is read on its clock.
    """
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_EXCLUDED:
        raise ValueError(f"count: {shown(count)} is not 1 to {MAX_EXCLUDED}; ask for fewer excluded occurrences")
    low, high = to_us(after), to_us(until)
    if high <= low:
        return []
    removed = _removed(cadence, low, high, count)
    zone = ZoneInfo(timezone)
    skipped = [
        ExcludedOccurrence(
            occurrence=from_us(occurrence),
            local_date=from_us(occurrence).astimezone(zone).date().isoformat(),
            reasons=tuple(reasons),
        )
        for occurrence, reasons in sorted(removed.items())
        if cadence.at_or_after(occurrence) != occurrence  # a union member may still run it
    ]
    return skipped[:count]
