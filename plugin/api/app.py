"""The tessera REST API and Schedules page, a FastAPI app the Airflow API server mounts at ``/tessera``.

This module only assembles: the routers (one per resource, in :mod:`tessera.plugin.api.routes`)
map the domain's answers to HTTP, and the one exception handler below maps the domain's
refusals (:mod:`tessera.plugin.errors`) to status codes. Every route is declared through
:mod:`tessera.plugin.api.routes.guarded`, with its DAG scope, its work budget and cancellation when
its caller leaves. Who may call what is in :mod:`tessera.plugin.api.routes.access`; what a request may send in
:mod:`tessera.plugin.api.inputs`; a DAG whose plan or status cannot be computed is listed
with its error (:mod:`tessera.plugin.fleet.row_errors`).

Every answer, the page's and the API's, refuses to be framed by another origin
(:class:`SameOriginFramesOnly`): the Schedules page has a Refresh button, and a page on
another port of the same host that framed it invisibly could have a signed-in user click
it (clickjacking). Airflow's own UI, on the same origin, still embeds it.
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.common.dagbag import create_dag_bag
from fastapi import FastAPI, Request
from fastapi import status as http
from fastapi.responses import JSONResponse

from .. import errors
from . import URL_PREFIX
from .routes import backfill, load, migrate, page, pause, plan, refresh, status, triggers, why

STATUS_CODES: dict[type[errors.ApiError], int] = {
    errors.NotFound: http.HTTP_404_NOT_FOUND,
    errors.Conflict: http.HTTP_409_CONFLICT,
    errors.Invalid: http.HTTP_400_BAD_REQUEST,
    errors.UnsupportedMediaType: http.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    errors.Unprocessable: http.HTTP_422_UNPROCESSABLE_CONTENT,
    errors.TooMuchWork: http.HTTP_422_UNPROCESSABLE_CONTENT,  # as a parameter over its maximum is, naming it
    errors.ContentTooLarge: http.HTTP_413_CONTENT_TOO_LARGE,
    errors.Unavailable: http.HTTP_503_SERVICE_UNAVAILABLE,
    errors.ApiError: http.HTTP_400_BAD_REQUEST,  # a refusal of a kind added without its own code
}

FRAME_HEADERS = (
    (b"content-security-policy", b"frame-ancestors 'self'"),
    (b"x-frame-options", b"SAMEORIGIN"),  # for browsers that predate frame-ancestors
)
"""Only a page of the same origin (Airflow's UI) may frame an answer of this app."""


async def refused(request: Request, error: Exception) -> JSONResponse:
    """A domain refusal as HTTP: its status code and ``{"detail": ...}``, the body of FastAPI's own errors."""
    assert isinstance(error, errors.ApiError)
    code = next(STATUS_CODES[kind] for kind in type(error).__mro__ if kind in STATUS_CODES)
    return JSONResponse({"detail": error.detail}, status_code=code)


class SameOriginFramesOnly:
    """ASGI middleware adding :data:`FRAME_HEADERS` to every response, errors included.

    A plain ASGI wrapper (not Starlette's ``BaseHTTPMiddleware``), so the request's receive
    channel reaches the routes untouched and a route can still see its caller disconnect.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        names = {name for name, _ in FRAME_HEADERS}

        async def send_framed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in names]
                message = {**message, "headers": [*kept, *FRAME_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_framed)


def create_app() -> FastAPI:
    """Build the app (the API server calls this once per worker, on the first request)."""
    app = FastAPI(
        title="Tessera",
        version="1",
        description=(
            "Plans, status, the fleet's load, backfill previews, pauses, on-demand refresh and 'why did it "
            "(not) run' for the DAGs of an Airflow deployment, served by Airflow's API server under "
            f"{URL_PREFIX} with Airflow's own authentication (a bearer token from POST /auth/token)."
        ),
        # The document's paths are the app's; a client generated from it needs the prefix the API server adds.
        servers=[{"url": URL_PREFIX, "description": "the tessera app inside Airflow's API server"}],
        openapi_url=None,  # served by the page router, behind authentication like every other route
        docs_url=None,
        redoc_url=None,
    )
    app.state.dag_bag = create_dag_bag()
    for router in (page.router, plan.router, status.router, refresh.router, pause.router):
        app.include_router(router)
    # The fleet's load, backfill previews and asset-driven DAGs in words (the Schedules page's other reads).
    for router in (load.router, backfill.router, triggers.router):
        app.include_router(router)
    app.include_router(why.router)  # "why did (or didn't) it run at T?"
    app.include_router(migrate.router)  # what moving to tessera changes, run by run
    app.add_exception_handler(errors.ApiError, refused)
    app.add_middleware(SameOriginFramesOnly)
    return app
