"""``GET /api/v1/triggers``: what each asset-driven DAG waits for, in words ("after apc_daily and norled_daily")."""

from __future__ import annotations

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter

from ..triggers import TriggersResponse, triggers
from .access import authenticated, readable
from .refusals import SIGNED_IN

router = APIRouter(tags=["plan"], responses=SIGNED_IN)


@router.get("/api/v1/triggers", dependencies=[authenticated])
def get_triggers(session: SessionDep, user: GetUserDep) -> TriggersResponse:
    """Every asset-driven DAG the caller may read, with the schedules or assets it runs after."""
    return triggers(session, readable=readable(user))
