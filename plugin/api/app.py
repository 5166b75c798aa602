"""The tessera REST API and Schedules page, a FastAPI app the Airflow API server mounts at ``/tessera``.

Every route depends on Airflow's own authentication and authorization (whatever
auth manager the deployment runs): a bearer token or the UI's session cookie;
no credential is a 401, a token that is not valid a 403 (as Airflow's own API
answers). Reading a DAG's plan or status needs read access to that DAG; a refresh
needs the right to trigger its runs (a view-only user gets 403) and a JSON body, so a
form on another site cannot start runs with the UI's session (see
:mod:`tessera.plugin.api.inputs`). Lists show only the DAGs the caller may read; a DAG
whose plan or status cannot be computed is listed with its error (see
:mod:`tessera.plugin.api.row_errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow._shared.timezones.timezone import utcnow
from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
from airflow.api_fastapi.common.dagbag import create_dag_bag
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep, requires_access_dag, requires_authenticated
from airflow.api_fastapi.logging.decorators import action_logging
from airflow.models.dag import DagModel
from airflow.utils.types import DagRunTriggeredByType
from fastapi import Depends, FastAPI, HTTPException, Request, Response, status
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from .contradictions import all_contradictions
from .inputs import REFRESH_BODY_OPENAPI, After, Count, Until, refresh_body
from .models import DagPlan, DagStatus, PlanResponse, RefreshResponse, RefreshStatus, StatusResponse
from .refresh import MESSAGES, refresh
from .refresh_status import refresh_run, refresh_status, run_by_id
from .row_errors import plan_row, status_row
from .schedules import ScheduledDag, scheduled_dags

UI_DIR = Path(__file__).resolve().parent.parent / "ui"  # plugin/ui, beside this package
UI_ASSETS = {"schedules.js": "text/javascript", "schedules.css": "text/css", "icon.svg": "image/svg+xml"}

read_dag = Depends(requires_access_dag(method="GET"))
read_runs = Depends(requires_access_dag(method="GET", access_entity=DagAccessEntity.RUN))
trigger_runs = Depends(requires_access_dag(method="POST", access_entity=DagAccessEntity.RUN))
authenticated = Depends(requires_authenticated())


def _readable(user: Any) -> set[str]:
    return get_auth_manager().get_authorized_dag_ids(user=user, method="GET")


def _one(request: Request, session: SessionDep, user: Any, dag_id: str) -> ScheduledDag:
    found = scheduled_dags(session, request.app.state.dag_bag, readable=_readable(user), dag_id=dag_id)
    if not found:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"dag_id: {dag_id!r} is not a tessera-scheduled DAG")
    return found[0]


def create_app() -> FastAPI:
    """Build the app (the API server calls this once per worker, on the first request)."""
    app = FastAPI(
        title="Tessera",
        version="1",
        description="Plans, status and on-demand refresh of tessera-scheduled DAGs.",
        openapi_url=None,  # served below, behind authentication like every other route
        docs_url=None,
        redoc_url=None,
    )
    app.state.dag_bag = create_dag_bag()

    @app.get("/openapi.json", include_in_schema=False, dependencies=[authenticated])
    def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/api/v1/plan", tags=["plan"], dependencies=[authenticated])
    def get_plans(
        request: Request,
        session: SessionDep,
        user: GetUserDep,
        count: Count = 10,
        after: After = None,
        until: Until = None,
    ) -> PlanResponse:
        """The next runs of every tessera DAG the caller may read, and every contradiction."""
        readable = _readable(user)
        dag_bag = request.app.state.dag_bag
        contradictions, check = all_contradictions(session, dag_bag, user, readable)
        start = after or utcnow()
        plans = [
            plan_row(item, after=start, count=count, until=until, contradictions=contradictions)
            for item in scheduled_dags(session, dag_bag, readable=readable)
        ]
        return PlanResponse(dags=plans, contradictions=contradictions, plan_check=check)

    @app.get("/api/v1/dags/{dag_id}/plan", tags=["plan"], dependencies=[read_dag])
    def get_plan(
        dag_id: str,
        request: Request,
        session: SessionDep,
        user: GetUserDep,
        count: Count = 10,
        after: After = None,
        until: Until = None,
    ) -> DagPlan:
        """The next runs of one DAG: run-after, window, phase, timezone, summary, contradictions."""
        item = _one(request, session, user, dag_id)
        contradictions, _ = all_contradictions(session, request.app.state.dag_bag, user, {dag_id})
        return plan_row(item, after=after or utcnow(), count=count, until=until, contradictions=contradictions)

    @app.get("/api/v1/status", tags=["status"], dependencies=[authenticated])
    def get_statuses(request: Request, session: SessionDep, user: GetUserDep) -> StatusResponse:
        """Last and next fire, lateness, last outcome and conditions of every readable tessera DAG."""
        readable = _readable(user)
        dag_bag = request.app.state.dag_bag
        contradictions, _ = all_contradictions(session, dag_bag, user, readable)
        items = scheduled_dags(session, dag_bag, readable=readable)
        return StatusResponse(dags=[status_row(item, contradictions, session) for item in items])

    @app.get("/api/v1/dags/{dag_id}/status", tags=["status"], dependencies=[read_runs])
    def get_status(dag_id: str, request: Request, session: SessionDep, user: GetUserDep) -> DagStatus:
        """One DAG's status; for a cursor function also its three timestamps and conditions."""
        item = _one(request, session, user, dag_id)
        contradictions, _ = all_contradictions(session, request.app.state.dag_bag, user, {dag_id})
        return status_row(item, contradictions, session)

    @app.post(
        "/api/v1/dags/{dag_id}/refresh",
        tags=["refresh"],
        status_code=status.HTTP_200_OK,
        responses={
            201: {"description": "A new run was started."},
            409: {"description": "The DAG is paused."},
            415: {"description": "The body is not application/json (e.g. a form posted from another site)."},
        },
        # In this order: authorize, then refuse a body that is not a JSON object (before the
        # action log parses it), then log the action.
        dependencies=[trigger_runs, Depends(refresh_body), Depends(action_logging(event="tessera_refresh"))],
        openapi_extra=REFRESH_BODY_OPENAPI,
    )
    def post_refresh(
        dag_id: str, request: Request, response: Response, user: GetUserDep, session: SessionDep
    ) -> RefreshResponse:
        """Run the DAG now, unless a run is in flight (joined) or succeeded within 60 s (coalesced).

        The body is an empty JSON object, ``{}``, sent as ``application/json``.
        """
        if (error := _one(request, session, user, dag_id).error) is not None:
            raise HTTPException(
                status.HTTP_400_BAD_REQUEST,
                f"dag_id: {dag_id!r} cannot be refreshed, {error}; fix the DAG file so it is parsed again",
            )
        surface = DagRunTriggeredByType.UI if request.headers.get("referer") else DagRunTriggeredByType.REST_API
        decision = refresh(dag_id, user=user, triggered_by=surface, dag_bag=request.app.state.dag_bag)
        session.expire_all()  # the decision committed in its own transaction
        run = run_by_id(dag_id, decision.run_id, session)
        if run is None:  # deleted in between: vanishingly rare, but say so rather than fail
            raise HTTPException(status.HTTP_409_CONFLICT, f"run {decision.run_id!r} disappeared; refresh again")
        if decision.outcome == "started":
            response.status_code = status.HTTP_201_CREATED
        model = session.get(DagModel, dag_id)
        return RefreshResponse(
            dag_id=dag_id,
            outcome=decision.outcome,
            message=MESSAGES[decision.outcome],
            run=refresh_run(run, session),
            next_scheduled_run_after=None if model is None else model.next_dagrun_create_after,
        )

    @app.get("/api/v1/dags/{dag_id}/refresh", tags=["refresh"], dependencies=[read_runs])
    def get_refresh(dag_id: str, request: Request, session: SessionDep, user: GetUserDep) -> RefreshStatus:
        """The live run (whatever started it), the newest finished one, their DAG versions and receipts."""
        _one(request, session, user, dag_id)
        return refresh_status(dag_id, session)

    @app.get("/ui/", include_in_schema=False, dependencies=[authenticated])
    def schedules_page() -> HTMLResponse:
        return HTMLResponse((UI_DIR / "index.html").read_text(encoding="utf-8"))

    @app.get("/ui/{name}", include_in_schema=False, dependencies=[authenticated])
    def schedules_asset(name: str) -> FileResponse:
        if name not in UI_ASSETS:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"{name!r} is not part of the Schedules page")
        return FileResponse(UI_DIR / name, media_type=UI_ASSETS[name])

    return app
