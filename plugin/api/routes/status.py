"""``GET /api/v1/status`` and ``GET /api/v1/dags/{dag_id}/status``: fires, lateness, outcome and conditions."""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter

from ..contradictions import all_contradictions
from ..models import DagStatus, StatusResponse
from ..row_errors import status_row
from ..runs import run_histories
from ..schedules import scheduled_dag, scheduled_dags
from ..status import parent_fires
from .access import authenticated, read_runs, readable

router = APIRouter(tags=["status"])


@router.get("/api/v1/status", dependencies=[authenticated])
def get_statuses(session: SessionDep, user: GetUserDep) -> StatusResponse:
    """Last and next fire, lateness, last outcome and conditions of every readable tessera DAG."""
    mine = readable(user)
    contradictions, _ = all_contradictions(session, user, mine)
    items = scheduled_dags(session, readable=mine)
    histories = run_histories(session, [item.dag_id for item in items])
    fires = parent_fires(items, session)
    return StatusResponse(
        dags=[status_row(item, contradictions, histories[item.dag_id], fires, session) for item in items]
    )


@router.get("/api/v1/dags/{dag_id}/status", dependencies=[read_runs])
def get_status(dag_id: str, session: SessionDep, user: GetUserDep) -> DagStatus:
    """One DAG's status; for a cursor function also its three timestamps and conditions."""
    item = scheduled_dag(session, dag_id)
    contradictions, _ = all_contradictions(session, user, {dag_id})
    history = run_histories(session, [dag_id])[dag_id]
    return status_row(item, contradictions, history, parent_fires([item], session), session)
