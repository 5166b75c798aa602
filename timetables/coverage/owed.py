"""Which windows no run evaluated: read from the runs themselves, so nothing else has to remember them.

Under ``dropped="owe"`` a scheduled run keeps its one-period window, so the windows of the
fires that did not run show as gaps between consecutive scheduled runs' windows; under
``"cover"`` the next run's window reaches back over them and no gap remains. The record is
the run table (``data_interval_start``/``_end`` of each run), which ``airflow db clean
--tables log`` leaves alone; an owed window that a backfill or manual run evaluated since (the
same window) is no longer owed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._time.durations import shown
from .._time.plan import Plan, PlannedRun

MAX_OWED = 1000
"""The most owed windows one answer lists."""
_MAX_STEPS = 4 * MAX_OWED
"""Cadence steps one answer takes at most (occurrences a backfill has since run cost a step each)."""


@dataclass(frozen=True, slots=True)
class OwedRuns:
    """The owed runs found, oldest first, and whether more may be owed than were listed."""

    runs: tuple[PlannedRun, ...]
    truncated: bool


def owed_runs(
    plan: Plan,
    scheduled: Sequence[tuple[int, int]],
    ran: Sequence[tuple[int, int]] = (),
    *,
    limit: int,
) -> OwedRuns:
    """The runs of the occurrences between consecutive ``scheduled`` runs whose windows no run evaluated.

    ``scheduled`` are the windows ``(start, end)`` of a DAG's scheduled runs, in microseconds
    (any order); ``ran`` the windows of its other runs (backfill, manual): an occurrence whose
    exact window one of them evaluated is not owed. At most ``limit`` (1 to :data:`MAX_OWED`)
    are listed, after at most :data:`_MAX_STEPS` cadence steps; ``truncated`` says when the
    answer stopped at either.

    :raises ValueError: naming ``limit`` when it is not 1 to :data:`MAX_OWED`.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_OWED:
        raise ValueError(f"limit: {shown(limit)} is not 1 to {MAX_OWED}; ask for fewer owed windows")
    windows = sorted(set(scheduled), key=lambda window: window[1])
    evaluated = set(ran)
    found: list[PlannedRun] = []
    steps = 0
    for (_, previous_end), (next_start, next_end) in zip(windows, windows[1:]):
        last = plan.occurrence_of_window_end(previous_end)
        anchored = plan.anchored_at(last)
        occurrence, until = anchored.cadence.following(last), plan.occurrence_of_window_end(next_end)
        while occurrence < until:
            run = anchored.run(occurrence)
            if run.window_start >= next_start:
                break  # the next run's window reaches back over this one and every later one
            if steps >= _MAX_STEPS or len(found) >= limit:
                return OwedRuns(tuple(found), truncated=True)
            steps += 1
            if (run.window_start, run.window_end) not in evaluated:
                found.append(run)
            occurrence = anchored.cadence.following(occurrence)
    return OwedRuns(tuple(found), truncated=False)
