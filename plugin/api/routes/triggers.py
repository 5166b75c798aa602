"""``GET /api/v1/triggers``: what each asset-driven DAG waits for, in words ("after apc_daily and norled_daily")."""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep

from tessera.plugin.fleet.triggers import TriggersResponse, triggers

from ..inputs import MAX_FLEET_DAGS
from .costs import ReadableFleet, readable_fleet
from .guarded import READABLE_DAGS, Budget, guarded_router, route
from .refusals import SIGNED_IN

router = guarded_router(tags=["plan"], responses=SIGNED_IN)


@route(
    router,
    "GET",
    "/api/v1/triggers",
    scope=READABLE_DAGS,
    budget=Budget.estimated("DAGs", MAX_FLEET_DAGS, readable_fleet, how="the DAGs the caller may read"),
)
def get_triggers(session: SessionDep, mine: ReadableFleet) -> TriggersResponse:
    """Every asset-driven DAG the caller may read, with the schedules or assets it runs after."""
    return triggers(session, readable=mine)
