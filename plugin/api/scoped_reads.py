"""Every read of Airflow's records made on a caller's behalf, limited to the DAGs the caller may read.

A route authorizes the DAG it is about, but an answer about one DAG can quote another's records:
the task instances holding the pool slot its task waits for, the DAGs of a file in error. Airflow
answers 403 for another DAG's runs and task instances, so tessera must not quote them either.

This module is the only one of the request-serving code (``plugin/api``) that queries Airflow's
tables of runs (``DagRun``, ``DagRunNote``, ``Backfill``), task instances and pools, the audit log
(``Log``), XCom and import errors (``ParseImportError``); ``tests/plugin/api/test_scoped_reads.py``
fails when another module there does. Each read takes the caller's :class:`Scope` and returns rows
of the DAGs in it only. A read that crosses DAGs counts what the caller may not read but never
names it: a pool's occupancy says how many slots other DAGs hold, not which; an import error's
text is shown only to a caller who may read every DAG of its file (as Airflow's own import-error
view does).

``DagModel`` rows (and tags, serialized DAGs) are not read here: the lists select them with the
caller's readable ids (``schedules``, ``load_fleet``, ``triggers``, ``broken``), a route reads its
own DAG's row, and a row's id and schedule are what the lists show anyway.

The scheduler's and the dag-processor's reads (listeners, ``parse_watch``) are made on nobody's
behalf and stay with their features.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.models.backfill import Backfill
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun, DagRunNote
from airflow.models.errors import ParseImportError
from airflow.models.log import Log
from airflow.models.pool import Pool
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import ColumnElement, Row, Select, and_, case, func, or_, select, tuple_

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Scope:
    """The DAGs a caller may read: those the route authorized, and those Airflow's auth manager lists.

    Asking the auth manager costs a query over every DAG, so it is asked at most once per scope,
    and only when a read reaches past the DAGs the route already authorized (a pool's holders,
    the DAGs of a file in error).
    """

    authorized: frozenset[str] = frozenset()
    """The DAG ids the route's own dependency authorized (the DAG of its path): read without asking."""
    ask: Callable[[], Collection[str]] | None = field(default=None, compare=False)
    """Gives every DAG id the caller may read; None: every DAG (a CLI reading the database it was given)."""

    @classmethod
    def of_caller(cls, ask: Callable[[], Collection[str]], *, route_dag: str | None = None) -> Scope:
        """A request's scope: ``ask`` (``routes.access.readable`` for its user) and the DAG its route authorized."""
        return cls(frozenset() if route_dag is None else frozenset({route_dag}), ask)

    @classmethod
    def of(cls, readable: Collection[str]) -> Scope:
        """The scope of a request whose readable DAG ids are already known."""
        ids = frozenset(readable)
        return cls(ids, lambda: ids)

    @classmethod
    def everything(cls) -> Scope:
        """Every DAG: for the CLI, which reads the metadata database it was pointed at, as its owner."""
        return cls()

    @cached_property
    def _readable(self) -> frozenset[str] | None:
        return None if self.ask is None else frozenset(self.ask())

    def allows(self, dag_id: str) -> bool:
        if dag_id in self.authorized:
            return True
        readable = self._readable
        return readable is None or dag_id in readable

    def only(self, dag_ids: Iterable[str]) -> list[str]:
        """``dag_ids`` the caller may read, sorted, duplicates dropped."""
        return sorted({dag_id for dag_id in dag_ids if self.allows(dag_id)})


# -- runs --------------------------------------------------------------------------------------------


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


_STATES = tuple(state.value for state in DagRunState)
"""The states a run can end in (Airflow resets ``end_date`` when a run is queued or run again)."""


