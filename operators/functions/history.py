"""How the status reads one run of a cursor function: a fire, a fire in flight, a declined tick, or neither.

The inputs are the run, its cursor task instance and the :class:`FireRecord` an
unclean fire or the admission left (see :mod:`tessera.operators.functions.record`):

* record ``skipped``: a declined tick, with its reason;
* record ``finished``: a fire that failed, with what failed;
* no record and the task instance succeeded: a clean fire (its task only
  succeeds once the cursor is saved);
* no record and the task instance running and heartbeating, or up for retry: in
  flight;
* no record and the task instance stopped without succeeding (or its heartbeat is
  older than ``[scheduler] task_instance_heartbeat_timeout``): the fire never
  reported its result, its worker died: ``Unknown``, which is not a failure;
* a dry run (record ``dry_run``, or ``{"dry_run": true}`` in the run's conf) is
  neither a fire nor a tick.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dagrun import DagRun
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.state import TaskInstanceState
from airflow.utils.types import DagRunType
from sqlalchemy import and_, func, select

from .policy import is_dry_run
from .record import RECORD_KEY, FireRecord, Outcome, Phase, parse_iso

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

FIRE, IN_FLIGHT, SKIP, OTHER = "fire", "in_flight", "skip", "other"
_LIVE = (TaskInstanceState.RUNNING, TaskInstanceState.DEFERRED, TaskInstanceState.RESTARTING)
# Never started by this run (pending, declined upstream, removed): not a fire.
_NOT_FIRED = (
    None,
    TaskInstanceState.SCHEDULED,
    TaskInstanceState.QUEUED,
    TaskInstanceState.SKIPPED,
    TaskInstanceState.UPSTREAM_FAILED,
    TaskInstanceState.REMOVED,
)


@dataclass(frozen=True)
class RunReading:
    """One run as the status reads it; ``time`` is when it was due (``run_after``)."""

    run_id: str
    time: datetime.datetime
    tick: bool
    """A scheduled tick (not a run-now, a backfill or a dry run)."""
    kind: str
    outcome: Outcome | None = None
    reason: str | None = None
    message: str | None = None
    finished: datetime.datetime | None = None


def read_run(run: DagRun, ti: TaskInstance | None, record: FireRecord | None, stale: datetime.datetime) -> RunReading:
    """Classify one run; ``stale``: a heartbeat older than this means the worker is gone."""
    state = None if ti is None else ti.state
    base = {"run_id": run.run_id, "time": run.run_after, "tick": run.run_type == DagRunType.SCHEDULED}
    if is_dry_run(run.conf) or (record is not None and record.phase is Phase.DRY_RUN):
        return RunReading(kind=OTHER, **{**base, "tick": False})
    if record is not None and record.phase is Phase.SKIPPED:
        return RunReading(kind=SKIP, reason=record.reason, message=record.message, **base)
    if record is not None:
        finished = parse_iso(record.finished_at)
        return RunReading(
            kind=FIRE, outcome=record.outcome, reason=record.reason, message=record.message, finished=finished, **base
        )
    if ti is None or state in _NOT_FIRED:
        return RunReading(kind=OTHER, **base)
    if state == TaskInstanceState.SUCCESS:
        return RunReading(kind=FIRE, outcome=Outcome.SUCCEEDED, finished=ti.end_date, **base)
    beat = ti.last_heartbeat_at or ti.start_date
    if (state in _LIVE and beat is not None and beat > stale) or state == TaskInstanceState.UP_FOR_RETRY:
        return RunReading(kind=IN_FLIGHT, **base)
    lost = (
        "the fire never reported its result (its worker stopped mid-fire, or the task failed before the "
        "function ran: see the task log); the cursor was not advanced"
    )
    return RunReading(kind=FIRE, outcome=Outcome.UNKNOWN, reason="FireLost", message=lost, finished=ti.end_date, **base)


History = tuple[list[DagRun], list[RunReading]]
"""The newest runs of a DAG (newest first) and how each reads for one of its cursor tasks."""


def load_history(session: Session, dag_id: str, task_id: str, *, limit: int, stale: datetime.datetime) -> History:
    """The newest ``limit`` runs of the DAG (newest first) and how each reads."""
    return load_histories(session, [(dag_id, task_id)], limit=limit, stale=stale)[dag_id, task_id]


def load_histories(
    session: Session, functions: Collection[tuple[str, str]], *, limit: int, stale: datetime.datetime
) -> dict[tuple[str, str], History]:
    """:func:`load_history` of each ``(dag_id, task_id)``, in three queries whatever their number.

    The newest ``limit`` runs of each DAG are ranked in the database (a window function), and
    their task instances and fire records are read by joining that ranking, not run by run.
    """
    if not functions:
        return {}
    dag_ids = sorted({dag_id for dag_id, _ in functions})
    task_ids = sorted({task_id for _, task_id in functions})
    newest_first = (DagRun.run_after.desc(), DagRun.id.desc())
    rank = func.row_number().over(partition_by=DagRun.dag_id, order_by=newest_first).label("rank")
    ranked = select(DagRun.id, DagRun.dag_id, DagRun.run_id, rank).where(DagRun.dag_id.in_(dag_ids)).subquery()
    newest = select(ranked.c.dag_id, ranked.c.run_id).where(ranked.c.rank <= limit).subquery()
    runs: dict[str, list[DagRun]] = {dag_id: [] for dag_id in dag_ids}
    for run in session.scalars(
        select(DagRun)
        .join(ranked, ranked.c.id == DagRun.id)
        .where(ranked.c.rank <= limit)
        .order_by(DagRun.dag_id, *newest_first)
    ):
        runs[run.dag_id].append(run)

    def of_newest(model: Any) -> Any:
        return and_(model.dag_id == newest.c.dag_id, model.run_id == newest.c.run_id)

    tis = {
        (ti.dag_id, ti.task_id, ti.run_id): ti
        for ti in session.scalars(
            select(TaskInstance).join(newest, of_newest(TaskInstance)).where(TaskInstance.task_id.in_(task_ids))
        )
    }
    records = {
        (row.dag_id, row.task_id, row.run_id): FireRecord.from_json(XComModel.deserialize_value(row))
        for row in session.scalars(
            select(XComModel)
            .join(newest, of_newest(XComModel))
            .where(XComModel.task_id.in_(task_ids), XComModel.key == RECORD_KEY)
        )
    }
    histories = {}
    for dag_id, task_id in functions:
        readings = [
            read_run(run, tis.get((dag_id, task_id, run.run_id)), records.get((dag_id, task_id, run.run_id)), stale)
            for run in runs[dag_id]
        ]
        histories[dag_id, task_id] = (list(runs[dag_id]), readings)
    return histories
