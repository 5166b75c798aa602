"""``GET /api/v1/dags/{dag_id}/backfill-preview``: the runs ``airflow backfill create`` creates, with windows."""

from __future__ import annotations

import datetime
from typing import Annotated

from airflow.api_fastapi.common.db.common import SessionDep
from fastapi import APIRouter, Query

from ..backfill_preview import BackfillPreview, preview_stored
from .access import read_dag

router = APIRouter(tags=["backfill"])


@router.get("/api/v1/dags/{dag_id}/backfill-preview", dependencies=[read_dag])
def get_backfill_preview(
    dag_id: str,
    session: SessionDep,
    from_date: Annotated[datetime.datetime, Query(description="As `--from-date`, with a timezone.")],
    to_date: Annotated[datetime.datetime, Query(description="As `--to-date`, with a timezone.")],
    reprocess_behavior: Annotated[str, Query(description="none (default), failed or completed.")] = "none",
) -> BackfillPreview:
    """Exactly the runs a backfill of ``[from_date, to_date]`` creates: run id, logical date, window, run after.

    It is Airflow's own dry run, so runs that already exist and would not be re-run are left out.
    """
    return preview_stored(session, dag_id, from_date=from_date, to_date=to_date, reprocess_behavior=reprocess_behavior)
