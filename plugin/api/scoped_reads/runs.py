"""A caller's reads of runs, their notes and backfills: one DAG's at a time, a DAG out of scope reads nothing."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.backfill import Backfill
from airflow.models.dagrun import DagRun, DagRunNote
from airflow.utils.types import DagRunType
from sqlalchemy import Row, and_, func, or_, select

from .scope import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


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


RUNS_AROUND = 50
"""Runs read between the occurrences around T: more than any answer cites."""
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


def _runs(session: Session, scope: Scope, dag_id: str, *where: Any, order: Any, limit: int) -> list[RunRow]:
    """Runs of ``dag_id`` only (read column by column, without ``conf``: a trigger's input is in no answer)."""
    if not scope.allows(dag_id):
        return []
    query = select(*_RUN_COLUMNS).where(DagRun.dag_id == dag_id, *where).order_by(order, DagRun.id).limit(limit)
    found = []
    for row in session.execute(query):
        values = list(row)
        values[2] = str(values[2])
        values[3] = None if values[3] is None else str(values[3])
        values[12] = getattr(values[12], "value", values[12])
        found.append(RunRow(*values))
    return found


def runs_before(
    session: Session, scope: Scope, dag_id: str, at: datetime.datetime, *, limit: int = 3, automated: bool = False
) -> list[RunRow]:
    """The newest runs due at or before ``at`` (scheduled or backfill ones only with ``automated``), newest first."""
    where = [DagRun.run_after <= at]
    if automated:
        where.append(DagRun.run_type.in_([DagRunType.SCHEDULED.value, DagRunType.BACKFILL_JOB.value]))
    return _runs(session, scope, dag_id, *where, order=DagRun.run_after.desc(), limit=limit)


def runs_between(
    session: Session, scope: Scope, dag_id: str, low: datetime.datetime, high: datetime.datetime
) -> list[RunRow]:
    """The runs due from ``low`` to ``high`` (inclusive), oldest first, at most :data:`RUNS_AROUND`."""
    where = (DagRun.run_after >= low, DagRun.run_after <= high)
    return _runs(session, scope, dag_id, *where, order=DagRun.run_after, limit=RUNS_AROUND)


def runs_after(
    session: Session, scope: Scope, dag_id: str, after: datetime.datetime, *, limit: int = 3
) -> list[RunRow]:
    return _runs(session, scope, dag_id, DagRun.run_after > after, order=DagRun.run_after, limit=limit)


def active_runs_at(
    session: Session, scope: Scope, dag_id: str, moment: datetime.datetime, *, limit: int
) -> list[RunRow]:
    """The DAG's runs (not backfills) created at or before ``moment`` and not finished by then."""
    where = (
        DagRun.run_type != DagRunType.BACKFILL_JOB.value,
        func.coalesce(DagRun.created_at, DagRun.queued_at, DagRun.run_after) <= moment,
        or_(DagRun.end_date.is_(None), DagRun.end_date > moment),
    )
    return _runs(session, scope, dag_id, *where, order=DagRun.run_after, limit=limit)


def note_of(session: Session, scope: Scope, dag_id: str, run_pk: int) -> str | None:
    """The note of ``dag_id``'s run whose primary key is ``run_pk``."""
    if not scope.allows(dag_id):
        return None
    query = select(DagRunNote.content).join(DagRun, DagRun.id == DagRunNote.dag_run_id)
    return session.scalar(query.where(DagRunNote.dag_run_id == run_pk, DagRun.dag_id == dag_id))


def run_orm(session: Session, scope: Scope, dag_id: str, *where: Any, order: Any, limit: int) -> list[DagRun]:
    """``dag_id``'s runs as ORM objects (for a refresh's answer, which reads their version), at most ``limit``."""
    if not scope.allows(dag_id):
        return []
    query = select(DagRun).where(DagRun.dag_id == dag_id, *where).order_by(*order).limit(limit)
    return list(session.scalars(query))


def newest_run_pk(session: Session, scope: Scope, dag_id: str) -> int:
    """The greatest run primary key of ``dag_id`` (0: none), which a refresh reads before deciding."""
    if not scope.allows(dag_id):
        return 0
    return session.scalar(select(func.max(DagRun.id)).where(DagRun.dag_id == dag_id)) or 0


def runs_dated(session: Session, scope: Scope, dag_id: str, column: str, low: Any, high: Any) -> list[Row]:
    """``dag_id``'s runs whose ``column`` (``logical_date`` or ``partition_date``) is from ``low`` to ``high``."""
    if not scope.allows(dag_id):
        return []
    dated = getattr(DagRun, column)
    columns = (DagRun.logical_date, DagRun.partition_date, DagRun.start_date, DagRun.state)
    return list(session.execute(select(*columns).where(DagRun.dag_id == dag_id, dated.between(low, high))))


# -- backfills ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackfillRow:
    id: int
    from_date: datetime.datetime
    to_date: datetime.datetime
    created_at: datetime.datetime
    completed_at: datetime.datetime | None
    is_paused: bool | None
    triggering_user: str | None


def backfills(
    session: Session, scope: Scope, dag_id: str, *, at: datetime.datetime, ids: list[int]
) -> list[BackfillRow]:
    """Backfills of the DAG running at ``at``, and those of ``ids`` (the runs' own), at most 10."""
    if not scope.allows(dag_id):
        return []
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


def notes_of(session: Session, scope: Scope, dag_id: str, run_pks: list[int]) -> dict[int, str]:
    """The notes of ``dag_id``'s runs whose primary keys are ``run_pks`` (at most 10), by primary key."""
    if not scope.allows(dag_id) or not run_pks:
        return {}
    query = (
        select(DagRunNote.dag_run_id, DagRunNote.content)
        .join(DagRun, DagRun.id == DagRunNote.dag_run_id)
        .where(DagRunNote.dag_run_id.in_(run_pks[:10]), DagRun.dag_id == dag_id)
    )
    return {pk: content for pk, content in session.execute(query) if content}
