"""``GET /api/v1/dags/{dag_id}/why?at=T``: did the DAG run at or around T, and why (or why not)?

Any DAG, tessera-scheduled or not. The answer shows runs, audit-log entries (pauses, recorded
skips, parse states) and scheduler jobs, so the caller must be allowed to read the DAG's runs
and its audit log, as Airflow's own ``/api/v2`` asks for each; an import error's text is shown
only to a caller who may read every DAG of its file. No body is read; ``at`` is ISO 8601 text with a
timezone in the supported range, as every instant a route takes.
"""

from __future__ import annotations

from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep, requires_access_dag
from fastapi import Depends

from tessera.plugin.scoped_reads import Scope

from ...explainer import WhyAnswer, explain
from ..inputs import At
from .access import read_runs, readable
from .guarded import ONE_DAG, guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["why"], responses=SIGNED_IN)

read_audit_log = Depends(requires_access_dag(method="GET", access_entity=DagAccessEntity.AUDIT_LOG))
"""Read the DAG's audit log (the pause changes and recorded skips the answer cites)."""


@route(
    router,
    "GET",
    "/api/v1/dags/{dag_id}/why",
    scope=one_dag("read the DAG's runs and audit log", read_runs, read_audit_log),
    budget=ONE_DAG,
    responses=refusals(404),
)
def get_why(dag_id: str, session: SessionDep, user: GetUserDep, at: At = None) -> WhyAnswer:
    """One verdict sentence, then the evidence: what the schedule decided, what Airflow did, what happens next."""
    return explain(session, dag_id, at=at, scope=Scope.of_caller(lambda: readable(user), route_dag=dag_id))
