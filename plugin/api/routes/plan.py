"""``GET /api/v1/plan`` and ``GET /api/v1/dags/{dag_id}/plan``: the runs the scheduler creates next.

And ``GET /api/v1/page``: everything the Schedules page shows, in one request.
"""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter, Response

from ..._airflow import utcnow
from ..broken_rows import broken_plan, with_broken_plans
from ..contradictions import all_contradictions
from ..errors import NotFound
from ..inputs import PAGE_ROWS, After, Count, PageLimit, PageOffset, Until, fleet_count
from ..models import DagPlan, PlanResponse
from ..overview import PageResponse, encode, page_data
from ..row_errors import plan_row
from ..schedules import scheduled_dag, scheduled_dags
from .access import authenticated, read_dag, readable
from .refusals import SIGNED_IN, refusals

router = APIRouter(tags=["plan"], responses=SIGNED_IN)


@router.get("/api/v1/plan", dependencies=[authenticated])
def get_plans(
    session: SessionDep,
    user: GetUserDep,
    count: Count = 10,
    after: After = None,
    until: Until = None,
) -> PlanResponse:
    """The next runs of every tessera DAG the caller may read, and every contradiction.

    At most 50,000 runs in all (``count`` times the DAGs listed): a larger ``count`` is refused (422),
    naming the largest that fits; one DAG's plan takes ``count`` up to 1,000 whatever the fleet.
    """
    mine = readable(user)
    contradictions, check = all_contradictions(session, user, mine)
    start = after or utcnow()
    items = scheduled_dags(session, readable=mine)
    count = fleet_count(count, len(items))
    plans = [plan_row(item, after=start, count=count, until=until, contradictions=contradictions) for item in items]
    plans = with_broken_plans(session, plans, mine, after=start)  # broken DAGs keep their rows
    return PlanResponse(dags=plans, contradictions=contradictions, plan_check=check)


@router.get("/api/v1/dags/{dag_id}/plan", dependencies=[read_dag], responses=refusals(404))
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


@router.get("/api/v1/page", dependencies=[authenticated], response_model=PageResponse)
def get_page(session: SessionDep, user: GetUserDep, offset: PageOffset = 0, limit: PageLimit = PAGE_ROWS) -> Response:
    """A page of the readable tessera DAGs, by DAG id: each one's next run, lane, status and trigger.

    What the Schedules page reads on each load: ``plan?count=1``, ``status`` and ``triggers`` in
    one answer, with each DAG's runs over the next 71 days as a lane of periodic segments rather than
    one entry per run.
    ``total`` says how many rows all the pages hold.
    """
    page = page_data(session, user, readable(user), now=utcnow(), offset=offset, limit=limit)
    return Response(encode(page), media_type="application/json")
