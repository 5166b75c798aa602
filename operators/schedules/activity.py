"""What a tessera DAG's runs did, read from the metadata database for the scheduler's run decision.

The timetable decides which run its overlap policy owes (a queued trigger, a replayed inactive
period; see :mod:`tessera.timetables.run_policy`) from the DAG's activity, which it does not read
itself: the plugin registers :func:`activity_of` as its reader. It runs in the scheduler, inside
the transaction that creates the run, through the session the DAG's row came from, in six
indexed queries (the newest scheduled run; the newest end before it was created; the ends of
the runs in flight when it was created, from which the moment a ``max_active_runs`` slot freed
follows; the pause history since it was due; and the scheduler downtime since then, from
Airflow's ``job`` table), each bounded in rows.

Scheduler downtime: every scheduler process is one ``SchedulerJob`` row that heartbeats from its
``start_date`` to its ``latest_heartbeat``. A stretch longer than the scheduler's health-check
grace (``[scheduler] scheduler_health_check_threshold``, the same grace after which Airflow itself
declares a scheduler dead) in which no row was heartbeating is downtime; with several schedulers
(HA) that means none of them was. Ticks due then belong to the catch-up, not to the overlap
policy (:mod:`tessera.timetables._time.owed`). The rows are read through the ``(job_type,
latest_heartbeat)`` index: the newest heartbeat before the run was due (where a downtime that
began earlier starts) and at most :data:`MAX_SCHEDULER_JOBS_READ` rows heartbeating since. After
``airflow db clean --tables job`` the rows before the clean are gone: a stretch they no longer
cover is not called downtime (what is not known is decided as before the job table was read).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from airflow.configuration import conf
from airflow.jobs.job import Job
from airflow.models.dag_version import DagVersion
from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import func, or_, select
from sqlalchemy.orm import object_session

from tessera.operators.pauses.history import paused_spans
from tessera.timetables.instants import from_us, to_us
from tessera.timetables.run_policy import RunActivity, slot_freed

from .._airflow import run_created_columns

MAX_IN_FLIGHT_READ = 1000
"""Runs in flight read at most: a DAG allowing more at once (an unlimited one) is never full."""
MAX_SCHEDULER_JOBS_READ = 100
"""Scheduler job rows read at most: with more (a scheduler restarting in a loop), the oldest stretch is not known."""
SCHEDULER_JOB = "SchedulerJob"

if TYPE_CHECKING:
    from airflow.models.dag import DagModel
    from sqlalchemy.orm import Session


def activity_of(dag_model: DagModel) -> RunActivity | None:
    """The DAG's activity as of the current transaction; ``None`` for a DAG row outside any session."""
    session = object_session(dag_model)
    if session is None:
        return None
    return read_activity(session, dag_model.dag_id, slots=dag_model.max_active_runs or 1)


def read_activity(session: Session, dag_id: str, *, slots: int, before: datetime.datetime | None = None) -> RunActivity:
    """The newest scheduled run of ``dag_id`` (created before ``before``, if given) and what followed it.

    ``slots`` is the DAG's ``max_active_runs``. ``before`` reads the activity as it stood when a
    later run was created: what the scheduler knew when it chose that run.
    """
    made = func.coalesce(*run_created_columns())
    query = select(DagRun.data_interval_end, made, DagRun.run_after).where(
        DagRun.dag_id == dag_id, DagRun.run_type == DagRunType.SCHEDULED
    )
    if before is not None:
        query = query.where(made < before)
    newest = session.execute(query.order_by(DagRun.data_interval_end.desc()).limit(1)).first()
    if newest is None:
        created = session.scalar(select(func.min(DagVersion.created_at)).where(DagVersion.dag_id == dag_id))
        spans = () if created is None else tuple(paused_spans(session, dag_id, since=created, until=before))
        return RunActivity(last_window_end=None, paused=spans)
    window_end, created, due = newest
    ended = DagRun.end_date.is_not(None), DagRun.dag_id == dag_id, DagRun.run_type != DagRunType.BACKFILL_JOB
    freed_before = session.scalar(select(func.max(DagRun.end_date)).where(*ended, DagRun.end_date <= created))
    down = scheduler_downtime(session, since=min(due, created), until=before)
    return RunActivity(
        last_window_end=window_end,
        freed_before=freed_before,
        freed_after=_slot_freed(session, dag_id, (due, created), slots, before, down),
        paused=tuple(paused_spans(session, dag_id, since=min(due, created), until=before)),
        down=down,
    )


