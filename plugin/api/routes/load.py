"""``GET /api/v1/load``: run starts per minute over the next 24 hours across every DAG the caller may read."""

from __future__ import annotations

from tessera.plugin.fleet.load.models import LoadResponse, load_response
from tessera.plugin.fleet.load.starts import count_load

from ..inputs import MAX_FLEET_RUNS
from .costs import CountedFleetDep, counted_fleet
from .guarded import READABLE_DAGS, Budget, guarded_router, route
from .refusals import SIGNED_IN

router = guarded_router(tags=["load"], responses=SIGNED_IN)


@route(
    router,
    "GET",
    "/api/v1/load",
    scope=READABLE_DAGS,
    budget=Budget.estimated(
        "runs",
        MAX_FLEET_RUNS,
        counted_fleet,
        how="each DAG's run starts in `minutes`, from its lane or its next runs' spacing; refused naming the minutes",
    ),
)
def get_load(fleet: CountedFleetDep) -> LoadResponse:
    """Run starts per minute over the next 24 hours (or ``minutes``), the peak-to-mean ratio and the spikes.

    Every DAG counts, tessera's timetables and Airflow's alike, each by its own next-run answers.
    At most 50,000 run starts in all: a fleet that starts more is refused (422) before any is
    counted, naming the ``minutes`` that fit.
    """
    return load_response(count_load(fleet.work), paused_left_out=fleet.paused_left_out)
