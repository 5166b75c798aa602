"""A caller's reads of task instances, pool slots and XComs: a pool's holders out of scope are counted, never named."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dagrun import DagRun
from airflow.models.pool import Pool
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from sqlalchemy import and_, or_, select

from .scope import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


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


def _task(task_id: str, map_index: int, state: Any, *rest: Any) -> TaskRow:
    return TaskRow(task_id, map_index, None if state is None else str(state), *rest)


def tasks_of(session: Session, scope: Scope, dag_id: str, run_id: str, *, limit: int = 200) -> list[TaskRow]:
    """The run's task instances (index ``ti_dag_run``)."""
    if not scope.allows(dag_id):
        return []
    where = (TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id)
    # ``|| ''``: ordered by the task id, SQLite's planner (it keeps no statistics) walks the (dag_id, task_id, ...)
    # index through every task instance the DAG ever had instead of sorting this run's few.
    by_task = TaskInstance.task_id + ""
    rows = session.execute(select(*_TASK_COLUMNS).where(*where).order_by(by_task).limit(limit))
    return [_task(*row) for row in rows]


@dataclass(frozen=True)
class PoolHolder:
    dag_id: str
    run_id: str
    task: TaskRow


@dataclass(frozen=True)
class PoolOccupancy:
    """A pool's slots and who held them at an instant, as far as the caller may read."""

    pool: str
    slots: int | None
    """The pool's slots (None: no such pool)."""
    holders: list[PoolHolder]
    """The holders of DAGs the caller may read, oldest first."""
    hidden: int
    """How many holders are of DAGs the caller may not read: counted, never named."""

    @property
    def held(self) -> int:
        return len(self.holders) + self.hidden


def pool_occupancy(session: Session, scope: Scope, pool: str, moment: datetime.datetime) -> PoolOccupancy:
    """The pool's slots and the task instances holding one at ``moment`` (at most its slots + 1, up to 21)."""
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
    holders, hidden = [], 0
    for dag_id, run_id, *task in rows:
        if scope.allows(dag_id):
            holders.append(PoolHolder(dag_id, run_id, _task(*task)))
        else:
            hidden += 1
    return PoolOccupancy(pool, slots, holders, hidden)


# -- XCom --------------------------------------------------------------------------------------------


def xcom_values(
    session: Session, scope: Scope, dag_id: str, run_id: str, key: str, *, limit: int
) -> list[tuple[str, Any]]:
    """``(task_id, value)`` of the run's XComs under ``key``, by task and map index, at most ``limit``."""
    if not scope.allows(dag_id):
        return []
    # By the run's primary key, the first column of XCom's own primary key (its (dag_id, task_id, ...) index
    # would walk every XCom the DAG ever kept); the run is found by Airflow's unique (dag_id, run_id).
    run_pk = select(DagRun.id).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id).scalar_subquery()
    rows = session.scalars(
        select(XComModel)
        .where(XComModel.dag_run_id == run_pk, XComModel.dag_id == dag_id, XComModel.run_id == run_id)
        .where(XComModel.key == key)
        .order_by(XComModel.task_id, XComModel.map_index)
        .limit(limit)
    )
    return [(row.task_id, XComModel.deserialize_value(row)) for row in rows]
