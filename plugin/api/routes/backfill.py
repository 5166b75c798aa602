"""``GET /api/v1/dags/{dag_id}/backfill-preview``: the runs ``airflow backfill create`` creates, with windows.

The preview is bounded (:mod:`tessera.plugin.actions.backfill_preview`), and it also stops the
moment its caller leaves: it asks the route mechanism's cancellation before each run it lists.
"""

from __future__ import annotations

from airflow.utils.session import create_session

from tessera.plugin.actions.backfill_preview import (
    MAX_PREVIEW_RUNS,
    PREVIEW_SECONDS,
    BackfillPreview,
    Budget,
    PreviewAbandoned,
    preview_stored,
)
from tessera.plugin.cancellation import Abandoned, caller_left

from ..inputs import FromDate, ReprocessBehavior, ToDate
from .access import read_dag
from .guarded import Budget as RouteBudget
from .guarded import guarded_router, one_dag, route
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["backfill"], responses=SIGNED_IN)


@route(
    router,
    "GET",
    "/api/v1/dags/{dag_id}/backfill-preview",
    scope=one_dag("read the DAG", read_dag),
    budget=RouteBudget.while_working(
        "runs",
        MAX_PREVIEW_RUNS,
        f"the range's runs are listed one at a time; past {MAX_PREVIEW_RUNS} or {PREVIEW_SECONDS:g} s it is refused",
    ),
    responses=refusals(400, 404),
    description=(
        "Exactly the runs a backfill of `[from_date, to_date]` creates: run id, logical date, window, run after. "
        "It is Airflow's own dry run, so runs that already exist and would not be re-run are left out. "
        f"A range holding more than {MAX_PREVIEW_RUNS} runs is refused (400), as is one whose runs take more "
        f"than {PREVIEW_SECONDS:g} s to list; the work stops when the caller disconnects."
    ),
)
def get_backfill_preview(
    dag_id: str,
    from_date: FromDate,
    to_date: ToDate,
    reprocess_behavior: ReprocessBehavior = "none",
) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates (the description above is the OpenAPI document's)."""
    with create_session(scoped=False) as session:
        try:
            return preview_stored(
                session,
                dag_id,
                from_date=from_date,
                to_date=to_date,
                reprocess_behavior=reprocess_behavior,
                budget=Budget(abandoned=caller_left),
            )
        except PreviewAbandoned:
            raise Abandoned(dag_id) from None
