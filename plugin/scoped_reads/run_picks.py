"""A status's run history, for any number of DAGs in one query, of the DAGs in the caller's scope only."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import CTE, Case, Row, Select, and_, case, func, null, or_, select, text

from .scope import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


_STATES = tuple(state.value for state in DagRunState)
"""The states a run can end in (Airflow resets ``end_date`` when a run is queued or run again)."""


def _latest(dag_ids: list[str]) -> CTE:
    """The one grouped pass over the runs of ``dag_ids``: per DAG, the newest instants the picks start from.

    Each DAG's latest ``run_after``, its newest scheduled run's logical date (``fire``), its latest
    ``end_date``, the latest of a run that did not fail, and the latest end of each state.
    """
    scheduled = DagRun.run_type == DagRunType.SCHEDULED
    failed = DagRun.state == DagRunState.FAILED.value
    return (
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


def _outcome(latest: CTE) -> Case[Any]:
    """The newest finished run's state: the state whose newest end is the newest end (ties: the greatest)."""
    ended = [(latest.c[f"end_{state}"] == latest.c.last_end, state) for state in sorted(_STATES, reverse=True)]
    return case(*ended, else_=None)


def _pick_columns(latest: CTE) -> list[Any]:
    """Per DAG of ``latest``: its newest run, newest fire and the fire before (their ids), and its failures.

    The ``dag_run`` table has no index on ``(dag_id, run_after)``, so ranking the runs of 1,000 DAGs
    means sorting all of them (a second on PostgreSQL for 50,000 runs). Instead the query makes one
    grouped pass over the runs (:func:`_latest`), then reads the few rows those name: the fire
    before the last is found through Airflow's unique index on ``(dag_id, logical_date)``, and the
    failures in a row are the failed runs that finished after the newest one that did not fail
    (there are none in between, by definition), counted only for the DAGs whose newest finished
    run failed.
    """
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
    return [
        select(func.max(run.c.id)).where(mine, run.c.run_after == latest.c.newest).scalar_subquery().label("newest_id"),
        select(run.c.id).where(mine, run.c.logical_date == latest.c.fire).scalar_subquery().label("fire_id"),
        select(run.c.id).where(mine, run.c.logical_date == fire_before).scalar_subquery().label("before_id"),
        case((newest_failed, failures.where(since_ok).scalar_subquery()), else_=0).label("failed"),
    ]  # fmt: skip


def _picks(dag_ids: list[str]) -> Select:
    """Per DAG: its outcome and :func:`_pick_columns`, from one grouped pass over the runs (:func:`_latest`)."""
    latest = _latest(dag_ids)
    return select(latest.c.dag_id, _outcome(latest).label("outcome"), *_pick_columns(latest))


_JIT_OFF = "tessera: jit off in"
"""Where a session notes the transaction it turned JIT off in (``session.info``)."""


def _without_jit(session: Session) -> None:
    """Plan the rest of this transaction's statements without PostgreSQL's JIT compiler (no other database has one).

    PostgreSQL compiles a statement to machine code when its estimated cost passes ``jit_above_cost``
    (100,000 by default). The grouped passes here cross it at a few thousand DAGs (the picks of a
    page's 1,000 listed DAGs of a 3,000-DAG fleet: cost 106,000) although they run in tens of
    milliseconds: the compiling took 86 to 178 ms of a 159 to 292 ms statement, and 69 to 81 ms
    without it. ``SET LOCAL`` ends with the transaction (the request's); it changes no answer.
    """
    if session.get_bind().dialect.name != "postgresql":
        return
    began = session.get_transaction()
    if began is not None and session.info.get(_JIT_OFF) is began:
        return  # turned off already in this transaction (a page reads the runs twice)
    session.execute(text("SET LOCAL jit = off"))
    session.info[_JIT_OFF] = session.get_transaction()


def run_picks(session: Session, scope: Scope, dag_ids: Iterable[str]) -> list[Row]:
    """Per DAG of ``dag_ids`` in scope (with a row in ``dag``) and with runs: its picks, in one query.

    Each row: ``dag_id``, ``outcome`` (the newest finished run's state), ``newest_id``, ``fire_id``,
    ``before_id`` (the run primary keys of its newest run, newest fire and the fire before) and
    ``failed`` (failed runs since the newest that did not fail, when the newest finished one failed).
    """
    ids = scope.only(dag_ids)
    if not ids:
        return []
    _without_jit(session)
    return list(session.execute(_picks(ids)))


QUEUED_FIRE = ("run_id", "data_interval_start", "data_interval_end")
"""What :func:`outcomes_and_queued` reads of a DAG's newest fire when it has not started: its schedule facts."""


PICKED = ("newest_id", "fire_id", "before_id", "failed")
"""What :func:`outcomes_and_queued` reads of the DAGs it is told a page lists: :func:`run_picks`' columns."""


def outcomes_and_queued(
    session: Session, scope: Scope, dag_ids: Iterable[str], *, picked: Collection[str] = ()
) -> list[Row]:
    """Per DAG of ``dag_ids`` in scope (with a row in ``dag``) and with runs: what every DAG's verdict needs.

    Each row: ``dag_id``, ``outcome`` (as :func:`run_picks` says it) and, when the DAG's newest fire
    (the run :func:`run_picks` names ``fire_id``) has not started, its :data:`QUEUED_FIRE` columns
    (null otherwise). The same grouped pass over the runs as :func:`run_picks`, then one probe of
    Airflow's unique index on ``(dag_id, logical_date)`` per column: none of the picks' other
    lookups (the newest run, the fire before, the failures in a row), which only a listed row shows.

    ``picked``: the DAGs a page lists, when it knows them before their runs are read (its order does
    not depend on them): their rows also hold :func:`run_picks`' :data:`PICKED` columns (null for the
    others), so one grouped pass serves both, and a row read here is what :func:`run_picks` reads.
    """
    ids = scope.only(dag_ids)
    if not ids:
        return []
    _without_jit(session)
    latest = _latest(ids)
    run = DagRun.__table__.alias("run")
    queued = and_(run.c.dag_id == latest.c.dag_id, run.c.logical_date == latest.c.fire, run.c.start_date.is_(None))
    # A scalar probe per column, not a join: PostgreSQL joins 3,000 DAGs to their fires by a pass over every run.
    fire = [select(run.c[name]).where(queued).scalar_subquery().label(name) for name in QUEUED_FIRE]
    listed = scope.only(picked)
    # CASE evaluates the lookups of the listed DAGs only (an empty list: no lookup, null columns)
    picks = [
        case((latest.c.dag_id.in_(listed), column), else_=None).label(name) if listed else null().label(name)
        for name, column in zip(PICKED, _pick_columns(latest), strict=True)
    ]
    return list(session.execute(select(latest.c.dag_id, _outcome(latest).label("outcome"), *fire, *picks)))


def runs_by_pk(session: Session, scope: Scope, columns: tuple[Any, ...], pks: Collection[int]) -> list[Row]:
    """``columns`` (and the DAG id) of the runs whose primary keys are ``pks``, of DAGs in scope only."""
    if not pks:
        return []
    rows = session.execute(select(*columns, DagRun.id).where(DagRun.id.in_(sorted(pks))))
    return [row for row in rows if scope.allows(row.dag_id)]
