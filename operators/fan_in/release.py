"""Scheduler side of AFTER fan-in: turn completed fires into asset events, and annotate the runs they release.

Called by the tessera listener (``plugin/listener.py``) inside the scheduler's
own transaction, through the dag run's session: the asset event, the queue rows
Airflow adds for the children (``asset_dag_run_queue``) and the run's new state
commit together or not at all, and SQLite sees a single writer.

The child's schedule is ``AssetAll`` over its parents' assets. Airflow keeps one
queue row per (asset, child) however many events arrive, creates the child run
once every parent has a row, and deletes the rows it consumed: a parent that
completes several fires before the others complete one releases the child once.
"""

from __future__ import annotations

import datetime
import logging
from typing import TYPE_CHECKING, Any

from tessera.operators.schedules.fires import FIRE_RUN_TYPES, fire_complete, runs_of_fire
from tessera.operators.schedules.identity import asset_uri, schedule_of_uri, schedules_in_tags
from tessera.operators.schedules.runs import (
    dag_of,
    pipeline_run,
    record_of_run,
    runs_by_pipeline,
    schedule_asset_id,
)
from tessera.operators.schedules.state import read_state, write_state

from .._airflow import utcnow
from ..run_notes import append
from .aligned import aligned_consumers, release_aligned, window_line
from .freshness import ParentFire, release_note, stale_parents
from .queue import queue_children

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

FIRES_KEY = "fires"
"""State store key of a schedule's asset: ``{"count", "last_fire", "completed_at", "runs"}``."""
STALE_METRIC = "tessera.schedule.stale_parent"


def run_finished(dag_run: DagRun, session: Session) -> list[str]:
    """Record each schedule fire that ``dag_run`` completes; return the schedules recorded.

    A completed fire becomes one event on the schedule's asset (what releases AFTER
    children) and an updated ``fires`` entry in that asset's state store (what the
    in-run sensor watches). Each fire is recorded once, and never after a newer one.
    """
    if str(dag_run.run_type) not in FIRE_RUN_TYPES:
        return []
    names = schedules_in_tags(getattr(dag_of(dag_run, session), "tags", None) or ())
    mine = pipeline_run(dag_run) if names else None
    if mine is None:
        return []
    recorded = []
    for name in names:
        asset_id = schedule_asset_id(name, session, lock=True)
        if asset_id is None:
            continue  # no DAG waits on this schedule (no child, no sensor): nothing to release
        runs = runs_by_pipeline(name, dag_run, session)
        if not fire_complete(mine.fire, runs):
            continue
        stored = read_state(asset_id, FIRES_KEY, session) or {}
        if stored.get("last_fire", "") >= mine.fire:
            continue
        members = [f"{run.dag_id}/{run.run_id} ({run.state})" for run in runs_of_fire(mine.fire, runs)]
        _emit(asset_id, dag_run, {"schedule": name, "fire": mine.fire, "runs": members}, session)
        for child in release_aligned(asset_id, mine.fire, session):
            log.info("Schedule %s completed window %s: released aligned child %s", name, mine.fire, child)
        state = {
            "count": int(stored.get("count", 0)) + 1,
            "last_fire": mine.fire,
            "completed_at": utcnow().isoformat(),
            "runs": members,
        }
        write_state(asset_id, FIRES_KEY, state, session)
        log.info("Schedule %s completed fire %s: %s", name, mine.fire, ", ".join(members))
        recorded.append(name)
    return recorded


def _emit(asset_id: int, dag_run: DagRun, facts: dict[str, Any], session: Session) -> None:
    """One event on the schedule's asset, and a queue row for each unpaused DAG scheduled on it.

    What ``AssetManager.register_asset_change`` records for a plain asset, written here
    (see :mod:`.queue` for why its queue rows are not Airflow's): the existing row of a
    child already waiting on this schedule is kept, which is what releases it once.
    """
    from airflow.models.asset import AssetEvent, DagScheduleAssetReference
    from airflow.models.dag import DagModel
    from sqlalchemy import select

    event = AssetEvent(
        asset_id=asset_id, extra={"tessera": facts}, source_dag_id=dag_run.dag_id, source_run_id=dag_run.run_id
    )
    session.add(event)
    session.flush()  # the event must be older than the queue rows: Airflow reads events up to them
    consumers = session.scalars(
        select(DagScheduleAssetReference.dag_id)
        .join(DagModel, DagModel.dag_id == DagScheduleAssetReference.dag_id)
        .where(DagScheduleAssetReference.asset_id == asset_id, DagModel.is_paused.is_(False))
    ).all()
    aligned = set(aligned_consumers(asset_id, session))  # queued per whole window, by release_aligned
    queue_children([(asset_id, dag_id) for dag_id in consumers if dag_id not in aligned], session)


def last_completed(parents: list[str], session: Session) -> dict[str, datetime.datetime | None]:
    """When each parent schedule last completed a fire (its newest asset event); ``None``: never."""
    from airflow.models.asset import AssetEvent, AssetModel
    from sqlalchemy import func, select

    rows = session.execute(
        select(AssetModel.uri, func.max(AssetEvent.timestamp))
        .join(AssetEvent, AssetEvent.asset_id == AssetModel.id)
        .where(AssetModel.uri.in_([asset_uri(parent) for parent in parents]))
        .group_by(AssetModel.uri)
    ).all()
    found: dict[str, datetime.datetime | None] = dict.fromkeys(parents)
    for uri, newest in rows:
        found[schedule_of_uri(uri) or uri] = newest
    return found


def run_started(dag_run: DagRun, session: Session) -> str | None:
    """Note on an AFTER schedule's run which parent fires released it and which parents are stale.

    Returns the note written, or ``None`` for a run that is not an AFTER fire or manual run.
    """
    if str(dag_run.run_type) not in ("asset_triggered", "manual"):
        return None
    record = record_of_run(dag_run, session)
    if record is None or not record.get("after"):
        return None
    name, parents, hours = (
        record["name"],
        list(record["after"]),
        float(record.get("parent_freshness_hours") or 0),
    )
    released = [
        ParentFire(parent, event.timestamp, tuple((event.extra or {}).get("tessera", {}).get("runs", ())))
        for event in dag_run.consumed_asset_events
        if (parent := schedule_of_uri(event.asset.uri)) is not None
    ]
    last = last_completed(parents, session)
    now = utcnow()
    stale = stale_parents(parents, last, now=now, hours=hours)
    if stale:
        from tessera.operators.stats import Metric, emit

        log.warning(
            "Schedule %s run %s of %s proceeds with stale parents (no completed fire within %g h): %s",
            name, dag_run.run_id, dag_run.dag_id, hours, ", ".join(stale),
        )  # fmt: skip
        for parent in stale:  # per-DAG name: tessera.schedule.stale_parent.<dag_id>, schedule and parent as tags
            tags = {"dag_id": dag_run.dag_id, "schedule": name, "parent": parent}
            emit(Metric(STALE_METRIC, "counter"), tags, where="core")
    note = release_note(released, stale, last, now=now, hours=hours)
    if record.get("align_window"):
        consumed = [
            (e.asset.uri, (e.extra or {}).get("tessera", {}).get("fire", "")) for e in dag_run.consumed_asset_events
        ]
        note = "\n".join(filter(None, [window_line(consumed, parents), note]))
    append(dag_run, note, session=session)
    return note or None
