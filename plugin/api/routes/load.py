"""``GET /api/v1/load``: run starts per minute over the next 24 hours across every DAG the caller may read."""

from __future__ import annotations

from typing import Annotated

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter, Query

from ..._airflow import utcnow
from ..load import fleet_load
from ..load_fleet import fleet
from ..load_models import LoadResponse, load_response
from .access import authenticated, readable
from .refusals import SIGNED_IN

router = APIRouter(tags=["load"], responses=SIGNED_IN)


@router.get("/api/v1/load", dependencies=[authenticated])
def get_load(
    session: SessionDep,
    user: GetUserDep,
    include_paused: Annotated[bool, Query(description="Count paused DAGs too.")] = False,
) -> LoadResponse:
    """Run starts per minute over the next 24 hours, the peak-to-mean ratio and the spikes.

    Every DAG counts, tessera's timetables and Airflow's alike, each by its own next-run answers.
    Always from now: Airflow's own timetables read the clock themselves when they skip ahead.
    """
    dags, paused = fleet(session, readable=readable(user), include_paused=include_paused)
    return load_response(fleet_load(dags, now=utcnow()), paused_left_out=paused)