def _picks(dag_ids: list[str]) -> Select:
    """Per DAG: its newest run, newest fire and the fire before (their ids), its outcome's ends and failures.

    The ``dag_run`` table has no index on ``(dag_id, run_after)``, so ranking the runs of 1,000 DAGs
    means sorting all of them (a second on PostgreSQL for 50,000 runs). Instead the query makes one
    grouped pass over the runs (each DAG's latest ``run_after``, its newest scheduled run's logical
    date, its latest ``end_date``, and the latest of a run that did not fail), then reads the few
    rows those name: the fire before the last is found through Airflow's unique index on
    ``(dag_id, logical_date)``, and the failures in a row are the failed runs that finished after
    the newest one that did not fail (there are none in between, by definition), counted only for
    the DAGs whose newest finished run failed.
    """
    scheduled = DagRun.run_type == DagRunType.SCHEDULED
    failed = DagRun.state == DagRunState.FAILED.value
    latest = (
        select(
            DagRun.dag_id.label("dag_id"),
            func.max(DagRun.run_after).label("newest"),
            func.max(case((scheduled, DagRun.logical_date))).label("fire"),
            func.max(DagRun.end_date).label("last_end"),
            func.max(case((or_(DagRun.state.is_(None), ~failed), DagRun.end_date))).label("last_ok"),
            # the newest end of each state: the newest finished run's state is the one that ended last
            *(func.max(case((DagRun.state == state, DagRun.end_date))).label(f"end_{state}") for state in _STATES),
        )
        # the runs of the DAGs asked for, found by a join: a pass over the runs, not an index probe per run
        .where(DagRun.dag_id.in_(select(DagModel.dag_id).where(DagModel.dag_id.in_(dag_ids))))
        .group_by(DagRun.dag_id)
        .cte("latest")
    )
    run = DagRun.__table__.alias("run")  # looked up per DAG, through an index: never a pass over every run
    mine = run.c.dag_id == latest.c.dag_id
    older = DagRun.__table__.alias("older")
    fire_before = (
        select(func.max(older.c.logical_date))
        .where(older.c.dag_id == latest.c.dag_id, older.c.logical_date < latest.c.fire)
        .where(older.c.run_type == DagRunType.SCHEDULED)
        .correlate(latest)  # two levels down: not found by SQLAlchemy's own correlation
        .scalar_subquery()
    )
    newest_failed = or_(latest.c.last_ok.is_(None), latest.c.last_end > latest.c.last_ok)
    since_ok = or_(latest.c.last_ok.is_(None), run.c.end_date > latest.c.last_ok)
    failures = select(func.count()).where(mine, run.c.state == DagRunState.FAILED.value, run.c.end_date.is_not(None))
    # The newest finished run's state is the state whose newest end is the newest end (ties: the greatest).
    ended = [(latest.c[f"end_{state}"] == latest.c.last_end, state) for state in sorted(_STATES, reverse=True)]
    return select(
        latest.c.dag_id,
        case(*ended, else_=None).label("outcome"),
        select(func.max(run.c.id)).where(mine, run.c.run_after == latest.c.newest).scalar_subquery().label("newest_id"),
        select(run.c.id).where(mine, run.c.logical_date == latest.c.fire).scalar_subquery().label("fire_id"),
        select(run.c.id).where(mine, run.c.logical_date == fire_before).scalar_subquery().label("before_id"),
        case((newest_failed, failures.where(since_ok).scalar_subquery()), else_=0).label("failed"),
    )  # fmt: skip


def run_picks(session: Session, scope: Scope, dag_ids: Iterable[str]) -> list[Row]:
    """Per DAG of ``dag_ids`` in scope (with a row in ``dag``) and with runs: its picks, in one query.

    Each row: ``dag_id``, ``outcome`` (the newest finished run's state), ``newest_id``, ``fire_id``,
    ``before_id`` (the run primary keys of its newest run, newest fire and the fire before) and
    ``failed`` (failed runs since the newest that did not fail, when the newest finished one failed).
    """
    ids = scope.only(dag_ids)
    return list(session.execute(_picks(ids))) if ids else []


