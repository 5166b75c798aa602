"""The one rule for a scheduled run's window start: where the first window no run evaluated begins.

Every run the scheduler creates for a tessera timetable gets its window here
(:func:`covering_run`), whether the plain stepping (``next_dagrun_info_v2``) or the run
decision (:mod:`~tessera.timetables.owed_runs`) chose it; a test enumerates those callers.
"""

from __future__ import annotations

import dataclasses

from .._time.durations import shown
from .._time.plan import Plan, PlannedRun

COVER, OWE = "cover", "owe"
DROPPED = (COVER, OWE)
"""What happens to the window of a fire that does not run (see :mod:`tessera.timetables.coverage`)."""


def check_dropped(value: object, *, partitioned: bool) -> str:
    """``dropped=`` as given, or its default (``"cover"``; ``"owe"`` for a partitioned timetable).

    :raises ValueError: naming ``dropped``, for anything but ``"cover"`` or ``"owe"``, or
        ``"cover"`` on a partitioned timetable.
    """
    if value is None:
        return OWE if partitioned else COVER
    if not isinstance(value, str) or value not in DROPPED:
        raise ValueError(
            f"dropped: {shown(value)} is not a policy; use 'cover' (the next run evaluates the windows of the "
            f"fires that did not run) or 'owe' (each run keeps its own window; the others are owed, to backfill)"
        )
    if value == COVER and partitioned:
        raise ValueError(
            "dropped: 'cover' with partitioned=True; a run's partition_key names one period, so a run cannot "
            "evaluate the windows of dropped fires too: use dropped='owe' (the default when partitioned) and "
            "backfill the owed keys"
        )
    return value


def covering_run(plan: Plan, run: PlannedRun, *, last: int | None, earliest: int | None, dropped: str) -> PlannedRun:
    """``run`` with its window reaching back over every window no run evaluated since ``last``.

    ``last`` is the occurrence of the DAG's newest scheduled run (``None``: it never ran);
    ``earliest`` the DAG's start date (an occurrence whose period starts before it was not
    dropped: it never belonged to the DAG). Under ``"cover"`` the window starts where the
    first occurrence after ``last`` would have started its own, unless ``run``'s own window
    already reaches that far (the next occurrence, or a lookback at least that long); under
    ``"owe"`` ``run`` keeps its own. Tiling windows therefore still tile; lookback windows
    (``window=``) overlap by design, and their union covers time as it would had every fire run.
    A lookback shorter than the spacing samples time rather than covering it: its run keeps its
    own window, and the dropped samples are owed (:func:`~.owed.owed_runs` lists them).
    Cost: one cadence step when nothing was dropped, three when something was.
    """
    if dropped != COVER or last is None:
        return run
    anchored = plan.anchored_at(last)  # a plan from the last run steps from it
    first = anchored.cadence.following(last)
    if first >= run.occurrence:
        return run
    first_allowed = None if earliest is None else anchored.period_bounds(earliest, None)[0]
    if first_allowed is not None and first < first_allowed:
        first = first_allowed
    dropped_run = anchored.run(first)
    if plan.lookback is not None and plan.lookback < dropped_run.interval:
        return run  # windows that sample time (a lookback shorter than the spacing) do not cover it: owed
    start = dropped_run.window_start
    return dataclasses.replace(run, window_start=start) if start < run.window_start else run
