"""The ticks a schedule passed over before the run now starting: after downtime, or while paused.

The timetable's catch-up (``Latest``, ``Backfill(limit)``) and a ``Cron`` starting
deadline decide, in the scheduler, which occurrence runs after a gap; the occurrences
they step over never become runs, so nothing would say they were declined. When a
scheduled run starts, the admission compares it with the DAG's previous scheduled
run and asks the timetable's public plan which ticks lay between them
(``missed_between``). Each is declined for one of two reasons:

* ``Suspended`` when the DAG was paused at that tick (per
  :mod:`~tessera.operators.pauses.history`);
* ``MissedDeadline`` otherwise: the scheduler did not get to it in time (typically
  it was down) and the catch-up policy or the starting deadline passed over it.

Bounded: at most :data:`MAX_COUNTED` ticks are enumerated per run started; beyond
that the count is reported as "at least" that many (the last tick is still exact).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import select

from tessera.timetables.base import TesseraTimetable

from ..pauses.history import pause_changes, paused_at
from .record import SkipReason
from .skip_events import SkipEvent

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

MAX_COUNTED = 1000
"""Ticks enumerated per gap; a longer gap is counted as "at least 1000" (one cheap step each)."""

_MESSAGES = {
    SkipReason.SUSPENDED: "the DAG was paused at these ticks",
    SkipReason.MISSED_DEADLINE: (
        "the scheduler did not start these ticks in time (typically it was down); the schedule's catch-up "
        "policy or starting deadline passed over them"
    ),
}


def _previous_tick(session: Session, dag_run: DagRun) -> datetime.datetime | None:
    return session.scalar(
        select(DagRun.run_after)
        .where(
            DagRun.dag_id == dag_run.dag_id,
            DagRun.run_type == DagRunType.SCHEDULED,
            DagRun.run_after < dag_run.run_after,
        )
        .order_by(DagRun.run_after.desc())
        .limit(1)
    )


def missed_ticks(session: Session, dag: Any, dag_run: DagRun) -> list[SkipEvent]:
    """The declined ticks before ``dag_run`` (a scheduled tick), grouped by reason; empty for most runs."""
    timetable = dag.timetable
    if not isinstance(timetable, TesseraTimetable) or dag_run.data_interval_end is None:
        return []  # only tessera timetables have a public plan
    previous = _previous_tick(session, dag_run)
    if previous is None:
        return []  # a schedule's first run owes only its newest tick: nothing was passed over
    ticks, cut = timetable.plan.missed_between(previous, dag_run.run_after, limit=MAX_COUNTED)
    if not ticks:
        return []
    paused = paused_at(pause_changes(session, dag_run.dag_id, since=previous), ticks)
    events = []
    for reason in (SkipReason.SUSPENDED, SkipReason.MISSED_DEADLINE):
        mine = [tick for tick, was_paused in zip(ticks, paused) if was_paused == (reason is SkipReason.SUSPENDED)]
        if mine:
            # When cut short, the ticks not enumerated are counted with the newest one's reason.
            at_least = cut and mine[-1] == ticks[-1]
            events.append(SkipEvent(reason.value, len(mine), mine[0], mine[-1], _MESSAGES[reason], at_least))
    return events
