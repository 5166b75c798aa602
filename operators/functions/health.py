"""The health gauge, emitted from the scheduler for every cursor function, whatever its runs do.

``seconds_since_last_success`` must keep growing exactly when nothing fires: while
ticks are skipped, while the function is paused, while its fires fail. A worker only
sets it when a fire ends, so the scheduler also emits it, on its own cadence.

Airflow 3.3 offers plugins no hook in the scheduler loop (listeners fire when a run
starts or ends, and a timetable may not touch the database). So the scheduler's
``on_starting`` listener hook starts :class:`HealthGauges`, a daemon thread that, every
``[scheduler] scheduler_heartbeat_sec`` seconds (default 5, the cadence at which the
scheduler heartbeats its own job), runs :func:`last_successes` (one grouped query for
every function, no per-DAG query) and emits one gauge per function that has ever
succeeded. It stops with the scheduler (``before_stopping``), at its first wait in a
job that has started and is not a running scheduler job (a triggerer, a dag-processor),
and after ``STARTUP_BOUND`` in a job built and never run; a process runs at most one (a
newer job's replaces it). A
function that never succeeded has no value to report; its status says ``NoFireYet``.

A clean success is a cursor task instance in state ``success`` with no fire record
(a failed fire and a dry run both leave one, see
:mod:`~tessera.operators.functions.record`). The query reads the successful cursor
task instances the metadata DB still holds (``airflow db clean`` bounds them).

Two writers, one fact. The gauge has two writers: the scheduler's thread and the worker
that ran the fire. They must agree on when the last clean success was, or a backend sees
the worker's 0 followed by a stale value from the scheduler (0.0, then 100.48 s). So the
worker sends its 0 only once the success is stored: from the task-instance listener
(:func:`clean_fire_stored`), which Airflow calls after the task's success has been reported
to the API server and committed, never from inside the fire. Every scheduler reading that
starts after the worker's point sees the same success; the fire itself sends no clean-success
point (a failed fire's point is computed from the same stored successes, so it agrees too).
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.state import TaskInstanceState
from sqlalchemy import and_, exists, func, select

from .._airflow import utcnow
from . import metrics
from .policy import CURSOR_TASK_TYPE
from .record import RECORD_KEY

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

SCHEDULER_JOB = "SchedulerJob"
STARTUP_BOUND = 120.0
"""Seconds a job may take from being built to running; a job built and never run is given up after it."""


def last_successes(session: Session) -> dict[tuple[str, str], datetime.datetime]:
    """``{(dag_id, task_id): end of its last clean fire}`` for every cursor function of a live DAG."""
    recorded = exists().where(
        and_(
            XComModel.dag_id == TaskInstance.dag_id,
            XComModel.task_id == TaskInstance.task_id,
            XComModel.run_id == TaskInstance.run_id,
            XComModel.map_index == TaskInstance.map_index,
            XComModel.key == RECORD_KEY,
        )
    )
    rows = session.execute(
        select(TaskInstance.dag_id, TaskInstance.task_id, func.max(TaskInstance.end_date))
        .join(DagModel, DagModel.dag_id == TaskInstance.dag_id)
        .where(
            DagModel.is_stale.is_(False),
            TaskInstance.operator == CURSOR_TASK_TYPE,
            TaskInstance.state == TaskInstanceState.SUCCESS,
            ~recorded,
        )
        .group_by(TaskInstance.dag_id, TaskInstance.task_id)
    )
    return {(dag_id, task_id): end for dag_id, task_id, end in rows if end is not None}


def emit_gauges(session: Session, now: datetime.datetime | None = None) -> int:
    """Emit ``seconds_since_last_success`` for every function that ever succeeded; how many were emitted."""
    now = now or utcnow()
    successes = last_successes(session)
    for (dag_id, task_id), end in successes.items():
        metrics.since_last_success(dag_id, task_id, max(0.0, (now - end).total_seconds()))
    return len(successes)


class HealthGauges(threading.Thread):
    """Emits the gauges every ``period`` seconds while ``job`` is a running scheduler job."""

    def __init__(self, job: Any, period: float, startup_bound: float = STARTUP_BOUND) -> None:
        super().__init__(name="tessera-health-gauges", daemon=True)
        self.job = job
        self.period = period
        self.startup_bound = startup_bound
        self.stopped = threading.Event()

    def run(self) -> None:
        from airflow.utils.session import create_session
        from airflow.utils.state import JobState

        # The job's type is set after on_starting, when its runner takes it, and its state when
        # it starts running, which a loaded machine may reach periods later (the scheduler builds
        # its executors and log server in between): wait for it, within STARTUP_BOUND.
        starting_until = time.monotonic() + self.startup_bound
        while not self.stopped.wait(self.period):
            if self.job.state is None and time.monotonic() < starting_until:
                continue
            if getattr(self.job, "job_type", None) != SCHEDULER_JOB or self.job.state != JobState.RUNNING:
                return
            try:
                with create_session() as session:
                    emit_gauges(session)
            except Exception:  # a lost data point is the lesser harm; the next period tries again
                log.warning("tessera: could not emit the cursor functions' health gauges", exc_info=True)

    def stop(self) -> None:
        self.stopped.set()


_running: list[HealthGauges] = []
"""The process's gauges thread, if any (one scheduler job per process)."""


def job_starting(component: Any) -> None:
    """``on_starting``: start the gauges for an Airflow job (only a running scheduler's keeps going)."""
    from airflow.configuration import conf
    from airflow.jobs.job import Job

    if not isinstance(component, Job):
        return
    for previous in _running:
        previous.stop()
    period = conf.getfloat("scheduler", "scheduler_heartbeat_sec", fallback=5.0)
    gauges = HealthGauges(component, max(period, 1.0))
    _running[:] = [gauges]
    gauges.start()


def job_stopping(component: Any) -> None:
    """``before_stopping``: stop the gauges of that job."""
    for gauges in [g for g in _running if g.job is component]:
        gauges.stop()
        _running.remove(gauges)


def clean_fire_stored(task_instance: Any) -> bool:
    """Worker side, after a task's success is stored: send 0 for a clean fire; whether it sent one.

    Called by the ``on_task_instance_success`` listener. Only a cursor function's task in a
    worker (a Task SDK task instance, whose ``end_date`` is the stored one) that left no fire
    record (a dry run leaves one) is a clean fire.
    """
    from .._airflow import runtime_task_instance

    if not isinstance(task_instance, runtime_task_instance()):
        return False  # a user marking a task success in the UI: the scheduler's next reading has it
    if task_instance.task.task_type != CURSOR_TASK_TYPE or task_instance.end_date is None:
        return False
    if task_instance.xcom_pull(task_ids=task_instance.task_id, key=RECORD_KEY) is not None:
        return False
    metrics.clean_success_stored(task_instance.dag_id, task_instance.task_id)
    return True
