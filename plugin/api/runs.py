"""The runs a status reads, for any number of DAGs in two grouped queries.

A status needs, per DAG: its two newest scheduled runs (the last fire and the one
before it, for missed ticks), its newest run of any kind, and what its newest finished
runs came to (the last outcome, and how many of the newest 100 failed in a row). Asked
DAG by DAG that is three queries a DAG; here each is a window over all the DAGs asked
for (``ROW_NUMBER() OVER (PARTITION BY dag_id ...)``, in SQLite and PostgreSQL alike),
so a page of 1,000 DAGs costs the same two round trips as a page of one.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow.models.dagrun import DagRun
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import and_, case, func, or_, select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

FAILURE_HISTORY = 100
"""How many of the newest finished runs ``consecutive_failures`` counts within."""


@dataclass(frozen=True)
class RunHistory:
    """What one DAG's status reads of its runs."""

    fires: list[DagRun] = field(default_factory=list)
    """The two newest scheduled runs (by ``run_after``), newest first."""
    last_run: DagRun | None = None
    """The newest run of any kind (by ``run_after``, then id)."""
    last_outcome: str | None = None
    """The state of the newest finished run (by ``end_date``)."""
    consecutive_failures: int = 0
    """How many of the newest finished runs failed before one did not (within the newest 100)."""


def _newest_runs(session: Session, dag_ids: list[str]) -> dict[str, tuple[list[DagRun], DagRun | None]]:
    scheduled = DagRun.run_type == DagRunType.SCHEDULED
    ranked = (
        select(
            DagRun.id,
            func.row_number()
            .over(partition_by=DagRun.dag_id, order_by=(DagRun.run_after.desc(), DagRun.id.desc()))
            .label("newest"),
            func.row_number()
            .over(partition_by=(DagRun.dag_id, scheduled), order_by=DagRun.run_after.desc())
            .label("newest_of_kind"),
        )
        .where(DagRun.dag_id.in_(dag_ids))
        .subquery()
    )
    rows = session.execute(
        select(DagRun, ranked.c.newest, ranked.c.newest_of_kind)
        .join(ranked, ranked.c.id == DagRun.id)
        .where(or_(ranked.c.newest == 1, and_(scheduled, ranked.c.newest_of_kind <= 2)))
        .order_by(DagRun.dag_id, ranked.c.newest)
    )
    found: dict[str, tuple[list[DagRun], DagRun | None]] = {}
    for run, newest, newest_of_kind in rows:
        fires, last = found.get(run.dag_id, ([], None))
        if newest == 1:
            last = run
        if run.run_type == DagRunType.SCHEDULED and newest_of_kind <= 2:
            fires.append(run)  # in order of `newest`, which orders scheduled runs as `newest_of_kind` does
        found[run.dag_id] = (fires, last)
    return found


def _outcomes(session: Session, dag_ids: list[str]) -> dict[str, tuple[str | None, int]]:
    ranked = (
        select(
            DagRun.dag_id,
            DagRun.state,
            func.row_number().over(partition_by=DagRun.dag_id, order_by=DagRun.end_date.desc()).label("newest"),
        )
        .where(DagRun.dag_id.in_(dag_ids), DagRun.end_date.is_not(None))
        .subquery()
    )
    not_failed = or_(ranked.c.state.is_(None), ranked.c.state != DagRunState.FAILED.value)
    rows = session.execute(
        select(
            ranked.c.dag_id,
            func.max(case((ranked.c.newest == 1, ranked.c.state))),
            func.min(case((not_failed, ranked.c.newest))),
            func.count(),
        )
        .where(ranked.c.newest <= FAILURE_HISTORY)
        .group_by(ranked.c.dag_id)
    )
    found = {}
    for dag_id, last_state, first_not_failed, finished in rows:
        failures = finished if first_not_failed is None else first_not_failed - 1
        found[dag_id] = (None if last_state is None else str(last_state), failures)
    return found


def run_histories(session: Session, dag_ids: Collection[str]) -> dict[str, RunHistory]:
    """The run history of each of ``dag_ids`` (an empty one for a DAG without runs)."""
    ids = sorted(set(dag_ids))
    if not ids:
        return {}
    newest, outcomes = _newest_runs(session, ids), _outcomes(session, ids)
    histories = {}
    for dag_id in ids:
        fires, last = newest.get(dag_id, ([], None))
        last_outcome, failures = outcomes.get(dag_id, (None, 0))
        histories[dag_id] = RunHistory(fires, last, last_outcome, failures)
    return histories
