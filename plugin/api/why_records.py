"""The records "why" reads: runs, scheduler jobs, backfills, task instances and pools around an instant.

Every read is one query, indexed by DAG and bounded by a ``LIMIT`` (a DAG's runs by its id,
the scheduler jobs by type and heartbeat, a run's task instances by run): the cost of an
answer does not grow with the deployment's history. Runs are read column by column, without
``conf`` (the trigger's input is not part of any answer).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.configuration import conf
from airflow.jobs.job import Job
from airflow.models.backfill import Backfill
from airflow.models.dagrun import DagRun, DagRunNote
from airflow.models.log import Log
from airflow.models.pool import Pool
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.types import DagRunType
from sqlalchemy import and_, func, or_, select

from tessera.operators.functions.record import RECORD_KEY, FireRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RUNS_AROUND = 50
"""Runs read between the occurrences around T: more than any answer cites."""
SCHEDULER_JOB = "SchedulerJob"


@dataclass(frozen=True)
class RunRow:
    id: int
    run_id: str
    run_type: str
    state: str | None
    run_after: datetime.datetime
    logical_date: datetime.datetime | None
    data_interval_start: datetime.datetime | None
    data_interval_end: datetime.datetime | None
    queued_at: datetime.datetime | None
    start_date: datetime.datetime | None
    end_date: datetime.datetime | None
    created_at: datetime.datetime | None
    triggered_by: str | None
    triggering_user: str | None
    backfill_id: int | None

    @property
    def automated(self) -> bool:
        return self.run_type in (DagRunType.SCHEDULED.value, DagRunType.BACKFILL_JOB.value)

    @property
    def created(self) -> datetime.datetime:
        """When the run was created (queued), as well as the records tell."""
        return self.created_at or self.queued_at or self.run_after

    def in_flight_at(self, moment: datetime.datetime) -> bool:
        return self.created <= moment and (self.end_date is None or self.end_date > moment)


_RUN_COLUMNS = (
    DagRun.id,
    DagRun.run_id,
    DagRun.run_type,
    DagRun.state,
    DagRun.run_after,
    DagRun.logical_date,
    DagRun.data_interval_start,
    DagRun.data_interval_end,
    DagRun.queued_at,
    DagRun.start_date,
    DagRun.end_date,
    DagRun.created_at,
    DagRun.triggered_by,
    DagRun.triggering_user_name,
    DagRun.backfill_id,
)


def _runs(session: Session, *where: Any, order: Any, limit: int) -> list[RunRow]:
    rows = session.execute(select(*_RUN_COLUMNS).where(*where).order_by(order, DagRun.id).limit(limit))
    found = []
    for row in rows:
        values = list(row)
        values[2] = str(values[2])
        values[3] = None if values[3] is None else str(values[3])
        values[12] = getattr(values[12], "value", values[12])
        found.append(RunRow(*values))
    return found


def runs_before(
    session: Session, dag_id: str, at: datetime.datetime, *, limit: int = 3, automated: bool = False
) -> list[RunRow]:
    """The newest runs due at or before ``at`` (scheduled or backfill ones only with ``automated``), newest first."""
    where = [DagRun.dag_id == dag_id, DagRun.run_after <= at]
    if automated:
        where.append(DagRun.run_type.in_([DagRunType.SCHEDULED.value, DagRunType.BACKFILL_JOB.value]))
    return _runs(session, *where, order=DagRun.run_after.desc(), limit=limit)


def runs_between(session: Session, dag_id: str, low: datetime.datetime, high: datetime.datetime) -> list[RunRow]:
    """The runs due from ``low`` to ``high`` (inclusive), oldest first, at most :data:`RUNS_AROUND`."""
    where = (DagRun.dag_id == dag_id, DagRun.run_after >= low, DagRun.run_after <= high)
    return _runs(session, *where, order=DagRun.run_after, limit=RUNS_AROUND)


def runs_after(session: Session, dag_id: str, after: datetime.datetime, *, limit: int = 3) -> list[RunRow]:
    return _runs(session, DagRun.dag_id == dag_id, DagRun.run_after > after, order=DagRun.run_after, limit=limit)


def active_runs_at(session: Session, dag_id: str, moment: datetime.datetime, *, limit: int) -> list[RunRow]:
    """The DAG's runs (not backfills) created at or before ``moment`` and not finished by then."""
    where = (
        DagRun.dag_id == dag_id,
        DagRun.run_type != DagRunType.BACKFILL_JOB.value,
        func.coalesce(DagRun.created_at, DagRun.queued_at, DagRun.run_after) <= moment,
        or_(DagRun.end_date.is_(None), DagRun.end_date > moment),
    )
    return _runs(session, *where, order=DagRun.run_after, limit=limit)


@dataclass(frozen=True)
class JobRow:
    id: int
    hostname: str | None
    start_date: datetime.datetime | None
    latest_heartbeat: datetime.datetime | None
    state: str | None


@dataclass(frozen=True)
class SchedulerCover:
    """Whether a scheduler was heartbeating at an instant, and the jobs on either side of it."""

    alive: JobRow | None
    last_before: JobRow | None
    """The newest scheduler job whose last heartbeat is before the instant (when it was down: the one that stopped)."""
    next_after: JobRow | None
    """The first scheduler job started after the instant (when it was down: the one that came back)."""
    grace: datetime.timedelta


