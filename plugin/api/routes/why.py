"""``GET /api/v1/dags/{dag_id}/why?at=T``: did the DAG run at or around T, and why (or why not)?

Any DAG, tessera-scheduled or not. The answer shows runs, audit-log entries (pauses, recorded
skips, parse states) and scheduler jobs, so the caller must be allowed to read the DAG's runs
and its audit log, as Airflow's own ``/api/v2`` asks for each; an import error's text is shown
only to a caller who may read every DAG of its file. No body is read; ``at`` is bounded.
"""

from __future__ import annotations

import datetime
from typing import Annotated

from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep, requires_access_dag
from fastapi import Depends, Query
from pydantic import AfterValidator

from ..inputs import SUPPORTED_FROM, SUPPORTED_RANGE, SUPPORTED_UNTIL
from ..scoped_reads import Scope
from ..why import explain
from ..why_models import WhyAnswer
from .access import read_runs, readable
from .guarded import ONE_DAG, guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["why"], responses=SIGNED_IN)

read_audit_log = Depends(requires_access_dag(method="GET", access_entity=DagAccessEntity.AUDIT_LOG))
"""Read the DAG's audit log (the pause changes and recorded skips the answer cites)."""


def _check_at(moment: datetime.datetime | None) -> datetime.datetime | None:
    if moment is None:
        return None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(
            f"`at`: {moment.isoformat()} has no timezone; give one, e.g. 'Z' or '+01:00' (supported: {SUPPORTED_RANGE})"
        )
    if not SUPPORTED_FROM <= moment < SUPPORTED_UNTIL:
        raise ValueError(f"`at`: {moment.isoformat()} is outside the supported range {SUPPORTED_RANGE}")
    return moment


At = Annotated[
    datetime.datetime | None,
    Query(description=f"The instant asked about (default now); {SUPPORTED_RANGE}, with a timezone."),
    AfterValidator(_check_at),
]


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
