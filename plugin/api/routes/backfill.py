"""``GET /api/v1/dags/{dag_id}/backfill-preview``: the runs ``airflow backfill create`` creates, with windows.

The preview is bounded (:mod:`tessera.plugin.api.backfill_preview`), and it also stops the
moment its caller leaves: it steps through runs in a worker thread while this handler
watches the connection, so a client that gives up does not leave the API server working.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from airflow.utils.session import create_session
from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from ..backfill_preview import (
    MAX_PREVIEW_RUNS,
    PREVIEW_SECONDS,
    BackfillPreview,
    Budget,
    PreviewAbandoned,
    preview_stored,
)
from ..inputs import FromDate, ReprocessBehavior, ToDate
from .access import read_dag
from .refusals import SIGNED_IN, refusals

router = APIRouter(tags=["backfill"], responses=SIGNED_IN)

CLIENT_CLOSED_REQUEST = 499
"""What the access log records for a preview whose caller left (nginx's code; no one receives it)."""

T = TypeVar("T")


async def while_connected(request: Request, work: Callable[[Callable[[], bool]], T]) -> T:
    """Run ``work(abandoned)`` in a worker thread; ``abandoned()`` turns true once the caller disconnects.

    The watcher waits on the request's receive channel, which yields ``http.disconnect`` when the
    client goes (``Request.is_disconnected`` cannot be used: it polls with a cancelled scope, which
    Airflow's ``BaseHTTPMiddleware`` stack turns into "still connected", always). A route without
    a body reads nothing else from the channel.
    """
    left = threading.Event()

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        left.set()

    watcher = asyncio.create_task(watch())
    try:
        return await run_in_threadpool(work, left.is_set)
    finally:
        watcher.cancel()


@router.get(
    "/api/v1/dags/{dag_id}/backfill-preview",
    dependencies=[read_dag],
    responses=refusals(400, 404),
    description=(
        "Exactly the runs a backfill of `[from_date, to_date]` creates: run id, logical date, window, run after. "
        "It is Airflow's own dry run, so runs that already exist and would not be re-run are left out. "
        f"A range holding more than {MAX_PREVIEW_RUNS} runs is refused (400), as is one whose runs take more "
        f"than {PREVIEW_SECONDS:g} s to list; the work stops when the caller disconnects."
    ),
)
async def get_backfill_preview(
    dag_id: str,
    request: Request,
    from_date: FromDate,
    to_date: ToDate,
    reprocess_behavior: ReprocessBehavior = "none",
) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates (the description below is the OpenAPI document's)."""

    def preview(abandoned: Callable[[], bool]) -> BackfillPreview:
        with create_session(scoped=False) as session:
            return preview_stored(
                session,
                dag_id,
                from_date=from_date,
                to_date=to_date,
                reprocess_behavior=reprocess_behavior,
                budget=Budget(abandoned=abandoned),
            )

    try:
        return await while_connected(request, preview)
    except PreviewAbandoned:
        return Response(status_code=CLIENT_CLOSED_REQUEST)  # type: ignore[return-value]
