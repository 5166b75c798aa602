"""``GET /api/v1/plan`` and ``GET /api/v1/dags/{dag_id}/plan``: the runs the scheduler creates next.

And ``GET /api/v1/page``: everything the Schedules page shows, in one request.
"""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import Response

from tessera.plugin.cancellation import each
from tessera.plugin.errors import NotFound
from tessera.plugin.fleet.broken_rows import broken_plan, with_broken_plans
from tessera.plugin.fleet.contradictions import all_contradictions
from tessera.plugin.fleet.models import DagPlan, PlanResponse
from tessera.plugin.fleet.overview import PageResponse, encode, page_data
from tessera.plugin.fleet.row_errors import plan_row
from tessera.plugin.fleet.schedules import scheduled_dag

from ..._airflow import utcnow
from ..inputs import MAX_COUNT, MAX_FLEET_DAGS, MAX_FLEET_RUNS, PAGE_ROWS, After, Count, PageLimit, PageOffset, Until
from .access import allowed_actions, read_dag, readable
from .costs import PlannedFleetDep, ReadableFleet, planned_fleet, readable_fleet
from .guarded import READABLE_DAGS, Budget, guarded_router, one_dag, route
from .page_query import PageQueryDep
from .refusals import SIGNED_IN, refusals

router = guarded_router(tags=["plan"], responses=SIGNED_IN)


@route(
    router,
    "GET",
    "/api/v1/plan",
    scope=READABLE_DAGS,
    budget=Budget.estimated(
        "runs", MAX_FLEET_RUNS, planned_fleet, how="`count` times the tessera DAGs listed; refused naming the count"
    ),
)
def get_plans(
    session: SessionDep,
    user: GetUserDep,
    fleet: PlannedFleetDep,
    after: After = None,
    until: Until = None,
) -> PlanResponse:
    """The next runs of every tessera DAG the caller may read, and every contradiction.

    At most 50,000 runs in all (``count`` times the DAGs listed): a larger ``count`` is refused (422),
    naming the largest that fits; one DAG's plan takes ``count`` up to 1,000 whatever the fleet.
    """
    contradictions, check = all_contradictions(session, user, fleet.mine)
    start = after or utcnow()
    plans = [
        plan_row(item, after=start, count=fleet.count, until=until, contradictions=contradictions)
        for item in each(fleet.items)
    ]
    plans = with_broken_plans(session, plans, fleet.mine, after=start)  # broken DAGs keep their rows
    return PlanResponse(dags=plans, contradictions=contradictions, plan_check=check)


@route(
    router,
    "GET",
    "/api/v1/dags/{dag_id}/plan",
    scope=one_dag("read the DAG", read_dag),
    budget=Budget.by_parameter("runs", MAX_COUNT, "count"),
    responses=refusals(404),
)
def get_plan(
    dag_id: str,
    session: SessionDep,
    user: GetUserDep,
    count: Count = 10,
    after: After = None,
    until: Until = None,
) -> DagPlan:
    """The next runs of one DAG: run-after, window, phase, timezone, summary, contradictions."""
    mine = readable(user)
    try:
        item = scheduled_dag(session, dag_id)
    except NotFound:  # a DAG whose file broke is stale, but keeps its row with the reason
        if (row := broken_plan(session, dag_id, mine, after=after or utcnow())) is None:
            raise
        return row
    contradictions, _ = all_contradictions(session, user, {dag_id})
    row = plan_row(item, after=after or utcnow(), count=count, until=until, contradictions=contradictions)
    return with_broken_plans(session, [row], mine, after=after or utcnow(), dag_ids=[dag_id])[0]


@route(
    router,
    "GET",
    "/api/v1/page",
    scope=READABLE_DAGS,
    budget=Budget.estimated(
        "DAGs", MAX_FLEET_DAGS, readable_fleet, how="the DAGs the caller may read (each one's status is judged)"
    ),
    response_model=PageResponse,
)
def get_page(
    session: SessionDep,
    user: GetUserDep,
    mine: ReadableFleet,
    query: PageQueryDep,
    offset: PageOffset = 0,
    limit: PageLimit = PAGE_ROWS,
) -> Response:
    """A page of the readable tessera DAGs that match `search`, `tag` and `filter`, in `sort` order.

    Each row holds the DAG's next run, lane, status and trigger: what the Schedules page reads on
    each load (``plan?count=1``, ``status`` and ``triggers`` in one answer, with each DAG's runs over
    the next 71 days as a lane of periodic segments rather than one entry per run). The search,
    filters and sort apply to every matching DAG, not to one page: ``total`` says how many rows all
    the pages hold, and ``counts`` how many of them are late, not ready, failed last and paused.
    """
    page = page_data(session, user, mine, now=utcnow(), offset=offset, limit=limit, query=query)
    allowed = allowed_actions(user, [row["dag_id"] for row in page["dags"]])
    for row in page["dags"]:
        row["may"] = allowed[row["dag_id"]]
    return Response(encode(page), media_type="application/json")