def _jobs(session: Session, *where: Any, order: Any) -> JobRow | None:
    row = session.execute(
        select(Job.id, Job.hostname, Job.start_date, Job.latest_heartbeat, Job.state)
        .where(Job.job_type == SCHEDULER_JOB, *where)
        .order_by(order)
        .limit(1)
    ).first()
    return None if row is None else JobRow(*row)


def scheduler_at(session: Session, moment: datetime.datetime) -> SchedulerCover:
    """Three indexed look-ups in the job table (``job_type``, ``latest_heartbeat``)."""
    grace = datetime.timedelta(seconds=conf.getint("scheduler", "scheduler_health_check_threshold", fallback=30))
    alive = _jobs(session, Job.latest_heartbeat >= moment - grace, Job.start_date <= moment, order=Job.latest_heartbeat)
    before = (
        None
        if alive is not None
        else _jobs(session, Job.latest_heartbeat < moment - grace, order=Job.latest_heartbeat.desc())
    )
    after = (
        None
        if alive is not None
        else _jobs(session, Job.latest_heartbeat >= moment, Job.start_date > moment, order=Job.start_date)
    )
    return SchedulerCover(alive, before, after, grace)


@dataclass(frozen=True)
class BackfillRow:
    id: int
    from_date: datetime.datetime
    to_date: datetime.datetime
    created_at: datetime.datetime
    completed_at: datetime.datetime | None
    is_paused: bool | None
    triggering_user: str | None


def backfills(session: Session, dag_id: str, *, at: datetime.datetime, ids: list[int]) -> list[BackfillRow]:
    """Backfills of the DAG running at ``at``, and those of ``ids`` (the runs' own), at most 10."""
    running = and_(Backfill.created_at <= at, or_(Backfill.completed_at.is_(None), Backfill.completed_at > at))
    rows = session.execute(
        select(
            Backfill.id,
            Backfill.from_date,
            Backfill.to_date,
            Backfill.created_at,
            Backfill.completed_at,
            Backfill.is_paused,
            Backfill.triggering_user_name,
        )
        .where(Backfill.dag_id == dag_id, or_(running, Backfill.id.in_(ids)))
        .order_by(Backfill.id.desc())
        .limit(10)
    )
    return [BackfillRow(*row) for row in rows]


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    map_index: int
    state: str | None
    pool: str
    operator: str | None
    scheduled: datetime.datetime | None
    queued: datetime.datetime | None
    start_date: datetime.datetime | None
    end_date: datetime.datetime | None


_TASK_COLUMNS = (
    TaskInstance.task_id,
    TaskInstance.map_index,
    TaskInstance.state,
    TaskInstance.pool,
    TaskInstance.operator,
    TaskInstance.scheduled_dttm,
    TaskInstance.queued_dttm,
    TaskInstance.start_date,
    TaskInstance.end_date,
)


def _tasks(rows: Any) -> list[TaskRow]:
    return [TaskRow(t, m, None if s is None else str(s), *rest) for t, m, s, *rest in rows]


def tasks_of(session: Session, dag_id: str, run_id: str, *, limit: int = 200) -> list[TaskRow]:
    """The run's task instances (index ``ti_dag_run``)."""
    where = (TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id)
    return _tasks(session.execute(select(*_TASK_COLUMNS).where(*where).order_by(TaskInstance.task_id).limit(limit)))


def pool_at(
    session: Session, pool: str, moment: datetime.datetime
) -> tuple[int | None, list[tuple[str, str, TaskRow]]]:
    """The pool's slots and the task instances holding it at ``moment``: ``(dag_id, run_id, task)``."""
    slots = session.scalar(select(Pool.slots).where(Pool.pool == pool))
    holding = and_(
        TaskInstance.pool == pool,
        TaskInstance.start_date <= moment,
        or_(TaskInstance.end_date.is_(None), TaskInstance.end_date > moment),
    )
    limit = 1 + max(0, min(slots or 0, 20))
    rows = session.execute(
        select(TaskInstance.dag_id, TaskInstance.run_id, *_TASK_COLUMNS)
        .where(holding)
        .order_by(TaskInstance.start_date)
        .limit(limit)
    )
    return slots, [(dag_id, run_id, _tasks([rest])[0]) for dag_id, run_id, *rest in rows]


def fire_records(session: Session, dag_id: str, run_id: str) -> dict[str, FireRecord]:
    """The fire records (skips, failed fires) cursor tasks of the run left, by task id."""
    rows = session.scalars(
        select(XComModel)
        .where(XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == RECORD_KEY)
        .limit(50)
    )
    found = {}
    for row in rows:
        record = FireRecord.from_json(XComModel.deserialize_value(row))
        if record is not None:
            found[row.task_id] = record
    return found


def note_of(session: Session, run_pk: int) -> str | None:
    return session.scalar(select(DagRunNote.content).where(DagRunNote.dag_run_id == run_pk))


def oldest_audit_entry(session: Session) -> datetime.datetime | None:
    """When Airflow's audit log starts (``airflow db clean`` removes older entries); index ``idx_log_dttm``."""
    return session.scalar(select(func.min(Log.dttm)))


def oldest_scheduler_job(session: Session) -> datetime.datetime | None:
    return session.scalar(select(func.min(Job.start_date)).where(Job.job_type == SCHEDULER_JOB))
