"""The runs a status reads, for any number of DAGs in one query.

A status needs, per DAG: its two newest scheduled runs (the last fire and the one before it,
for missed ticks), its newest run of any kind, and what its newest finished runs came to (the
last outcome, and how many of the newest 100 failed in a row). Asked DAG by DAG that is three
queries a DAG; here it is one query over all the DAGs asked for, so a page of 1,000 DAGs costs
the same round trip as a page of one.

The ``dag_run`` table has no index on ``(dag_id, run_after)``, so ranking the runs of 1,000 DAGs
means sorting all of them (a second on PostgreSQL for 50,000 runs). Instead the query makes one
grouped pass over the runs (each DAG's latest ``run_after``, its newest scheduled run's logical
date, its latest ``end_date``, and the latest of a run that did not fail), then reads the few
rows those name: the fire before the last is found through Airflow's unique index on
``(dag_id, logical_date)``, and the failures in a row are the failed runs that finished after
the newest one that did not fail (there are none in between, by definition), counted only for
the DAGs whose newest finished run failed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import Row, Select, case, func, or_, select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

FAILURE_HISTORY = 100
"""How many of the newest finished runs ``consecutive_failures`` counts within."""


RUN_COLUMNS = (
    DagRun.dag_id,
    DagRun.run_id,
    DagRun.run_type,
    DagRun.state,
    DagRun.triggered_by,
    DagRun.run_after,
    DagRun.start_date,
    DagRun.end_date,
    DagRun.data_interval_start,
    DagRun.data_interval_end,
)
"""What a status reads of a run: read as plain rows, not as ORM objects (a tenth of the cost for 3,000 runs)."""


@dataclass(frozen=True)
class RunHistory:
    """What one DAG's status reads of its runs (rows with the attributes of :data:`RUN_COLUMNS`)."""

    fires: list[Row] = field(default_factory=list)
    """The two newest scheduled runs (by logical date: the windows they evaluate), newest first."""
    last_run: Row | None = None
    """The newest run of any kind (by ``run_after``, then id)."""
    last_outcome: str | None = None
    """The state of the newest finished run (by ``end_date``)."""
    consecutive_failures: int = 0
    """How many of the newest finished runs failed before one did not (within the newest 100)."""


_STATES = tuple(state.value for state in DagRunState)
"""The states a run can end in (Airflow resets ``end_date`` when a run is queued or run again)."""


def _picks(dag_ids: list[str]) -> Select:
    """Per DAG: its newest run, newest fire and the fire before (their ids), its outcome's ends and failures."""
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


def _history(pick: Row, runs: dict[int, Row]) -> RunHistory:
    """One DAG's history from its picks and the runs they name."""
    fires = [runs[run_id] for run_id in (pick.fire_id, pick.before_id) if run_id in runs]
    return RunHistory(fires, runs.get(pick.newest_id), pick.outcome, min(pick.failed or 0, FAILURE_HISTORY))


def run_histories(session: Session, dag_ids: Collection[str]) -> dict[str, RunHistory]:
    """The run history of each of ``dag_ids``, DAGs with a row in ``dag`` (an empty one for a DAG without runs)."""
    ids = sorted(set(dag_ids))
    if not ids:
        return {}
    picks = {pick.dag_id: pick for pick in session.execute(_picks(ids))}
    named = {run_id for pick in picks.values() for run_id in (pick.newest_id, pick.fire_id, pick.before_id) if run_id}
    runs = {run.id: run for run in session.execute(select(*RUN_COLUMNS, DagRun.id).where(DagRun.id.in_(named)))}
    return {dag_id: _history(picks[dag_id], runs) if dag_id in picks else RunHistory() for dag_id in ids}
