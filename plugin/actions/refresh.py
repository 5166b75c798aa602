"""On-demand refresh: start a run now, unless one is in flight or has just succeeded.

Decision, for one DAG, in one transaction:

1. a run of the DAG is queued or running, whatever started it (the schedule, a
   backfill, a person, another refresh): **joined**, that run is returned;
2. else the most recently finished run succeeded less than 60 s ago: **coalesced**,
   that run is returned (a failed one does not count: its data is still stale);
3. else a manual run is **started** for the window of the newest occurrence.

Test runs are not refreshes and are never joined or returned: a run of ``airflow dags
test`` (triggered by ``test``) and a dry run (``{"dry_run": true}`` in its conf) leave
the data and the cursor as they were, so reporting one as fresh would be a lie.

Two refreshes arriving together, in any API server worker or process, must not both
reach step 3. The guard is in the database, not in memory: the new run's id is
derived from the newest run the decision saw (``tessera_refresh__after_<id>``), and
``(dag_id, run_id)`` is unique, so of two requests that saw the same history only one
can insert; the other's transaction fails, and it re-decides and joins the winner's
run. On PostgreSQL and MySQL the DAG row is also locked for the decision, so the
scheduler (which skips locked DAG rows) cannot create a scheduled run in between.

An on-demand run never moves the schedule: Airflow computes the next scheduled run
from the last *automated* run only, and a manual run leaves ``next_dagrun*`` alone.

A decision reads the DAG row once (locked) and the stored DAG once; what it refuses is
raised as the API's own errors (:mod:`tessera.plugin.errors`).
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunTriggeredByType, DagRunType
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError, OperationalError

from tessera.operators import run_notes
from tessera.operators.functions.policy import is_dry_run

from .._airflow import allowed_run_types, utcnow
from ..errors import Conflict, Invalid, NotFound, Unavailable
from ..fleet.schedules import is_scheduled, not_scheduled, read_latest
from ..scoped_reads import Scope, newest_run_pk, run_orm
from . import metrics
from .metrics import Outcome

if TYPE_CHECKING:
    from airflow.models.dagbag import DBDagBag
    from sqlalchemy.orm import Session

COALESCE_WINDOW = datetime.timedelta(seconds=60)
IN_FLIGHT = (DagRunState.QUEUED, DagRunState.RUNNING)
RUN_ID_PREFIX = "tessera_refresh__after_"
_ATTEMPTS = 6
_CANDIDATES = 20
"""Runs read per question; dry runs (a conf flag SQL cannot portably read) are dropped in Python.
Twenty dry runs in a row leave nothing to join or coalesce with: the refresh starts a run."""

MESSAGES: dict[Outcome, str] = {
    "started": "started a new run",
    "joined": "a run was already queued or running; joined it instead of starting another",
    "coalesced": "a run succeeded less than 60 s ago; returned it instead of running again",
}


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    run_id: str
    next_scheduled_run_after: datetime.datetime | None
    """The next scheduled run as the decision read it (an on-demand run never moves it)."""


def is_test_run(run: DagRun) -> bool:
    """A run of ``airflow dags test`` or a dry run: it refreshes nothing, so it never stands in for a refresh."""
    return run.triggered_by == DagRunTriggeredByType.TEST or is_dry_run(run.conf)


def _first_real(runs: Any) -> DagRun | None:
    return next((run for run in runs if not is_test_run(run)), None)


def in_flight_run(dag_id: str, session: Session) -> DagRun | None:
    """The newest queued or running run that is not a test run (among the newest few), of the route's DAG."""
    not_test = or_(DagRun.triggered_by.is_(None), DagRun.triggered_by != DagRunTriggeredByType.TEST)
    where = (DagRun.state.in_(IN_FLIGHT), not_test)
    scope = Scope.of([dag_id])  # the route's dependency authorized this DAG
    return _first_real(run_orm(session, scope, dag_id, *where, order=(DagRun.id.desc(),), limit=_CANDIDATES))


def latest_finished_run(dag_id: str, session: Session) -> DagRun | None:
    """The most recently finished run that is not a test run (among the newest few), of the route's DAG."""
    not_test = or_(DagRun.triggered_by.is_(None), DagRun.triggered_by != DagRunTriggeredByType.TEST)
    where = (DagRun.end_date.is_not(None), DagRun.state.not_in(IN_FLIGHT), not_test)
    order = (DagRun.end_date.desc(), DagRun.id.desc())
    return _first_real(run_orm(session, Scope.of([dag_id]), dag_id, *where, order=order, limit=_CANDIDATES))