def scheduler_downtime(
    session: Session, *, since: datetime.datetime, until: datetime.datetime | None = None
) -> tuple[tuple[datetime.datetime, datetime.datetime], ...]:
    """The ended stretches since ``since`` (before ``until``) in which no scheduler was heartbeating, oldest first.

    A stretch still open (no scheduler heartbeating now) is not listed: the reader runs in a
    scheduler, so one is. Two indexed queries, at most :data:`MAX_SCHEDULER_JOBS_READ` rows.
    """
    grace = datetime.timedelta(seconds=conf.getint("scheduler", "scheduler_health_check_threshold", fallback=30))
    scheduler = Job.job_type == SCHEDULER_JOB
    alive_before = session.scalar(select(func.max(Job.latest_heartbeat)).where(scheduler, Job.latest_heartbeat < since))
    query = select(Job.start_date, Job.latest_heartbeat).where(scheduler, Job.latest_heartbeat >= since)
    if until is not None:
        query = query.where(Job.start_date < until)
    rows = session.execute(query.order_by(Job.latest_heartbeat.desc()).limit(MAX_SCHEDULER_JOBS_READ + 1)).all()
    alive = sorted((start, beat) for start, beat in rows[:MAX_SCHEDULER_JOBS_READ] if start is not None)
    if not alive:
        return ()
    # Known from the newest heartbeat before ``since`` (a stretch may have begun then); without
    # one (never, or cleaned) from the first row read; with rows left unread, from the oldest
    # heartbeat read: an unread row heartbeat last before it and covers nothing after it.
    known = alive_before if alive_before is not None else alive[0][0]
    if len(rows) > MAX_SCHEDULER_JOBS_READ:
        known = max(known, min(beat for _, beat in alive))
    spans = []
    covered = known
    for start, beat in alive:
        if start - covered > grace and start > since:
            spans.append((covered, start))
        covered = max(covered, beat)
    return tuple(spans)


def _slot_freed(
    session: Session,
    dag_id: str,
    run: tuple[datetime.datetime, datetime.datetime],
    slots: int,
    before: datetime.datetime | None,
    down: tuple[tuple[datetime.datetime, datetime.datetime], ...],
) -> datetime.datetime | None:
    """When a slot freed after the ``run`` (came due, created) took one: from the runs in flight at its creation.

    Ends at or after ``before`` are not known yet; a run in flight when a downtime in ``down``
    began ended there (:func:`~tessera.timetables.run_policy.slot_freed`).
    """
    due, created = run
    if slots > MAX_IN_FLIGHT_READ:
        return min(due, created)
    made = func.coalesce(*run_created_columns())
    rows = session.scalars(
        select(DagRun.end_date)
        .where(
            DagRun.dag_id == dag_id,
            DagRun.run_type != DagRunType.BACKFILL_JOB,
            made <= created,
            or_(DagRun.end_date.is_(None), DagRun.end_date > created),
        )
        .limit(MAX_IN_FLIGHT_READ + 1)
    ).all()
    known = [None if end is None or (before is not None and end >= before) else to_us(end) for end in rows]
    dead = tuple((to_us(start), to_us(end)) for start, end in down)
    freed = slot_freed(to_us(created), known, slots, dead, came_due=to_us(due))
    return None if freed is None else from_us(freed)
