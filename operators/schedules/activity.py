"""What a tessera DAG's runs did, read from the metadata database for the scheduler's run decision.

The timetable decides which run its overlap policy owes (a queued trigger, a replayed inactive
period; see :mod:`tessera.timetables.run_policy`) from the DAG's activity, which it does not read
itself: the plugin registers :func:`activity_of` as its reader. It runs in the scheduler, inside
the transaction that creates the run, through the session the DAG's row came from, in four
indexed queries (the newest scheduled run; the newest end before it was created; the ends of
the runs in flight when it was created, from which the moment a ``max_active_runs`` slot freed
follows; and the pause history since it was due), each bounded in rows.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from airflow.models.dag_version import DagVersion
from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import func, or_, select
from sqlalchemy.orm import object_session

from tessera.operators.functions.pause_history import paused_spans
from tessera.timetables.instants import from_us, to_us
from tessera.timetables.run_policy import RunActivity, slot_freed

from .._airflow import run_created_columns

MAX_IN_FLIGHT_READ = 1000
"""Runs in flight read at most: a DAG allowing more at once (an unlimited one) is never full."""

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
    return RunActivity(
        last_window_end=window_end,
        freed_before=freed_before,
        freed_after=_slot_freed(session, dag_id, created, slots, before),
        paused=tuple(paused_spans(session, dag_id, since=min(due, created), until=before)),
    )


def _slot_freed(
    session: Session, dag_id: str, created: datetime.datetime, slots: int, before: datetime.datetime | None
) -> datetime.datetime | None:
    """When a ``max_active_runs`` slot freed after ``created``: from the runs in flight then (ended by ``before``)."""
    if slots > MAX_IN_FLIGHT_READ:
        return created
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
    freed = slot_freed(to_us(created), known, slots)
    return None if freed is None else from_us(freed)
