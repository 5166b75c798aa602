"""``POST /api/v1/dags/{dag_id}/pause`` and ``/unpause``: Airflow's pause, with a note of why, kept in the audit log."""

from __future__ import annotations

from typing import Annotated

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import Depends

from tessera.plugin.actions.models import PauseRequest, PauseState
from tessera.plugin.actions.pause import pause

from ..inputs import body_openapi, json_object_body
from .access import pause_dags
from .audit import audited
from .guarded import ONE_DAG, guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["pause"], responses=SIGNED_IN)
PAUSE = one_dag("edit the DAG, as Airflow's own pause (PATCH) asks", pause_dags)
_body = json_object_body(PauseRequest)
"""One reader for both uses below: FastAPI then reads and checks the body once per request."""
PauseBody = Annotated[PauseRequest, Depends(_body)]


def _dependencies(event: str) -> list:
    # After the scope's authorization: refuse a body that is not a JSON object, then log the action.
    return [Depends(_body), audited(event)]


@route(
    router,
    "POST",
    "/api/v1/dags/{dag_id}/pause",
    scope=PAUSE,
    budget=ONE_DAG,
    responses=refusals(404, 413, 415),
    dependencies=_dependencies("tessera_pause"),
    openapi_extra=body_openapi(PauseRequest),
)
def post_pause(dag_id: str, user: GetUserDep, session: SessionDep, body: PauseBody) -> PauseState:
    """Pause the DAG and record ``note`` (kept in Airflow's audit log: Browse > Audit Log)."""
    return pause(session, dag_id, paused=True, note=body.note, by=user.get_name())


@route(
    router,
    "POST",
    "/api/v1/dags/{dag_id}/unpause",
    scope=PAUSE,
    budget=ONE_DAG,
    responses=refusals(404, 413, 415),
    dependencies=_dependencies("tessera_unpause"),
    openapi_extra=body_openapi(PauseRequest),
)
def post_unpause(dag_id: str, user: GetUserDep, session: SessionDep, body: PauseBody) -> PauseState:
    """Unpause the DAG and record ``note``; a DAG paused after failed runs then gets its N tries again."""
    return pause(session, dag_id, paused=False, note=body.note, by=user.get_name())