def runs_by_pk(session: Session, scope: Scope, columns: tuple[Any, ...], pks: Collection[int]) -> list[Row]:
    """``columns`` (and the DAG id) of the runs whose primary keys are ``pks``, of DAGs in scope only."""
    if not pks:
        return []
    rows = session.execute(select(*columns, DagRun.id).where(DagRun.id.in_(sorted(pks))))
    return [row for row in rows if scope.allows(row.dag_id)]


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


# -- task instances and pools ------------------------------------------------------------------------


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
    rows = session.execute(select(*_TASK_COLUMNS).where(*where).order_by(TaskInstance.task_id).limit(limit))
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
    rows = session.scalars(
        select(XComModel)
        .where(XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == key)
        .order_by(XComModel.task_id, XComModel.map_index)
        .limit(limit)
    )
    return [(row.task_id, XComModel.deserialize_value(row)) for row in rows]


# -- the audit log -----------------------------------------------------------------------------------


def audit_entries(
    session: Session,
    scope: Scope,
    dag_id: str,
    event: str,
    *,
    at: datetime.datetime,
    until: datetime.datetime,
    after_limit: int = 10,
) -> tuple[list[Row], list[Row]]:
    """``dag_id``'s newest ``event`` entry at or before ``at``, and those after it up to ``until``.

    Rows of ``(id, dttm, extra)``, the ones after ``at`` oldest first, at most ``after_limit``.
    """
    if not scope.allows(dag_id):
        return [], []
    columns = (Log.id, Log.dttm, Log.extra)
    mine = and_(Log.dag_id == dag_id, Log.event == event)
    before = select(*columns).where(mine, Log.dttm <= at).order_by(Log.dttm.desc(), Log.id.desc()).limit(1)
    after = select(*columns).where(mine, Log.dttm > at, Log.dttm <= until).order_by(Log.dttm, Log.id)
    return list(session.execute(before)), list(session.execute(after.limit(after_limit)))


def oldest_audit_entry(session: Session) -> datetime.datetime | None:
    """When Airflow's audit log starts (``airflow db clean`` removes older entries); index ``idx_log_dttm``.

    Not scoped: an instant of the whole log, which names no DAG.
    """
    return session.scalar(select(func.min(Log.dttm)))


# -- import errors -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportErrorRow:
    """A file's import error, its text shown only to a caller who may read every DAG of the file."""

    id: int
    bundle_name: str | None
    filename: str
    stacktrace: str | None
    """None: the file defines a DAG the caller may not read (its traceback may quote any of them)."""
    dag_ids: list[str]
    """The file's DAGs the caller may read."""


def _file_dags(session: Session, files: set[tuple[Any, str]]) -> dict[tuple[Any, str], set[str]]:
    """The DAGs of each ``(bundle, file)``, in one query."""
    if not files:
        return {}
    found: dict[tuple[Any, str], set[str]] = {}
    for bundle, file, dag_id in session.execute(
        select(DagModel.bundle_name, DagModel.relative_fileloc, DagModel.dag_id).where(
            tuple_(DagModel.bundle_name, DagModel.relative_fileloc).in_(sorted(files, key=str))
        )
    ):
        found.setdefault((bundle, file), set()).add(dag_id)
    return found


def import_errors(session: Session, scope: Scope, *where: ColumnElement[bool]) -> list[ImportErrorRow]:
    """The import errors matching ``where``, by file; two queries (the errors, their files' DAGs)."""
    rows = session.execute(
        select(
            ParseImportError.id,
            ParseImportError.bundle_name,
            ParseImportError.filename,
            ParseImportError.stacktrace,
        )
        .where(*where)
        .order_by(ParseImportError.filename, ParseImportError.id)
    ).all()
    in_files = _file_dags(session, {(bundle, file) for _, bundle, file, _ in rows})
    found = []
    for error_id, bundle, file, stacktrace in rows:
        dags = in_files.get((bundle, file), set())
        shown = all(scope.allows(dag_id) for dag_id in dags)
        found.append(ImportErrorRow(error_id, bundle, file, stacktrace if shown else None, scope.only(dags)))
    return found
