"""What a refresh shows about a run: who started it, which DAG version it runs, and its receipts.

A task reports a receipt by pushing an XCom under ``tessera_receipt`` (the
``RefreshSQLOperator`` does). Only the metadata fields below are ever read back, so
a task that put more in its XCom cannot leak data through this API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.models.dag_version import DagVersion
from airflow.models.dagrun import DagRun

from ..errors import Conflict
from ..scoped_reads import Scope, run_orm, xcom_values
from .models import Receipt, RefreshResponse, RefreshRun, RefreshStatus
from .refresh import COALESCE_WINDOW, MESSAGES, Decision, in_flight_run, latest_finished_run

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RECEIPT_KEY = "tessera_receipt"
MAX_RECEIPTS = 100
"""Receipts read of one run: a refresh's tasks each push one, and no answer needs more."""


def _number(value: Any, kind: type) -> Any:
    # bool is an int: a receipt's "rows": true must not read as one row.
    if isinstance(value, bool) and kind is not bool:
        return None
    if kind is bool:
        return value if isinstance(value, bool) else None
    return kind(value) if isinstance(value, int | float) else None


def receipts(run: DagRun, session: Session) -> list[Receipt]:
    """The run's receipts, at most :data:`MAX_RECEIPTS`; the run is of the DAG the route authorized."""
    values = xcom_values(session, Scope.of([run.dag_id]), run.dag_id, run.run_id, RECEIPT_KEY, limit=MAX_RECEIPTS)
    found = []
    for task_id, value in values:
        if not isinstance(value, dict):
            continue
        outcome = value.get("outcome")
        found.append(
            Receipt(
                task_id=task_id,
                outcome=outcome if isinstance(outcome, str) else None,
                rows=_number(value.get("rows"), int),
                duration_seconds=_number(value.get("duration_seconds"), float),
                changed=_number(value.get("changed"), bool),
            )
        )
    return found


def refresh_run(run: DagRun, session: Session) -> RefreshRun:
    """``run`` as a refresh reports it, compared with the DAG's newest version."""
    current = DagVersion.get_latest_version(run.dag_id, session=session)
    number = run.version_number
    if number is None and run.created_dag_version is not None:
        number = run.created_dag_version.version_number
    current_number = None if current is None else current.version_number
    return RefreshRun(
        run_id=run.run_id,
        run_type=str(run.run_type),
        state=None if run.state is None else str(run.state),
        triggered_by=getattr(run.triggered_by, "value", run.triggered_by),
        triggering_user=run.triggering_user_name,
        queued_at=run.queued_at,
        start_date=run.start_date,
        end_date=run.end_date,
        dag_version=number,
        bundle_version=run.bundle_version,
        current_dag_version=current_number,
        runs_current_version=None if number is None or current_number is None else number == current_number,
        receipts=receipts(run, session),
    )


def run_by_id(dag_id: str, run_id: str, session: Session) -> DagRun | None:
    """The run ``run_id`` of the DAG the route authorized."""
    found = run_orm(session, Scope.of([dag_id]), dag_id, DagRun.run_id == run_id, order=(DagRun.id,), limit=1)
    return found[0] if found else None


def refresh_response(dag_id: str, decision: Decision, session: Session) -> RefreshResponse:
    """What a refresh answers: its decision and the run it started, joined or coalesced, as committed."""
    run = run_by_id(dag_id, decision.run_id, session)
    if run is None:  # deleted in between: vanishingly rare, but say so rather than fail
        raise Conflict(f"run {decision.run_id!r} disappeared; refresh again")
    return RefreshResponse(
        dag_id=dag_id,
        outcome=decision.outcome,
        message=MESSAGES[decision.outcome],
        run=refresh_run(run, session),
        next_scheduled_run_after=decision.next_scheduled_run_after,
    )


def refresh_status(dag_id: str, session: Session) -> RefreshStatus:
    live = in_flight_run(dag_id, session)
    done = latest_finished_run(dag_id, session)
    return RefreshStatus(
        dag_id=dag_id,
        live_run=None if live is None else refresh_run(live, session),
        latest_finished_run=None if done is None else refresh_run(done, session),
        coalescing_window_seconds=int(COALESCE_WINDOW.total_seconds()),
    )
