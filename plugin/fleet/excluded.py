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


def excluded_runs(timetable: Any, *, after: datetime.datetime, until: datetime.datetime | None) -> list[ExcludedRun]:
    """The occurrences in ``(after, until]`` that ``timetable`` skips for its exclusions, with their reasons."""
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
        for item in plan.excluded(after=after, until=until, count=MAX_LISTED)
    ]
