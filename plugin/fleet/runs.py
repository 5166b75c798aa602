"""The runs a status reads, for any number of DAGs in one query.

A status needs, per DAG: its two newest scheduled runs (the last fire and the one before it,
for missed ticks), its newest run of any kind, and what its newest finished runs came to (the
last outcome, and how many of the newest 100 failed in a row). Asked DAG by DAG that is three
queries a DAG; here it is one query over all the DAGs asked for, so a page of 1,000 DAGs costs
the same round trip as a page of one.

The query is :func:`~tessera.plugin.scoped_reads.run_picks` (how it avoids sorting every run
is told there): the caller's scope decides which DAGs' runs it reads.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow.models.dagrun import DagRun
from sqlalchemy import Row

from ..scoped_reads import Scope, run_picks, runs_by_pk

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


def _history(pick: Row, runs: dict[int, Row]) -> RunHistory:
    """One DAG's history from its picks and the runs they name."""
    fires = [runs[run_id] for run_id in (pick.fire_id, pick.before_id) if run_id in runs]
    return RunHistory(fires, runs.get(pick.newest_id), pick.outcome, min(pick.failed or 0, FAILURE_HISTORY))


def run_histories(session: Session, scope: Scope, dag_ids: Collection[str]) -> dict[str, RunHistory]:
    """The run history of each of ``dag_ids`` the caller may read (an empty one for a DAG without runs)."""
    ids = scope.only(dag_ids)
    return histories_of(session, scope, ids, run_picks(session, scope, ids))


def histories_of(
    session: Session, scope: Scope, dag_ids: Collection[str], picked: Iterable[Row]
) -> dict[str, RunHistory]:
    """The run history of each of ``dag_ids`` the caller may read, from their picks read already.

    ``picked``: :func:`~tessera.plugin.scoped_reads.run_picks`' rows of ``dag_ids`` (or
    ``outcomes_and_queued``'s, which hold the same columns for the DAGs it was told a page lists);
    a DAG without one has no runs. One more read: the runs they name.
    """
    ids = scope.only(dag_ids)
    wanted = set(ids)
    picks = {pick.dag_id: pick for pick in picked if pick.dag_id in wanted}
    named = {run_id for pick in picks.values() for run_id in (pick.newest_id, pick.fire_id, pick.before_id) if run_id}
    runs = {run.id: run for run in runs_by_pk(session, scope, RUN_COLUMNS, named)}
    return {dag_id: _history(picks[dag_id], runs) if dag_id in picks else RunHistory() for dag_id in ids}