def _check_refreshable(dag_model: DagModel | None, dag_id: str, dag_bag: DBDagBag, session: Session) -> Any:
    """The stored DAG to run, or the refusal: not a tessera DAG, unreadable, paused, broken, no manual runs."""
    if dag_model is None or dag_model.is_stale or not is_scheduled(dag_model):
        raise not_scheduled(session, dag_id, dag_model)
    dag, error = read_latest(dag_bag, dag_id, session)
    if error is not None:
        raise Invalid(f"dag_id: {dag_id!r} cannot be refreshed, {error}; fix the DAG file so it is parsed again")
    if dag is None:
        raise NotFound(f"dag_id: {dag_id!r} has no serialized version yet")
    if dag_model.is_paused:
        raise Conflict(f"dag_id: {dag_id!r} is paused; unpause it to refresh (a paused DAG runs nothing)")
    if dag_model.has_import_errors:
        raise Invalid(f"dag_id: {dag_id!r} has import errors; fix the DAG file to refresh it")
    allowed = allowed_run_types(dag_model)
    if allowed is not None and DagRunType.MANUAL not in allowed:
        raise Invalid(f"dag_id: {dag_id!r} does not allow manual runs")
    return dag


def _decide(
    dag_id: str, *, user: Any, triggered_by: DagRunTriggeredByType, dag_bag: DBDagBag, session: Session
) -> Decision:
    # FOR UPDATE is a no-op on SQLite, where a single writer and the unique run id do the work.
    dag_model = session.scalar(select(DagModel).where(DagModel.dag_id == dag_id).with_for_update())
    dag = _check_refreshable(dag_model, dag_id, dag_bag, session)
    scheduled = dag_model.next_dagrun_create_after
    # The slot is read before anything else: a run committed after this read is either seen
    # in flight below, or it took the same slot and this request's insert fails. (Reading it
    # last would let a run committed between the two reads go unseen by both.)
    newest = newest_run_pk(session, Scope.of([dag_id]), dag_id)
    if (live := in_flight_run(dag_id, session)) is not None:
        return Decision("joined", live.run_id, scheduled)
    now = utcnow()
    done = latest_finished_run(dag_id, session)
    if done is not None and done.state == DagRunState.SUCCESS and now - done.end_date < COALESCE_WINDOW:
        return Decision("coalesced", done.run_id, scheduled)
    run = dag.create_dagrun(
        run_id=f"{RUN_ID_PREFIX}{newest}",
        logical_date=now,
        data_interval=dag.timetable.infer_manual_data_interval(run_after=now),
        run_after=now,
        conf={},
        run_type=DagRunType.MANUAL,
        triggered_by=triggered_by,
        triggering_user_name=user.get_name(),
        state=DagRunState.QUEUED,
        session=session,
    )
    # Through the one writer, not create_dagrun(note=...): that parameter arrived in Airflow 3.2, and a
    # user's name is the caller's to choose, so the writer's cap on Airflow's note column applies.
    run_notes.append(run, f"On-demand refresh requested by {user.get_name()}", session=session)
    session.flush()  # the unique (dag_id, run_id) check happens here, inside the transaction
    return Decision("started", run.run_id, scheduled)


def refresh(dag_id: str, *, user: Any, triggered_by: DagRunTriggeredByType, dag_bag: DBDagBag) -> Decision:
    """Start, join or coalesce a run of ``dag_id``; see the module docstring."""
    metrics.count(metrics.REQUESTED, dag_id)
    for attempt in range(_ATTEMPTS):
        try:
            with create_session(scoped=False) as session:
                decision = _decide(dag_id, user=user, triggered_by=triggered_by, dag_bag=dag_bag, session=session)
        except (IntegrityError, OperationalError):
            # Another refresh took this slot first (unique run id), or held SQLite's write
            # lock: the transaction was rolled back; decide again on what it committed.
            metrics.count(metrics.RETRIED, dag_id)
            time.sleep(0.05 * (attempt + 1))
            continue
        metrics.count(metrics.OUTCOMES[decision.outcome], dag_id)
        return decision
    raise Unavailable(f"dag_id: {dag_id!r}: the database stayed busy; retry the refresh")
