"""Admission: whether a tick of a cursor-carrying function may fire, decided in the scheduler.

The decision is taken once per run, when the scheduler moves it from queued to
running (the ``on_dag_run_running`` listener), in the scheduler's own transaction,
before any of its task instances can be queued. A declined cursor task instance
is set to ``skipped`` (so downstream tasks skip too and the run is not a failure)
and gets a :class:`~tessera.operators.functions.record.FireRecord` with the reason:

* ``MissedDeadline``: a scheduled tick older than its timetable's
  ``starting_deadline`` when the scheduler got to it;
* ``ConcurrencyForbidden``: the task's policy is Forbid and another run of the
  same task is still in flight (a run-now obeys this too);
* ``DispatchCapReached``: a scheduled tick while the deployment already has
  ``[tessera] max_concurrent_dispatches`` cursor fires in flight. A run-now (or a
  backfill, or a cleared run) is never dropped for the cap: it waits for a slot of
  the :data:`DISPATCH_POOL` pool, which has exactly that many slots;
* ``Suspended``: a run-now created while the DAG was paused (Airflow would fire it on
  unpause; a suspended function ignores it), per
  :mod:`~tessera.operators.pauses.history`;
* ``DispatchStartFailed``: the HTTP function's Airflow connection is not defined, so
  the fire could not start (found here, not by a worker at fire time).

A scheduled tick also reports the ticks the schedule passed over since the previous
one (:mod:`~tessera.operators.functions.missed_ticks`): a skip event in Airflow's
audit log (:mod:`~tessera.operators.functions.skip_events`) and the skips metric.

Why here and not in the worker: a worker only sees its own DAG through the
Execution API, and by the time it starts the pool has already made it wait. The
pool stays the hard bound; the admission only decides skip-versus-wait. Two
schedulers admitting at the same instant may both admit; the pool and, under
Forbid, ``max_active_tis_per_dag=1`` then make the extra fire wait, never overlap.
"""

from __future__ import annotations

import datetime
import importlib
import logging
from typing import TYPE_CHECKING, Any

from airflow.models.dagrun import DagRun
from airflow.models.pool import Pool
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.state import DagRunState, TaskInstanceState
from airflow.utils.types import DagRunType
from sqlalchemy import and_, insert, or_, select, update

from tessera.timetables.policies import missed_deadline

from .._airflow import dialect_name, task_states, utcnow
from ..pauses.history import was_paused_at_creation
from . import metrics, skip_events
from .missed_ticks import missed_ticks
from .policy import (
    CAP_OPTION,
    CONFIG_SECTION,
    CURSOR_TASK_TYPE,
    DISPATCH_POOL,
    dispatch_cap,
    is_dry_run,
)
from .record import RECORD_KEY, FireRecord, Phase, SkipReason, iso
from .spec_reasons import connection_missing

if TYPE_CHECKING:
    from sqlalchemy.orm import Session
    from sqlalchemy.sql.expression import Executable

log = logging.getLogger(__name__)

# A fire is in flight from admission until its task instance finishes; None means
# "admitted, not scheduled yet" (the task may be waiting for upstream tasks).
_UNFINISHED = task_states(
    "SCHEDULED", "QUEUED", "RUNNING", "RESTARTING", "UP_FOR_RETRY", "UP_FOR_RESCHEDULE", "DEFERRED", "AWAITING_INPUT"
)


def ensure_dispatch_pool(session: Session) -> None:
    """Create the dispatch pool, or resize it, so its slots equal the configured cap.

    Idempotent within one transaction and across schedulers, with no savepoint of its own: every
    write is a Core statement executed at once (the scheduler's session never autoflushes,
    so an ORM ``add`` would be invisible to the next admission's lookup and insert twice),
    and the insert ignores a row another scheduler inserted first.
    """
    cap = dispatch_cap()
    description = f"tessera: cursor fires in flight (airflow.cfg [{CONFIG_SECTION}] {CAP_OPTION})"
    slots = session.scalar(select(Pool.slots).where(Pool.pool == DISPATCH_POOL))
    if slots == cap:
        return  # the steady state: one read per admission, no write
    log.info("sizing pool %s to [%s] %s = %d", DISPATCH_POOL, CONFIG_SECTION, CAP_OPTION, cap)
    if slots is None:
        row = {"pool": DISPATCH_POOL, "slots": cap, "description": description, "include_deferred": True}
        session.execute(_insert_ignoring_duplicates(session, row))
    session.execute(
        update(Pool)
        .where(Pool.pool == DISPATCH_POOL, Pool.slots != cap)
        .values(slots=cap, description=description, include_deferred=True)
    )


