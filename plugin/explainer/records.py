"""The scheduler jobs "why" reads around an instant: was a scheduler heartbeating, and when did it stop and return.

Every read is one indexed query (by type and heartbeat) bounded by a ``LIMIT``. A job names no
DAG, so these reads are the same for every caller; the DAGs' own records (runs, task instances,
pools, the audit log) are read through :mod:`~tessera.plugin.scoped_reads`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.configuration import conf
from airflow.jobs.job import Job
from sqlalchemy import func, select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

SCHEDULER_JOB = "SchedulerJob"


@dataclass(frozen=True)
class JobRow:
    id: int
    hostname: str | None
    start_date: datetime.datetime | None
    latest_heartbeat: datetime.datetime | None
    state: str | None


@dataclass(frozen=True)
class SchedulerCover:
    """Whether a scheduler was heartbeating at an instant, and the jobs on either side of it."""

    alive: JobRow | None
    last_before: JobRow | None
    """The newest scheduler job whose last heartbeat is before the instant (when it was down: the one that stopped)."""
    next_after: JobRow | None
    """The first scheduler job started after the instant (when it was down: the one that came back)."""
    grace: datetime.timedelta


def _jobs(session: Session, *where: Any, order: Any) -> JobRow | None:
    row = session.execute(
        select(Job.id, Job.hostname, Job.start_date, Job.latest_heartbeat, Job.state)
        .where(Job.job_type == SCHEDULER_JOB, *where)
        .order_by(order)
        .limit(1)
    ).first()
    return None if row is None else JobRow(*row)


def scheduler_at(session: Session, moment: datetime.datetime) -> SchedulerCover:
    """Three indexed look-ups in the job table (``job_type``, ``latest_heartbeat``)."""
    grace = datetime.timedelta(seconds=conf.getint("scheduler", "scheduler_health_check_threshold", fallback=30))
    alive = _jobs(session, Job.latest_heartbeat >= moment - grace, Job.start_date <= moment, order=Job.latest_heartbeat)
    before = (
        None
        if alive is not None
        else _jobs(session, Job.latest_heartbeat < moment - grace, order=Job.latest_heartbeat.desc())
    )
    after = (
        None
        if alive is not None
        else _jobs(session, Job.latest_heartbeat >= moment, Job.start_date > moment, order=Job.start_date)
    )
    return SchedulerCover(alive, before, after, grace)


def oldest_scheduler_job(session: Session) -> datetime.datetime | None:
    return session.scalar(select(func.min(Job.start_date)).where(Job.job_type == SCHEDULER_JOB))
