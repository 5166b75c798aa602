"""``overlap="cancel_other"``: when a scheduled run starts, the DAG's older scheduled runs still in flight are failed.

Airflow has no hook when a tick comes due, but it tells its listeners when a run starts
(``on_dag_run_running``, in the scheduler, inside the transaction that starts it). A
``cancel_other`` DAG has two ``max_active_runs`` slots (:mod:`~tessera.operators.overlap_slots`),
so the tick's run is created and started while the older one still runs; this step then fails
the older one exactly as a person's "mark failed" does (Airflow's
``set_dag_run_state_to_failed``: its running tasks are failed, and their workers stop them at
their next heartbeat; its unstarted tasks are skipped), tells the other listeners it failed, and
recounts the DAG's runs in flight so the scheduler goes on creating its runs.
Airflow has no cancelled state, so the replaced run shows failed, with a note naming the run
that replaced it; the new run's note names the run it replaced; each replacement is an audit-log
entry (:data:`REPLACED_EVENT` on the replaced run, ``extra`` naming the new one) and a count of
``tessera.schedule.replaced_runs``. A replaced run is not a failure to
``pause_after_failures`` (:mod:`~tessera.operators.pauses.after_failures`).

Only scheduled runs replace and are replaced: a run a person or a backfill started is left alone.
Two schedulers starting runs of one DAG at once take the older runs' row locks before failing
them, so each older run is failed once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from airflow.api.common.mark_tasks import set_dag_run_state_to_failed
from airflow.listeners.listener import get_listener_manager
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.utils.sqlalchemy import with_row_locks
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType
from sqlalchemy import func, select

from .run_notes import Audit, append, at
from .schedules.runs import dag_of
from .stats import Metric, emit

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

REPLACED_EVENT = "tessera.schedule.replaced"
REPLACED_MESSAGE = "tessera: replaced by a newer scheduled run (overlap cancel_other)"
"""The ``msg`` the other listeners get for a replaced run (not one the run's RETRIES answer)."""
REPLACED_NOTE = "Replaced: failed when run "
"""How a replaced run's note line starts (the run that replaced it follows): the record that outlives the audit log."""
REPLACED_METRIC = Metric("tessera.schedule.replaced_runs", "counter")
IN_FLIGHT = (DagRunState.QUEUED, DagRunState.RUNNING)
MAX_REPLACED = 16
"""Older runs failed per start at most (a cancel_other DAG has two slots; more means someone ran by hand)."""


def replace_older_runs(dag_run: DagRun, session: Session) -> list[str]:
    """``on_dag_run_running``: fail the DAG's older scheduled runs in flight if its overlap is ``cancel_other``.

    Returns the run ids it failed.
    """
    if dag_run.run_type != DagRunType.SCHEDULED or dag_run.clear_number or dag_run.data_interval_end is None:
        return []
    dag = dag_of(dag_run, session)
    policy = getattr(getattr(dag, "timetable", None), "run_policy", None)
    if getattr(policy, "overlap", None) != "cancel_other":
        return []
    query = (
        select(DagRun)
        .where(
            DagRun.dag_id == dag_run.dag_id,
            DagRun.id != dag_run.id,
            DagRun.run_type == DagRunType.SCHEDULED,
            DagRun.state.in_(IN_FLIGHT),
            DagRun.data_interval_end < dag_run.data_interval_end,
        )
        .order_by(DagRun.data_interval_end)
        .limit(MAX_REPLACED)
    )
    locked = session.scalars(with_row_locks(query, of=DagRun, session=session))
    older = [run for run in locked if run.state in IN_FLIGHT]  # this session's own changes count
    replaced = []
    for run in older:
        set_dag_run_state_to_failed(dag=dag, run_id=run.run_id, commit=True, session=session)
        append(
            run,
            f"{REPLACED_NOTE}{dag_run.run_id} (due {at(dag_run.run_after)}) started, because this "
            f"run was still in flight (overlap cancel_other runs the newest fire).",
            session=session,
            audit=[
                Audit(
                    REPLACED_EVENT,
                    {"replaced_by": dag_run.run_id, "overlap": "cancel_other", "due": at(dag_run.run_after)},
                )
            ],
        )
        emit(REPLACED_METRIC, {"dag_id": run.dag_id}, where="core")
        replaced.append(run.run_id)
        log.info("tessera: %s run %s replaced by %s (overlap cancel_other)", run.dag_id, run.run_id, dag_run.run_id)
    if replaced:
        names = ", ".join(replaced)
        line = f"Replaced run(s) {names} still in flight when this fire came due (overlap cancel_other)."
        append(dag_run, line, session=session)
        session.flush()
        _slots_freed(dag_run.dag_id, session)
        for run in older:  # as Airflow's own "mark failed" does, after the state is written
            run.dag = dag
            try:
                get_listener_manager().hook.on_dag_run_failed(dag_run=run, msg=REPLACED_MESSAGE)
            except Exception:
                log.exception("tessera: a listener failed for the replaced run %s", run.run_id)
    return replaced


def _slots_freed(dag_id: str, session: Session) -> None:
    """Recount the DAG's runs in flight, as the scheduler does when a run it schedules finishes.

    The scheduler marks a DAG whose runs fill ``max_active_runs`` and creates none of its runs
    until it recounts, which it does only for runs it finishes itself; a run failed here would
    leave the DAG marked full, and the next ticks would wait for the new run to end.
    """
    model = session.get(DagModel, dag_id)
    if model is None:
        return
    active = session.scalar(
        select(func.count())
        .select_from(DagRun)
        .where(DagRun.dag_id == dag_id, DagRun.state.in_(IN_FLIGHT), DagRun.run_type != DagRunType.BACKFILL_JOB)
    )
    model.exceeds_max_non_backfill = (active or 0) >= (model.max_active_runs or 0)