def _insert_ignoring_duplicates(session: Session, row: dict[str, Any]) -> Executable:
    # "on conflict do nothing" waits for a concurrent insert of the same name and then skips:
    # unlike catching the IntegrityError, it never aborts the scheduler's (PostgreSQL) transaction.
    dialect = dialect_name(session)
    if dialect in ("postgresql", "sqlite"):
        dialect_insert = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert
        return dialect_insert(Pool).values(row).on_conflict_do_nothing()
    return insert(Pool).values(row).prefix_with("IGNORE")


def _in_flight(session: Session, dag_run: DagRun, *conditions: Any) -> list[tuple[str, Any]]:
    """(run_id, conf) of other running runs with an unfinished task instance matching ``conditions``."""
    rows = session.execute(
        select(DagRun.run_id, DagRun.conf)
        .join(TaskInstance, (TaskInstance.dag_id == DagRun.dag_id) & (TaskInstance.run_id == DagRun.run_id))
        .where(
            DagRun.state == DagRunState.RUNNING,
            DagRun.id != dag_run.id,
            or_(TaskInstance.state.in_(_UNFINISHED), TaskInstance.state.is_(None)),
            *conditions,
        )
    )
    return [(run_id, conf) for run_id, conf in rows if not is_dry_run(conf)]


def _parked() -> Any:
    """A task instance not queued yet in a run of a paused DAG: nothing schedules it until the DAG is unpaused.

    Counted as in flight, such leftovers of a function paused mid-fire would hold cap slots
    indefinitely and starve every other function. The pool still bounds them if they resume.
    """
    from airflow.models.dag import DagModel

    paused = select(DagModel.dag_id).where(DagModel.is_paused.is_(True))
    unqueued = or_(TaskInstance.state.is_(None), TaskInstance.state == TaskInstanceState.SCHEDULED)
    return and_(unqueued, DagRun.dag_id.in_(paused))


def _is_tick(dag_run: DagRun) -> bool:
    # A cleared scheduled run is a person asking again: like a run-now, it waits.
    return dag_run.run_type == DagRunType.SCHEDULED and not dag_run.clear_number


def _deadline(dag: Any) -> datetime.timedelta | None:
    # Only tessera timetables have a starting deadline.
    return getattr(dag.timetable, "starting_deadline", None)


def _suspended(session: Session, dag_run: DagRun) -> bool:
    """A run-now created while the DAG was paused (cleared: re-queued while paused)."""
    if dag_run.run_type != DagRunType.MANUAL:
        return False  # a paused DAG gets no scheduled runs; backfills are their own request
    created = dag_run.queued_at or dag_run.start_date
    return created is not None and was_paused_at_creation(session, dag_run.dag_id, created)


def _reason(
    dag: Any,
    dag_run: DagRun,
    task: Any,
    session: Session,
    now: datetime.datetime,
    cap: int | None,
    suspended: bool,
) -> tuple[SkipReason, str] | None:
    if suspended:
        return SkipReason.SUSPENDED, _message(SkipReason.SUSPENDED)
    tick = _is_tick(dag_run)
    if tick and missed_deadline(dag_run.run_after, now, _deadline(dag)):
        return SkipReason.MISSED_DEADLINE, _message(SkipReason.MISSED_DEADLINE)
    if (missing := connection_missing(getattr(task, "http_conn_id", None), session)) is not None:
        return SkipReason.DISPATCH_START_FAILED, missing
    if task.max_active_tis_per_dag == 1 and _in_flight(
        session,
        dag_run,
        DagRun.dag_id == dag_run.dag_id,
        TaskInstance.task_id == task.task_id,
    ):
        return SkipReason.CONCURRENCY_FORBIDDEN, _message(SkipReason.CONCURRENCY_FORBIDDEN)
    if tick and cap is not None and task.pool == DISPATCH_POOL:
        if len(_in_flight(session, dag_run, TaskInstance.pool == DISPATCH_POOL, ~_parked())) >= cap:
            return SkipReason.DISPATCH_CAP_REACHED, _message(SkipReason.DISPATCH_CAP_REACHED)
    return None


