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

from .._airflow import utcnow

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
    """Three indexed look-ups in the job table (``job_type``, ``latest_heartbeat``).

    Down as the scheduler's own decision has it (``scheduler_downtime``): from the last
    heartbeat before ``moment`` until the next job starts, when that is longer than the
    health-check grace; a restart within the grace is no downtime, and neither is a last
    heartbeat less than the grace ago (the scheduler may yet beat again).
    """
    grace = datetime.timedelta(seconds=conf.getint("scheduler", "scheduler_health_check_threshold", fallback=30))
    alive = _jobs(session, Job.start_date <= moment, Job.latest_heartbeat >= moment, order=Job.latest_heartbeat)
    if alive is not None:
        return SchedulerCover(alive, None, None, grace)
    stopped = _jobs(session, Job.start_date <= moment, Job.latest_heartbeat < moment, order=Job.latest_heartbeat.desc())
    # No job started between the stopped one's last heartbeat and ``moment``: it would have a later heartbeat.
    returned = _jobs(session, Job.start_date > moment, order=Job.start_date)
    if stopped is not None and stopped.latest_heartbeat is not None:
        gap_end = utcnow() if returned is None or returned.start_date is None else returned.start_date
        if gap_end - stopped.latest_heartbeat <= grace:
            return SchedulerCover(stopped, None, None, grace)
    return SchedulerCover(None, stopped, returned, grace)


def oldest_scheduler_job(session: Session) -> datetime.datetime | None:
    return session.scalar(select(func.min(Job.start_date)).where(Job.job_type == SCHEDULER_JOB))
