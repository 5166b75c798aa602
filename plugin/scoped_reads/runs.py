"""A caller's reads of runs, their notes and backfills: one DAG's at a time, a DAG out of scope reads nothing."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.backfill import Backfill
from airflow.models.dagrun import DagRun, DagRunNote
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import Row, Select, and_, func, or_, select

from .._airflow import run_column, run_created_by
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
REACH = datetime.timedelta(days=1)
"""How long before its ``run_after`` a run's logical date may lie, when the caller knows no better bound.

A scheduled or backfill run's logical date is its window's start, at or before its ``run_after``
(the window's end, plus the phase); the explainer passes the longest window of the schedule in
force around T instead (:func:`~tessera.plugin.explainer.facts.reach_of`).
"""
ACTIVE_SPAN = datetime.timedelta(days=1)
"""How long before an instant a run that has finished since is looked for among the runs in flight then.

A run still unfinished is found whenever it started (by its state); one that ran longer than this
and has finished since is not counted.
"""
_SLACK = 5
"""Runs read past the limit along the logical-date index, then ordered by ``run_after``: a run whose
logical date is newer while its ``run_after`` is older (a schedule edit moved its phase) is not lost."""
_UNFINISHED = (DagRunState.QUEUED.value, DagRunState.RUNNING.value)
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
    run_column("created_at"),
    DagRun.triggered_by,
    DagRun.triggering_user_name,
    DagRun.backfill_id,
)
_AUTOMATED = (DagRunType.SCHEDULED.value, DagRunType.BACKFILL_JOB.value)


def _read(session: Session, query: Select) -> list[RunRow]:
    found = []
    for row in session.execute(query):
        values = list(row)
        values[2] = str(values[2])
        values[3] = None if values[3] is None else str(values[3])
        values[12] = getattr(values[12], "value", values[12])
        found.append(RunRow(*values))
    return found


def _runs(
    session: Session,
    scope: Scope,
    dag_id: str,
    *where: Any,
    dated: tuple[Any, ...],
    newest_first: bool,
    limit: int,
    undated: bool = True,
    unfinished: bool = False,
) -> list[RunRow]:
    """The first ``limit`` of ``dag_id``'s runs matching ``where`` by ``run_after`` (``newest_first``: newest first).

    Airflow has no index on ``(dag_id, run_after)``: filtering one DAG's runs by ``run_after`` reads
    every run it ever had (1.4 s at 400,000 runs on SQLite). Each run is found through an index
    Airflow keeps instead, read column by column (without ``conf``: a trigger's input is in no answer):

    * a run with a logical date (every scheduled and backfill run) along the unique index on
      ``(dag_id, logical_date)``, within ``dated`` (bounds on the logical date the caller derives
      from its ``run_after`` bounds), walked from the end nearest the answer;
    * a run without one (asset-triggered, manual without a logical date; with ``undated``) from the
      same index's NULL entries: their number is the runs people and assets asked for, not the schedule's;
    * with ``unfinished``, a queued or running run through the index on ``(dag_id, state)``.

    Not found: a manual run given a logical date outside ``dated`` (far from its ``run_after``).
    """
    if not scope.allows(dag_id):
        return []
    base = select(*_RUN_COLUMNS).where(DagRun.dag_id == dag_id, *where)
    walk = DagRun.logical_date.desc() if newest_first else DagRun.logical_date
    order = (DagRun.run_after.desc(), DagRun.id.desc()) if newest_first else (DagRun.run_after, DagRun.id)
    found = {run.id: run for run in _read(session, base.where(*dated).order_by(walk).limit(limit + _SLACK))}
    if undated:
        query = base.where(DagRun.logical_date.is_(None)).order_by(*order).limit(limit)
        found.update((run.id, run) for run in _read(session, query))
    if unfinished:
        query = base.where(DagRun.state.in_(_UNFINISHED)).order_by(*order).limit(limit)
        found.update((run.id, run) for run in _read(session, query))
    ordered = sorted(found.values(), key=lambda run: (run.run_after, run.id), reverse=newest_first)
    return ordered[:limit]


def runs_before(
    session: Session, scope: Scope, dag_id: str, at: datetime.datetime, *, limit: int = 3, automated: bool = False
) -> list[RunRow]:
    """The newest runs due at or before ``at`` (scheduled or backfill ones only with ``automated``), newest first.

    A run due by ``at`` has its logical date at or before it: the walk down the logical-date index
    from ``at`` stops at the first ``limit`` (plus a few) that were due, however long the history.
    """
    where = [DagRun.run_after <= at]
    if automated:
        where.append(DagRun.run_type.in_(_AUTOMATED))
    dated = (DagRun.logical_date <= at,)
    return _runs(session, scope, dag_id, *where, dated=dated, newest_first=True, limit=limit, undated=not automated)


def runs_between(
    session: Session,
    scope: Scope,
    dag_id: str,
    low: datetime.datetime,
    high: datetime.datetime,
    *,
    reach: datetime.timedelta = REACH,
) -> list[RunRow]:
    """The runs due from ``low`` to ``high`` (inclusive), oldest first, at most :data:`RUNS_AROUND`.

    ``reach``: how long before its ``run_after`` a run's logical date may lie (see :data:`REACH`).
    """
    where = (DagRun.run_after >= low, DagRun.run_after <= high)
    dated = (DagRun.logical_date >= low - reach, DagRun.logical_date <= high)
    return _runs(session, scope, dag_id, *where, dated=dated, newest_first=False, limit=RUNS_AROUND)


def runs_after(
    session: Session,
    scope: Scope,
    dag_id: str,
    after: datetime.datetime,
    *,
    limit: int = 3,
    reach: datetime.timedelta = REACH,
) -> list[RunRow]:
    """The first runs due after ``after``, oldest first; ``reach`` as for :func:`runs_between`."""
    dated = (DagRun.logical_date > after - reach,)
    return _runs(session, scope, dag_id, DagRun.run_after > after, dated=dated, newest_first=False, limit=limit)


def active_runs_at(
    session: Session,
    scope: Scope,
    dag_id: str,
    moment: datetime.datetime,
    *,
    limit: int,
    reach: datetime.timedelta = REACH,
) -> list[RunRow]:
    """The DAG's runs (not backfills) created at or before ``moment`` and not finished by then, oldest first.

    "Created" is the first of ``created_at``, ``queued_at`` and ``run_after`` a run has, written as
    one indexable comparison each; a run in flight was due before ``moment``, and one that has
    finished since is looked for back to :data:`ACTIVE_SPAN` before it (an unfinished one anywhere).
    """
    where = (
        DagRun.run_type != DagRunType.BACKFILL_JOB.value,
        run_created_by(moment),
        or_(DagRun.end_date.is_(None), DagRun.end_date > moment),
    )
    dated = (DagRun.logical_date >= moment - reach - ACTIVE_SPAN, DagRun.logical_date <= moment)
    return _runs(session, scope, dag_id, *where, dated=dated, newest_first=False, limit=limit, unfinished=True)


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
    dated = run_column(column)
    columns = (DagRun.logical_date, run_column("partition_date"), DagRun.start_date, DagRun.state)
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


def owed_window_counts(session: Session, scope: Scope, plans: Mapping[str, Any]) -> dict[str, int]:
    """How many windows each DAG of ``plans`` (its id and plan) owes (``dropped="owe"``: gaps between its
    scheduled runs no run filled), those in scope only.

    Read by :func:`tessera.operators.coverage.owed_windows_of_each` (two bounded queries for all of
    them, each DAG's newest scheduled runs), counted up to :data:`~tessera.timetables.coverage.MAX_OWED`.
    """
    from tessera.operators.coverage import owed_windows_of_each
    from tessera.timetables.coverage import MAX_OWED

    allowed = {dag_id: plan for dag_id, plan in plans.items() if scope.allows(dag_id)}
    return {dag_id: len(owed) for dag_id, (owed, _) in owed_windows_of_each(session, allowed, limit=MAX_OWED).items()}
