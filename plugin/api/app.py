"""The tessera REST API and Schedules page, a FastAPI app the Airflow API server mounts at ``/tessera``.

This module only assembles: the routers (one per resource, in :mod:`tessera.plugin.api.routes`)
map the domain's answers to HTTP, and the one exception handler below maps the domain's
refusals (:mod:`tessera.plugin.api.errors`) to status codes. Who may call what is in
:mod:`tessera.plugin.api.routes.access`; what a write must send in
:mod:`tessera.plugin.api.inputs`; a DAG whose plan or status cannot be computed is listed
with its error (:mod:`tessera.plugin.api.row_errors`).
"""

from __future__ import annotations

from airflow.api_fastapi.common.dagbag import create_dag_bag
from fastapi import FastAPI, Request
from fastapi import status as http
from fastapi.responses import JSONResponse

from . import errors
from .routes import backfill, load, page, plan, refresh, status, triggers, why

STATUS_CODES: dict[type[errors.ApiError], int] = {
    errors.NotFound: http.HTTP_404_NOT_FOUND,
    errors.Conflict: http.HTTP_409_CONFLICT,
    errors.Invalid: http.HTTP_400_BAD_REQUEST,
    errors.UnsupportedMediaType: http.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    errors.Unprocessable: http.HTTP_422_UNPROCESSABLE_CONTENT,
    errors.Unavailable: http.HTTP_503_SERVICE_UNAVAILABLE,
    errors.ApiError: http.HTTP_400_BAD_REQUEST,  # a refusal of a kind added without its own code
}


async def refused(request: Request, error: Exception) -> JSONResponse:
    """A domain refusal as HTTP: its status code and ``{"detail": ...}``, the body of FastAPI's own errors."""
    assert isinstance(error, errors.ApiError)
    code = next(STATUS_CODES[kind] for kind in type(error).__mro__ if kind in STATUS_CODES)
    return JSONResponse({"detail": error.detail}, status_code=code)


def create_app() -> FastAPI:
    """Build the app (the API server calls this once per worker, on the first request)."""
    app = FastAPI(
        title="Tessera",
        version="1",
        description="Plans, status and on-demand refresh of tessera-scheduled DAGs.",
        openapi_url=None,  # served by the page router, behind authentication like every other route
        docs_url=None,
        redoc_url=None,
    )
    app.state.dag_bag = create_dag_bag()
    for router in (page.router, plan.router, status.router, refresh.router):
        app.include_router(router)
    # The fleet's load, backfill previews and asset-driven DAGs in words (the Schedules page's other reads).
    for router in (load.router, backfill.router, triggers.router):
        app.include_router(router)
    app.include_router(why.router)  # "why did (or didn't) it run at T?"
    app.add_exception_handler(errors.ApiError, refused)
    return app
