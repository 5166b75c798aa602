"""``POST /api/v1/dags/{dag_id}/refresh`` (run now, join or coalesce) and ``GET`` (the live and last run)."""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from airflow.utils.types import DagRunTriggeredByType
from fastapi import Depends, Request, Response, status

from tessera.plugin.actions.models import RefreshRequest, RefreshResponse, RefreshStatus
from tessera.plugin.actions.refresh import refresh
from tessera.plugin.actions.refresh_status import refresh_response, refresh_status
from tessera.plugin.fleet.schedules import scheduled_model

from ..inputs import body_openapi, json_object_body
from .access import DagBagDep, read_runs, trigger_runs
from .audit import audited
from .guarded import ONE_DAG, guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["refresh"], responses=SIGNED_IN)


@route(
    router,
    "POST",
    "/api/v1/dags/{dag_id}/refresh",
    scope=one_dag("create the DAG's runs", trigger_runs),
    budget=ONE_DAG,
    status_code=status.HTTP_200_OK,
    responses={
        201: {"model": RefreshResponse, "description": "A new run was started."},
        **refusals(400, 404, 409, 413, 415, 503),
    },
    # After the scope's authorization: refuse a body that is not a JSON object (before the
    # action log parses it), then log the action.
    dependencies=[Depends(json_object_body(RefreshRequest)), audited("tessera_refresh")],
    openapi_extra=body_openapi(RefreshRequest),
)
def post_refresh(
    dag_id: str, request: Request, response: Response, user: GetUserDep, session: SessionDep, dag_bag: DagBagDep
) -> RefreshResponse:
    """Run the DAG now, unless a run is in flight (joined) or succeeded within 60 s (coalesced).

    The body is an empty JSON object, ``{}``, sent as ``application/json``.
    """
    surface = DagRunTriggeredByType.UI if request.headers.get("referer") else DagRunTriggeredByType.REST_API
    decision = refresh(dag_id, user=user, triggered_by=surface, dag_bag=dag_bag)
    session.expire_all()  # the decision committed in its own transaction
    if decision.outcome == "started":
        response.status_code = status.HTTP_201_CREATED
    return refresh_response(dag_id, decision, session)


@route(
    router,
    "GET",
    "/api/v1/dags/{dag_id}/refresh",
    scope=one_dag("read the DAG's runs", read_runs),
    budget=ONE_DAG,
    responses=refusals(404),
)
def get_refresh(dag_id: str, session: SessionDep) -> RefreshStatus:
    """The live run (whatever started it), the newest finished one, their DAG versions and receipts."""
    scheduled_model(session, dag_id)
    return refresh_status(dag_id, session)
