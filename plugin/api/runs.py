"""The runs a status reads, for any number of DAGs in two grouped queries.

A status needs, per DAG: its two newest scheduled runs (the last fire and the one
before it, for missed ticks), its newest run of any kind, and what its newest finished
runs came to (the last outcome, and how many of the newest 100 failed in a row). Asked
DAG by DAG that is three queries a DAG; here each is one query over all the DAGs asked
for, so a page of 1,000 DAGs costs the same two round trips as a page of one.

Both are grouped maxima and counts (hash aggregates), never a window over every run: the
``dag_run`` table has no index on ``(dag_id, run_after)``, so ranking the 50,000 runs of
1,000 DAGs meant sorting them all (a second on PostgreSQL). The newest run is the one at
its DAG's latest ``run_after``; the fire before the last is the latest scheduled one
before the last fire's; the failures in a row are the failed runs that finished after the
newest one that did not fail (there are none in between, by definition).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow.models.dagrun import DagRun
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import Row, and_, case, func, or_, select

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
    """The two newest scheduled runs (by ``run_after``), newest first."""
    last_run: Row | None = None
    """The newest run of any kind (by ``run_after``, then id)."""
    last_outcome: str | None = None
    """The state of the newest finished run (by ``end_date``)."""
    consecutive_failures: int = 0
    """How many of the newest finished runs failed before one did not (within the newest 100)."""


def _newest_runs(session: Session, dag_ids: list[str]) -> dict[str, tuple[list[Row], Row | None]]:
    scheduled = DagRun.run_type == DagRunType.SCHEDULED
    mine = DagRun.dag_id.in_(dag_ids)
    latest = (
        select(
            DagRun.dag_id.label("dag_id"),
            func.max(DagRun.run_after).label("newest"),
            func.max(case((scheduled, DagRun.run_after))).label("fire"),
        )
        .where(mine)
        .group_by(DagRun.dag_id)
        .cte("latest")
    )
    before = (
        select(DagRun.dag_id.label("dag_id"), func.max(DagRun.run_after).label("fire"))
        .join(latest, latest.c.dag_id == DagRun.dag_id)  # the DAGs asked for: no second IN list to plan
        .where(scheduled, DagRun.run_after < latest.c.fire)
        .group_by(DagRun.dag_id)
        .cte("before")
    )
    rows = session.execute(
        select(*RUN_COLUMNS, DagRun.id)
        .join(latest, latest.c.dag_id == DagRun.dag_id)
        .outerjoin(before, before.c.dag_id == DagRun.dag_id)
        .where(
            or_(
                DagRun.run_after == latest.c.newest,
                and_(scheduled, or_(DagRun.run_after == latest.c.fire, DagRun.run_after == before.c.fire)),
            ),
        )
        .order_by(DagRun.dag_id, DagRun.run_after.desc(), DagRun.id.desc())
    )
    found: dict[str, tuple[list[Row], Row | None]] = {}
    for run in rows:  # newest first; of runs that start together, the newest created first
        fires, last = found.get(run.dag_id, ([], None))
        if last is None:
            last = run
        if run.run_type == DagRunType.SCHEDULED and len(fires) < 2:
            fires.append(run)
        found[run.dag_id] = (fires, last)
    return found


def _outcomes(session: Session, dag_ids: list[str]) -> dict[str, tuple[str | None, int]]:
    finished = and_(DagRun.dag_id.in_(dag_ids), DagRun.end_date.is_not(None))
    not_failed = or_(DagRun.state.is_(None), DagRun.state != DagRunState.FAILED.value)
    ends = (
        select(
            DagRun.dag_id.label("dag_id"),
            func.max(DagRun.end_date).label("last"),
            func.max(case((not_failed, DagRun.end_date))).label("last_ok"),
        )
        .where(finished)
        .group_by(DagRun.dag_id)
        .cte("ends")
    )
    after_last_ok = or_(ends.c.last_ok.is_(None), DagRun.end_date >= ends.c.last_ok)
    failed_since = and_(
        DagRun.state == DagRunState.FAILED.value, or_(ends.c.last_ok.is_(None), DagRun.end_date > ends.c.last_ok)
    )
    rows = session.execute(
        select(
            DagRun.dag_id,
            func.max(case((DagRun.end_date == ends.c.last, DagRun.state))),
            func.count(case((failed_since, 1))),
        )
        .join(ends, ends.c.dag_id == DagRun.dag_id)
        .where(DagRun.end_date.is_not(None), after_last_ok)
        .group_by(DagRun.dag_id)
    )
    return {
        dag_id: (None if last_state is None else str(last_state), min(failures, FAILURE_HISTORY))
        for dag_id, last_state, failures in rows
    }


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