def admit(dag_run: DagRun, session: Session, *, now: datetime.datetime | None = None) -> dict[str, SkipReason]:
    """Decline the run's cursor tasks that may not fire; returns ``{task_id: reason}`` for those declined."""
    dag = dag_run.dag if getattr(dag_run, "dag", None) is not None else None
    if dag is None:
        from airflow.models.dagbag import DBDagBag

        dag = DBDagBag().get_dag_for_run(dag_run, session=session)
    if dag is None:
        return {}
    cursor_tasks = {task.task_id: task for task in dag.tasks if task.task_type == CURSOR_TASK_TYPE}
    if not cursor_tasks:
        return {}
    pooled = any(task.pool == DISPATCH_POOL for task in cursor_tasks.values())
    if is_dry_run(dag_run.conf):
        if pooled:  # never declined, but its fire waits for a slot too: the pool must exist
            ensure_dispatch_pool(session)
        return {}
    now = now or utcnow()
    # The scheduler starts every queued run of a loop in one transaction, without autoflush:
    # the runs it already moved to running (and the cursor tasks it already declined) are
    # only in this session until flushed. Unflushed, every run of a burst (after a restart,
    # a backfill) would find nothing in flight, and Forbid and the cap would admit them all.
    session.flush()
    cap = dispatch_cap() if pooled else None
    pending = session.scalars(
        select(TaskInstance).where(
            TaskInstance.dag_id == dag_run.dag_id,
            TaskInstance.run_id == dag_run.run_id,
            TaskInstance.task_id.in_(cursor_tasks),
            TaskInstance.state.is_(None),
        )
    ).all()
    # Decide everything first, write last: the listener runs this step in a savepoint of the
    # scheduler's transaction, so a failure is undone, and deciding first keeps the writes few.
    suspended = _suspended(session, dag_run)
    decisions = [(ti, _reason(dag, dag_run, cursor_tasks[ti.task_id], session, now, cap, suspended)) for ti in pending]
    passed_over = missed_ticks(session, dag, dag_run) if _is_tick(dag_run) else []
    if pooled:
        ensure_dispatch_pool(session)
    for task_id in cursor_tasks:
        for event in passed_over:
            skip_events.write(
                session, dag_id=dag_run.dag_id, task_id=task_id, run_id=dag_run.run_id, event=event, passed_over=True
            )
            metrics.tick_skipped(dag_run.dag_id, task_id, event.reason, in_task=False, count=event.count)
            log.info(
                "tessera: %s.%s: %s%d ticks from %s to %s skipped before run %s: %s",
                dag_run.dag_id,
                task_id,
                "at least " if event.at_least else "",
                event.count,
                event.first,
                event.last,
                dag_run.run_id,
                event.reason,
            )
    declined: dict[str, SkipReason] = {}
    for ti, decision in decisions:
        if decision is None:
            continue
        reason, message = decision
        ti.state = TaskInstanceState.SKIPPED
        ti.start_date = ti.end_date = now
        ti.duration = 0
        record = FireRecord(Phase.SKIPPED, iso(now), reason=reason.value, message=message)
        XComModel.set(
            RECORD_KEY,
            record.to_json(),
            dag_id=ti.dag_id,
            task_id=ti.task_id,
            run_id=ti.run_id,
            map_index=ti.map_index,
            serialize=False,  # stored as plain JSON, exactly as the worker's XCom push stores it
            session=session,
        )
        declined[ti.task_id] = reason
        metrics.tick_skipped(ti.dag_id, ti.task_id, reason.value, in_task=False)
        skip_events.write(
            session,
            dag_id=ti.dag_id,
            task_id=ti.task_id,
            run_id=ti.run_id,
            event=skip_events.SkipEvent(reason.value, 1, dag_run.run_after, dag_run.run_after, message),
        )
        log.info("tessera: %s.%s run %s skipped: %s", ti.dag_id, ti.task_id, ti.run_id, reason.value)
    return declined


def _message(reason: SkipReason) -> str:
    return {
        SkipReason.MISSED_DEADLINE: "the tick was older than the timetable's starting_deadline",
        SkipReason.CONCURRENCY_FORBIDDEN: "an earlier fire was still in flight and the policy is Forbid",
        SkipReason.DISPATCH_CAP_REACHED: f"[{CONFIG_SECTION}] {CAP_OPTION} fires were already in flight",
        SkipReason.SUSPENDED: "run-now requested while the DAG was paused; a suspended function ignores it",
    }.get(reason, reason.value)
