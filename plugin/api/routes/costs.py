"""What a request costs, found before its work starts: the dependencies that check the routes' budgets.

Each is a :class:`~tessera.plugin.api.routes.guarded.Budget`'s ``check``: it turns the route's
inputs (and the size of the fleet the caller may read) into a cost and refuses one over the
budget, naming the parameter and the largest value that fits. A route takes the same dependency
as a parameter to use what it found (FastAPI runs a dependency once per request), so the estimate
and the work read the same fleet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import Depends, Query

from tessera.plugin.errors import TooMuchWork
from tessera.plugin.fleet.load.dags import fleet
from tessera.plugin.fleet.load.starts import HORIZON_MINUTES, LoadWork, load_work
from tessera.plugin.fleet.schedules import ScheduledDag, scheduled_dags

from ..._airflow import utcnow
from ..inputs import MAX_FLEET_DAGS, Count, fleet_count
from .access import readable


def readable_fleet(user: GetUserDep) -> frozenset[str]:
    """The DAG ids the caller may read, refused when a fleet-wide list would read more than it answers for."""
    mine = frozenset(readable(user))
    if len(mine) > MAX_FLEET_DAGS:
        raise TooMuchWork(
            f"the DAGs you may read: {len(mine):,}; a fleet-wide list answers for at most {MAX_FLEET_DAGS:,}: "
            "read them one DAG at a time (/api/v1/dags/{dag_id}/status)"
        )
    return mine


ReadableFleet = Annotated[frozenset[str], Depends(readable_fleet)]


@dataclass(frozen=True)
class PlannedFleet:
    """The tessera DAGs the fleet plan lists, and the ``count`` of runs of each that fits its budget."""

    mine: frozenset[str]
    items: list[ScheduledDag]
    count: int


def planned_fleet(session: SessionDep, mine: ReadableFleet, count: Count = 10) -> PlannedFleet:
    """``count`` runs of each readable tessera DAG, refused over ``MAX_FLEET_RUNS`` (naming the ``count`` that fits)."""
    items = scheduled_dags(session, readable=mine)
    return PlannedFleet(mine, items, fleet_count(count, len(items)))


PlannedFleetDep = Annotated[PlannedFleet, Depends(planned_fleet)]


IncludePaused = Annotated[bool, Query(description="Count paused DAGs too.")]
LoadMinutes = Annotated[
    int,
    Query(
        ge=1,
        le=HORIZON_MINUTES,
        description=f"How many minutes from now to count (1 to {HORIZON_MINUTES}, the next 24 hours).",
    ),
]


@dataclass(frozen=True)
class CountedFleet:
    """The load's fleet, its estimated cost within the budget, and how many paused DAGs were left out."""

    work: LoadWork
    paused_left_out: int


def counted_fleet(
    session: SessionDep,
    mine: ReadableFleet,
    include_paused: IncludePaused = False,
    minutes: LoadMinutes = HORIZON_MINUTES,
) -> CountedFleet:
    """The readable DAGs whose load is counted, refused when their run starts pass ``MAX_FLEET_RUNS``.

    Always from now: Airflow's own timetables read the clock themselves when they skip ahead.
    """
    dags, paused = fleet(session, readable=mine, include_paused=include_paused)
    try:
        work = load_work(dags, now=utcnow(), minutes=minutes)
    except TooMuchWork as refused:
        if not include_paused:
            raise
        raise TooMuchWork(f"{refused.detail}; include_paused=false leaves the paused DAGs out") from None
    return CountedFleet(work, paused)


CountedFleetDep = Annotated[CountedFleet, Depends(counted_fleet)]
