"""``GET /api/v1/status`` and ``GET /api/v1/dags/{dag_id}/status``: fires, lateness, outcome and conditions."""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep

from tessera.plugin.cancellation import each
from tessera.plugin.errors import NotFound
from tessera.plugin.fleet.broken_rows import broken_status, with_broken_statuses
from tessera.plugin.fleet.contradictions import all_contradictions
from tessera.plugin.fleet.models import DagStatus, StatusResponse
from tessera.plugin.fleet.pause_notes import with_pause_notes
from tessera.plugin.fleet.row_errors import status_row
from tessera.plugin.fleet.runs import run_histories
from tessera.plugin.fleet.schedules import scheduled_dag, scheduled_dags
from tessera.plugin.fleet.status import grouped_reads
from tessera.plugin.scoped_reads import Scope

from ..inputs import MAX_FLEET_DAGS
from .access import read_runs, readable
from .costs import ReadableFleet, readable_fleet
from .guarded import ONE_DAG, READABLE_DAGS, Budget, guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["status"], responses=SIGNED_IN)


@route(
    router,
    "GET",
    "/api/v1/status",
    scope=READABLE_DAGS,
    budget=Budget.estimated("DAGs", MAX_FLEET_DAGS, readable_fleet, how="the DAGs the caller may read"),
)
def get_statuses(session: SessionDep, user: GetUserDep, mine: ReadableFleet) -> StatusResponse:
    """Last and next fire, lateness, last outcome and conditions of every readable tessera DAG."""
    scope = Scope.of(mine)
    contradictions, _ = all_contradictions(session, user, mine)
    items = scheduled_dags(session, readable=mine)
    histories = run_histories(session, scope, [item.dag_id for item in items])
    reads = grouped_reads(items, session, scope)
    rows = [status_row(item, contradictions, histories[item.dag_id], reads) for item in each(items)]
    rows = with_broken_statuses(session, rows, mine)  # broken DAGs keep their rows
    return StatusResponse(dags=with_pause_notes(session, rows))


@route(
    router,
    "GET",
    "/api/v1/dags/{dag_id}/status",
    scope=one_dag("read the DAG's runs", read_runs),
    budget=ONE_DAG,
    responses=refusals(404),
)
def get_status(dag_id: str, session: SessionDep, user: GetUserDep) -> DagStatus:
    """One DAG's status; for a cursor function also its three timestamps and conditions."""
    mine = readable(user)
    try:
        item = scheduled_dag(session, dag_id)
    except NotFound:  # a DAG whose file broke is stale, but keeps its row with the reason
        if (row := broken_status(session, dag_id, mine)) is None:
            raise
        return with_pause_notes(session, [row])[0]
    contradictions, _ = all_contradictions(session, user, {dag_id})
    scope = Scope.of(mine)
    history = run_histories(session, scope, [dag_id])[dag_id]
    row = status_row(item, contradictions, history, grouped_reads([item], session, scope))
    return with_pause_notes(session, with_broken_statuses(session, [row], mine, [dag_id]))[0]
