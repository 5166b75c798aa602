"""A DAG's owed windows, read from its runs in the metadata database: what status and the explainer show.

Under ``dropped="owe"`` the windows of the fires that did not run are gaps between the DAG's
scheduled runs' windows (see :mod:`tessera.timetables.coverage`); the run table is their
record, so they survive ``airflow db clean --tables log``. This reads the newest
:data:`MAX_RUNS_READ` scheduled runs and the backfill and manual runs over the same span (two
indexed queries, each bounded in rows) and asks the public plan which windows none evaluated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from tessera.timetables.public_plan import PublicPlan, RunSchedule

MAX_RUNS_READ = 2000
"""Scheduled runs read at most (the newest): an owed window older than them is not looked for."""


def owed_windows_of(
    session: Session, dag_id: str, plan: PublicPlan, *, limit: int = 100
) -> tuple[list[RunSchedule], bool]:
    """The owed runs of ``dag_id`` among its newest scheduled runs, oldest first; and whether cut short.

    ``plan`` is the DAG's timetable's plan; at most ``limit`` (1 to
    :data:`~tessera.timetables.coverage.MAX_OWED`) are listed. Cut short also when the DAG has
    more scheduled runs than :data:`MAX_RUNS_READ`, whose older gaps were not read.

    :raises ValueError: naming ``limit`` when it is out of range.
    """
    has_window = (
        DagRun.dag_id == dag_id,
        DagRun.data_interval_start.is_not(None),
        DagRun.data_interval_end.is_not(None),
    )
    scheduled = session.execute(
        select(DagRun.data_interval_start, DagRun.data_interval_end)
        .where(*has_window, DagRun.run_type == DagRunType.SCHEDULED)
        .order_by(DagRun.data_interval_end.desc())
        .limit(MAX_RUNS_READ + 1)
    ).all()
    more = len(scheduled) > MAX_RUNS_READ
    scheduled = scheduled[:MAX_RUNS_READ]
    ran = []
    if scheduled:
        ran = session.execute(
            select(DagRun.data_interval_start, DagRun.data_interval_end)
            .where(
                *has_window,
                DagRun.run_type.in_((DagRunType.BACKFILL_JOB, DagRunType.MANUAL)),
                DagRun.data_interval_start >= scheduled[-1][0],
                DagRun.data_interval_end <= scheduled[0][1],
            )
            .limit(MAX_RUNS_READ)
        ).all()
    owed, truncated = plan.owed_windows(
        [(start, end) for start, end in scheduled], ran=[(start, end) for start, end in ran], limit=limit
    )
    return owed, truncated or more
