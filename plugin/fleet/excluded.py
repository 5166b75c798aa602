"""The occurrences a schedule skips for its exclusions (dates, ranges, holidays), as the plan and the preview list them.

The scheduler creates no run for an excluded occurrence, so Airflow's tables hold no trace
of it; the timetable's public plan (``excluded``) says which occurrences it skipped and why,
from the same cadence the scheduler steps.
"""

from __future__ import annotations

import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tessera.timetables.base import TesseraTimetable

from .models import ExcludedRun

MAX_LISTED = 100
"""The most excluded occurrences one plan row or preview lists (the oldest first)."""
NEXT_EXCLUSION_AHEAD = datetime.timedelta(days=366)
"""How far ahead a row looks for the next excluded occurrence: a year covers every yearly holiday."""


def excluded_runs(
    timetable: Any, *, after: datetime.datetime, until: datetime.datetime | None, count: int = MAX_LISTED
) -> list[ExcludedRun]:
    """The first ``count`` occurrences in ``(after, until]`` that ``timetable`` skips for its exclusions, and why."""
    if not isinstance(timetable, TesseraTimetable) or until is None or until <= after:
        return []
    plan = timetable.plan
    zone = ZoneInfo(plan.timezone)
    return [
        ExcludedRun(
            occurrence=item.occurrence,
            occurrence_local=item.occurrence.astimezone(zone).isoformat(),
            reasons=list(item.reasons),
        )
        for item in plan.excluded(after=after, until=until, count=count)
    ]


def next_exclusion(timetable: Any, *, after: datetime.datetime) -> ExcludedRun | None:
    """The first occurrence after ``after`` (within :data:`NEXT_EXCLUSION_AHEAD`) the exclusions skip, with why.

    What a row shows beside the next run ("skips 2026-12-25: Christmas Day (holidays US-NY)"), so an
    exclusion is seen before the day it leaves a gap in the lane. Bounded by the excluded days in the
    year ahead, not by the cadence's runs.
    """
    found = excluded_runs(timetable, after=after, until=after + NEXT_EXCLUSION_AHEAD, count=1)
    return found[0] if found else None
