"""DAGs' owed windows, read from their runs in the metadata database: what status and the explainer show.

Under ``dropped="owe"`` the windows of the fires that did not run are gaps between the DAG's
scheduled runs' windows (see :mod:`tessera.timetables.coverage`); the run table is their
record, so they survive ``airflow db clean --tables log``. This reads each DAG's newest
:data:`MAX_RUNS_READ` scheduled runs and the backfill and manual runs over the same span (two
indexed queries for all the DAGs asked about, each bounded in rows per DAG) and asks the public
plan which windows none evaluated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import and_, func, or_, select

if TYPE_CHECKING:
    import datetime

    from sqlalchemy.orm import Session

    from tessera.timetables.public_plan import PublicPlan, RunSchedule

MAX_RUNS_READ = 2000
"""Scheduled runs read at most per DAG (the newest): an owed window older than them is not looked for."""

Windows = list[tuple["datetime.datetime", "datetime.datetime"]]


def owed_windows_of_each(
    session: Session, plans: Mapping[str, PublicPlan], *, limit: int = 100
) -> dict[str, tuple[list[RunSchedule], bool]]:
    """The owed runs of each DAG of ``plans`` (its id and its timetable's plan) among its newest scheduled
    runs, oldest first; and whether cut short. Two queries, whatever the number of DAGs.

    At most ``limit`` (1 to :data:`~tessera.timetables.coverage.MAX_OWED`) are listed per DAG. Cut
    short also when the DAG has more scheduled runs than :data:`MAX_RUNS_READ`, whose older gaps
    were not read.

    :raises ValueError: naming ``limit`` when it is out of range.
    """
    scheduled, more = _newest_scheduled(session, list(plans))
    ran = _other_runs_within(session, scheduled)
    found = {}
    for dag_id, plan in plans.items():
        owed, truncated = plan.owed_windows(scheduled.get(dag_id, []), ran=ran.get(dag_id, []), limit=limit)
        found[dag_id] = (owed, truncated or dag_id in more)
    return found


def _has_window() -> tuple:
    return DagRun.data_interval_start.is_not(None), DagRun.data_interval_end.is_not(None)


def _newest_scheduled(session: Session, dag_ids: list[str]) -> tuple[dict[str, Windows], set[str]]:
    """Each DAG's newest :data:`MAX_RUNS_READ` scheduled runs' windows, newest first; and the DAGs that have more."""
    if not dag_ids:
        return {}, set()
    newest_first = func.row_number().over(partition_by=DagRun.dag_id, order_by=DagRun.data_interval_end.desc())
    ranked = (
        select(DagRun.dag_id, DagRun.data_interval_start, DagRun.data_interval_end, newest_first.label("rank"))
        .where(DagRun.dag_id.in_(dag_ids), DagRun.run_type == DagRunType.SCHEDULED, *_has_window())
        .subquery()
    )
    rows = session.execute(
        select(ranked.c.dag_id, ranked.c.data_interval_start, ranked.c.data_interval_end)
        .where(ranked.c.rank <= MAX_RUNS_READ + 1)
        .order_by(ranked.c.dag_id, ranked.c.rank)
    ).all()
    scheduled: dict[str, Windows] = defaultdict(list)
    for dag_id, start, end in rows:
        scheduled[dag_id].append((start, end))
    more = {dag_id for dag_id, windows in scheduled.items() if len(windows) > MAX_RUNS_READ}
    return {dag_id: windows[:MAX_RUNS_READ] for dag_id, windows in scheduled.items()}, more


def _other_runs_within(session: Session, scheduled: Mapping[str, Windows]) -> dict[str, Windows]:
    """Each DAG's backfill and manual runs' windows within the span of its scheduled ones (at most
    :data:`MAX_RUNS_READ` per DAG)."""
    within = [
        and_(
            DagRun.dag_id == dag_id,
            DagRun.data_interval_start >= windows[-1][0],
            DagRun.data_interval_end <= windows[0][1],
        )
        for dag_id, windows in scheduled.items()
        if windows
    ]
    if not within:
        return {}
    ranked = (
        select(
            DagRun.dag_id,
            DagRun.data_interval_start,
            DagRun.data_interval_end,
            func.row_number().over(partition_by=DagRun.dag_id, order_by=DagRun.id).label("rank"),
        )
        .where(or_(*within), DagRun.run_type.in_((DagRunType.BACKFILL_JOB, DagRunType.MANUAL)), *_has_window())
        .subquery()
    )
    rows = session.execute(
        select(ranked.c.dag_id, ranked.c.data_interval_start, ranked.c.data_interval_end).where(
            ranked.c.rank <= MAX_RUNS_READ
        )
    ).all()
    ran: dict[str, Windows] = defaultdict(list)
    for dag_id, start, end in rows:
        ran[dag_id].append((start, end))
    return ran
