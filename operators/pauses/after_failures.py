"""Pause on failure: a DAG that opts in (``pause_after_failures=N``) is paused after N failed runs in a row.

Opt-in on every tessera timetable and declared schedule (``PAUSE_AFTER_FAILURES n``); without
it a DAG keeps running (and retrying, with :func:`~tessera.operators.backoff.backoff`) as before.
The scheduler-side listener calls :func:`pause_if_failing` when a run fails for good (a declared
schedule's RETRIES are used up, or it has none): it counts the DAG's finished runs, newest end
first, with the one reading of "consecutive failures" (:func:`~tessera.operators.backoff.consecutive_failures`):

* a failed run counts one, a successful run ends the count;
* a run that ``cancel_other`` replaced, a backfill's and an ``airflow dags test`` run do not count;
* runs that ended before tessera last paused the DAG for its failures do not count: unpausing it
  gives it N more tries;
* a run a person marked failed counts like any failed run (it is a failed run).

At N, the DAG is paused (:func:`~tessera.operators.pauses.notes.set_paused`, reason
``pause_after_failures``, a note naming the count and the newest failed run) in the transaction
that failed the run, the run's note says so, and the counter ``tessera.schedule.paused_after_failures``
is sent. Airflow's ``max_consecutive_failed_dag_runs`` differs; see the README.

Bounded: one query reading at most N + :data:`SLACK` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.models.log import Log
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunTriggeredByType, DagRunType
from sqlalchemy import func, or_, select

from ..backoff import consecutive_failures
from ..replaced_runs import REPLACED_EVENT
from ..run_notes import append
from ..schedules.identity import record_of
from ..schedules.runs import dag_of
from ..stats import Metric, emit
from ..tessera_names import AUDIT_OWNER
from .notes import AFTER_FAILURES, PAUSE_EVENT, set_paused

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

PAUSED_METRIC = Metric("tessera.schedule.paused_after_failures", "counter")
SLACK = 64
"""Runs read beyond N: replaced and test runs among the newest do not count but are read."""


def pause_limit(dag: Any) -> int | None:
    """The DAG's ``pause_after_failures``: its timetable's, else its declared schedule's record; ``None``: never."""
    policy = getattr(getattr(dag, "timetable", None), "run_policy", None)
    limit = getattr(policy, "pause_after_failures", None)
    if limit is None:
        limit = (record_of(getattr(dag, "default_args", None)) or {}).get("pause_after_failures")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None


def failed_in_a_row(session: Session, dag_id: str, *, enough: int) -> tuple[int, list[str]]:
    """How many of the DAG's newest finished runs failed in a row (up to ``enough``), and which."""
    last_pause = (
        select(func.max(Log.dttm))
        .where(Log.dag_id == dag_id, Log.event == PAUSE_EVENT, Log.extra.like(f'%"reason": "{AFTER_FAILURES}"%'))
        .scalar_subquery()
    )
    replaced = select(Log.run_id).where(Log.dag_id == dag_id, Log.event == REPLACED_EVENT, Log.run_id.is_not(None))
    rows = session.execute(
        select(DagRun.run_id, DagRun.state)
        .where(
            DagRun.dag_id == dag_id,
            DagRun.run_type != DagRunType.BACKFILL_JOB,
            # triggered_by is NULL on runs older than the column: SQL's != would drop them too.
            or_(DagRun.triggered_by.is_(None), DagRun.triggered_by != DagRunTriggeredByType.TEST),
            DagRun.state.in_([DagRunState.SUCCESS, DagRunState.FAILED]),
            DagRun.end_date.is_not(None),
            or_(last_pause.is_(None), DagRun.end_date > last_pause),
            DagRun.run_id.not_in(replaced),
        )
        .order_by(DagRun.end_date.desc(), DagRun.id.desc())
        .limit(enough + SLACK)
    ).all()
    failed = [run_id for run_id, state in rows if state == DagRunState.FAILED]
    count = consecutive_failures(((str(state), 1) for _, state in rows), enough=enough)
    return count, failed[:count]


def pause_if_failing(dag_run: DagRun, session: Session) -> bool:
    """``on_dag_run_failed`` (a failure for good): pause the DAG once ``pause_after_failures`` runs failed in a row."""
    if dag_run.run_type == DagRunType.BACKFILL_JOB or dag_run.triggered_by == DagRunTriggeredByType.TEST:
        return False
    limit = pause_limit(dag_of(dag_run, session))
    if limit is None:
        return False
    paused = session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == dag_run.dag_id))
    if paused:
        return False
    session.flush()  # this run's failure is in the session; the count must see it
    count, runs = failed_in_a_row(session, dag_run.dag_id, enough=limit)
    if count < limit:
        return False
    note = (
        f"Paused by tessera: {count} runs failed in a row (pause_after_failures {limit}), the newest "
        f"{dag_run.run_id}; unpause the DAG once the cause is fixed (it then gets {limit} more tries)."
    )
    set_paused(session, dag_run.dag_id, paused=True, note=note, by=AUDIT_OWNER, reason=AFTER_FAILURES, failed_runs=runs)
    line = f"Paused: the DAG is paused after {count} failed runs in a row (pause_after_failures {limit})."
    append(dag_run, line, session=session)
    emit(PAUSED_METRIC, {"dag_id": dag_run.dag_id}, where="core")
    return True
