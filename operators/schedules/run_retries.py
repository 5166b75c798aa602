"""RETRIES, RETRY_DELAY and TIMEOUT of a declared schedule: retries of the whole pipeline run, each attempt timed.

A declared schedule retries a failed *run*, not a task: when a pipeline's run fails (a task
failed, after any retries of its own) or runs past ``TIMEOUT`` (Airflow's ``dagrun_timeout``,
which fails the run and stops its unfinished tasks), the scheduler-side listener clears every
task instance that did not succeed and queues the run again, up to ``RETRIES`` times. Each
attempt is timed from its own start (Airflow times ``dagrun_timeout`` from the run's start,
which a re-queued run sets anew), so ``RETRIES 3`` with ``TIMEOUT 3600`` can take four hours,
plus the delays. A timed-out attempt is a failed attempt.

TIMEOUT stops the attempt before the next one starts: no two attempts of one task overlap.
Airflow's timeout marks the run's unfinished tasks skipped, and a running task's worker stops it
only at its next heartbeat; cleared straight away, the task would be started again for the next
attempt while the old process still runs. So a task the timeout caught running is cleared the way
Airflow clears a running task (``restarting``): the scheduler schedules it again only once its
executor reports the old process gone (or, if that never comes, once it missed its heartbeats).
A task the timeout caught queued but not started cannot start any more: clearing gives it a new
task-instance id, which its worker's start request does not find. The timeout is noticed when
the scheduler next examines the run, so a task may start in the moments between.

``RETRY_DELAY`` holds the queued attempt back: Airflow starts a queued run once its
``run_after`` has passed, so the run's ``run_after`` is moved to the moment the next attempt may
start, and put back to its occurrence when that attempt starts (it is recorded in Airflow's
audit log, event :data:`RETRY_EVENT`). The run's note says which attempt failed, why, and when
the next one may start. A retried run is not finished: AFTER fan-in and wave fail-fast wait for
its last attempt. A clear by a person counts as an attempt. ``airflow dags test`` runs and
backfills are never retried.
"""

from __future__ import annotations

import datetime
import json
from typing import TYPE_CHECKING

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.models.log import Log
from airflow.models.taskinstance import TaskInstance, clear_task_instances
from airflow.utils.state import DagRunState, TaskInstanceState
from airflow.utils.types import DagRunTriggeredByType, DagRunType
from sqlalchemy import select

from .._airflow import utcnow
from ..run_notes import Audit, append, at
from .runs import record_of_run

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RETRY_EVENT = "tessera.schedule.retry"
RETRIED_CAUSES = {"task_failure": "a task failed", "timed_out": "it ran past its TIMEOUT"}
"""The scheduler's reasons for failing a run that a retry answers; a person marking it failed is not one."""


def retry_failed_run(dag_run: DagRun, session: Session, msg: str) -> bool:
    """``on_dag_run_failed``: queue the run's next attempt if its schedule has one left; whether it did."""
    if msg not in RETRIED_CAUSES or dag_run.run_type == DagRunType.BACKFILL_JOB:
        return False
    if dag_run.triggered_by == DagRunTriggeredByType.TEST:
        return False
    record = record_of_run(dag_run, session)
    retries = int((record or {}).get("retries") or 0)
    if not retries:
        return False
    attempt, attempts = dag_run.clear_number + 1, retries + 1
    cause = RETRIED_CAUSES[msg]
    if attempt >= attempts:
        line = f"Failed: attempt {attempt} of {attempts} failed ({cause}); RETRIES {retries} used up."
        append(dag_run, line, session=session)
        return False
    original = dag_run.run_after
    tis = [ti for ti in dag_run.get_task_instances(session=session) if ti.state != TaskInstanceState.SUCCESS]
    stopped = [ti for ti in tis if _caught_running(ti, msg)]
    clear_task_instances(tis, session, dag_run_state=DagRunState.QUEUED)
    for ti in stopped:
        ti.state = TaskInstanceState.RESTARTING  # as Airflow clears a running task: rescheduled once it stopped
    delay = datetime.timedelta(seconds=float((record or {}).get("retry_delay") or 0))
    starts = max(original, utcnow() + delay)
    dag_run.run_after = starts
    extra = {"attempt": attempt + 1, "of": attempts, "cause": msg, "run_after": original.isoformat()}
    append(
        dag_run,
        f"Retry: attempt {attempt} of {attempts} failed ({cause}); attempt {attempt + 1} may start at {at(starts)}.",
        session=session,
        audit=[Audit(RETRY_EVENT, extra)],
    )
    _hold_the_slot(dag_run, session)
    return True


def _caught_running(ti: TaskInstance, msg: str) -> bool:
    """Whether the run's timeout caught ``ti`` running: it skipped it (no end) after its worker started it."""
    return (
        msg == "timed_out"
        and ti.state == TaskInstanceState.SKIPPED
        and ti.start_date is not None
        and ti.end_date is None
    )


def _hold_the_slot(dag_run: DagRun, session: Session) -> None:
    """The re-queued run is active again: no new run may be created beside it beyond ``max_active_runs``.

    The scheduler re-counts a DAG's active runs after its runs change state; on the timeout
    path it counted before this listener queued the run again, so count again here.
    """
    dag_model = session.get(DagModel, dag_run.dag_id)
    if dag_model is None:
        return
    session.flush()
    active = DagRun.active_runs_of_dags(dag_ids=[dag_run.dag_id], exclude_backfill=True, session=session)
    dag_model.exceeds_max_non_backfill = active.get(dag_run.dag_id, 0) >= (dag_model.max_active_runs or 0)


def attempt_started(dag_run: DagRun, session: Session) -> None:
    """``on_dag_run_running``: a retried attempt starts: its ``run_after`` is its occurrence's again."""
    if dag_run.clear_number < 1:
        return
    extra = session.scalar(
        select(Log.extra)
        .where(Log.dag_id == dag_run.dag_id, Log.run_id == dag_run.run_id, Log.event == RETRY_EVENT)
        .order_by(Log.id.desc())
        .limit(1)
    )
    try:
        original = datetime.datetime.fromisoformat(json.loads(extra or "")["run_after"])
    except (ValueError, KeyError, TypeError):
        return
    if dag_run.run_after != original:
        dag_run.run_after = original
