"""The status of a scheduled cursor-carrying function, derived from Airflow's run history.

Nothing is stored for the status itself: every call re-derives it from the DAG's
runs, the cursor task's instances and the records fires and declined ticks left
(how one run reads is :mod:`tessera.operators.functions.history`). So it cannot drift
from what Airflow shows, and a function that fails every fire stays not-Ready
between ticks. It reads the metadata database, so it runs where that is reachable
(API server, scheduler, CLI), never in a worker.

A paused DAG creates no runs; the newest tick it slept through is reported as
declined with reason ``Suspended`` (and advances lastScheduleTime). Ticks that never
became runs (passed over after downtime, or slept through while paused) are read
from the newest skip event the admission wrote (see
:mod:`~tessera.operators.functions.missed_ticks`); they advance lastScheduleTime and
lastSkipTime too.

SpecValid names the problem: the refused field's reason from the DAG file's import
error (``CronInvalid``, ``InputInvalid``, ``CursorPointerInvalid``... see
:mod:`~tessera.operators.functions.spec_reasons`), or ``ConnectionMissing`` when the
HTTP function's Airflow connection is not defined. Ready mirrors it.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from airflow.configuration import conf
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.models.errors import ParseImportError
from airflow.models.serialized_dag import SerializedDagModel
from airflow.timetables.base import DataInterval, TimeRestriction
from airflow.utils.session import NEW_SESSION, provide_session
from airflow.utils.types import DagRunType
from sqlalchemy import select, tuple_

from tessera.timetables.base import TesseraTimetable
from tessera.timetables.support import next_run_info, run_info

from .._airflow import utcnow
from . import skip_events
from .history import load_histories
from .policy import CURSOR_TASK_TYPE
from .spec_reasons import CONNECTION_MISSING, connections_missing, spec_reason
from .status_summary import Condition, FunctionStatus, summarise

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _cursor_task(dag: Any, dag_id: str, task_id: str | None) -> str:
    names = [task.task_id for task in dag.tasks if task.task_type == CURSOR_TASK_TYPE]
    if task_id is not None:
        if task_id not in names:
            raise LookupError(f"task_id: {task_id!r}; DAG {dag_id!r} has no such cursor function (has {names})")
        return task_id
    if len(names) != 1:
        raise LookupError(f"task_id: None; DAG {dag_id!r} has {len(names)} cursor functions {names}: name one")
    return names[0]


def _spec_valid(dag_model: DagModel, missing: str | None, import_errors: dict[tuple[str, str], str]) -> Condition:
    """``missing``: why its connection cannot be used; ``import_errors``: the stack traces of the broken files."""
    if not dag_model.has_import_errors:
        if missing is not None:
            return Condition("SpecValid", "False", CONNECTION_MISSING, missing)
        return Condition("SpecValid", "True", "Parsed")
    stacktrace = import_errors.get((dag_model.bundle_name, dag_model.relative_fileloc))
    lines = (stacktrace or "").strip().splitlines()
    message = lines[-1] if lines else "the DAG file has an import error"
    return Condition("SpecValid", "False", spec_reason(message), message)


def _import_errors(models: Iterable[DagModel], session: Session) -> dict[tuple[str, str], str]:
    """The stack trace of each broken DAG file among ``models``' (none read while none is broken)."""
    files = sorted({(m.bundle_name, m.relative_fileloc) for m in models if m.has_import_errors})
    if not files:
        return {}
    rows = session.execute(
        select(ParseImportError.bundle_name, ParseImportError.filename, ParseImportError.stacktrace).where(
            tuple_(ParseImportError.bundle_name, ParseImportError.filename).in_(files)
        )
    )
    return {(bundle, filename): stacktrace or "" for bundle, filename, stacktrace in rows}


def _suspended_tick(dag: Any, newest_tick: DagRun | None, now: datetime.datetime) -> datetime.datetime | None:
    """The newest tick that came due while the DAG was paused, if any (its timetable decides)."""
    last = None
    if newest_tick is not None and newest_tick.data_interval_start is not None:
        interval = DataInterval(newest_tick.data_interval_start, newest_tick.data_interval_end)
        last = run_info(newest_tick.run_after, interval)
    restriction = TimeRestriction(earliest=dag.start_date, latest=None, catchup=False)
    try:
        info = next_run_info(dag.timetable, last_dagrun_info=last, restriction=restriction)
    except Exception:  # a broken timetable is reported by SpecValid, not here
        return None
    if info is None or info.run_after > now:
        return None
    if newest_tick is not None and info.run_after <= newest_tick.run_after:
        return None
    return info.run_after


@provide_session
def function_status(
    dag_id: str,
    task_id: str | None = None,
    *,
    history: int = 200,
    now: datetime.datetime | None = None,
    session: Session = NEW_SESSION,
) -> FunctionStatus:
    """Derive the status of the cursor function ``task_id`` (the DAG's only one if None) of ``dag_id``.

    :param history: how many of the newest runs to read; ``consecutive_failures`` counts within them.
    :param now: the instant to judge heartbeats and paused ticks against (default: now).
    :raises LookupError: no such DAG, or no (single) cursor function in it.
    """
    if task_id is None:
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        if dag is None:
            raise LookupError(f"dag_id: {dag_id!r}; no such DAG has been parsed")
        task_id = _cursor_task(dag, dag_id, None)
    status = function_statuses([(dag_id, task_id)], history=history, now=now, session=session)[dag_id, task_id]
    if isinstance(status, Exception):
        raise status
    return status


def function_statuses(
    functions: Sequence[tuple[str, str]],
    *,
    history: int = 200,
    now: datetime.datetime | None = None,
    session: Session,
) -> dict[tuple[str, str], FunctionStatus | Exception]:
    """:func:`function_status` of each ``(dag_id, task_id)``, in a number of queries that does not grow with them.

    A status page shows many functions at once: their DAG rows, stored versions, runs, task
    instances, fire records, skip events, import errors and connections are each read once for
    all of them. A function whose status cannot be derived (no such DAG or cursor task, a stored
    version that no longer decodes) gets the exception instead, the others their status.
    """
    if not functions:
        return {}
    now = now or utcnow()
    dag_ids = sorted({dag_id for dag_id, _ in functions})
    models = {m.dag_id: m for m in session.scalars(select(DagModel).where(DagModel.dag_id.in_(dag_ids)))}
    dags: dict[str, Any] = {}
    for row in SerializedDagModel.get_latest_serialized_dags(dag_ids=dag_ids, session=session):
        try:
            dags[row.dag_id] = row.dag
        except Exception as error:  # this DAG's status fails, not the others'
            dags[row.dag_id] = error
    statuses: dict[tuple[str, str], FunctionStatus | Exception] = {}
    tasks = {}
    for dag_id, task_id in functions:
        dag = dags.get(dag_id)
        try:
            if isinstance(dag, Exception):
                raise dag
            if models.get(dag_id) is None or dag is None:
                raise LookupError(f"dag_id: {dag_id!r}; no such DAG has been parsed")
            tasks[dag_id, task_id] = dag.get_task(_cursor_task(dag, dag_id, task_id))
        except Exception as error:
            statuses[dag_id, task_id] = error
    timeout = conf.getint("scheduler", "task_instance_heartbeat_timeout", fallback=300)
    stale = now - datetime.timedelta(seconds=timeout)
    histories = load_histories(session, list(tasks), limit=history, stale=stale)
    passed_over = skip_events.newest_passed_over_of(session, list(tasks))
    conn_ids = {function: getattr(task, "http_conn_id", None) for function, task in tasks.items()}
    missing = connections_missing(sorted({c for c in conn_ids.values() if isinstance(c, str) and c}), session)
    import_errors = _import_errors([models[dag_id] for dag_id, _ in tasks], session)
    for (dag_id, task_id), task in tasks.items():
        dag_model, dag = models[dag_id], dags[dag_id]
        runs, readings = histories[dag_id, task_id]
        slept = None
        if dag_model.is_paused:
            newest_tick = next((run for run in runs if run.run_type == DagRunType.SCHEDULED), None)
            slept = _suspended_tick(dag, newest_tick, now)
        store = getattr(task, "cursor_store", None)
        spec_valid = _spec_valid(dag_model, missing.get(conn_ids[dag_id, task_id]), import_errors)
        status = summarise(
            dag_model,
            task_id,
            store if isinstance(store, dict) else None,
            readings,
            slept,
            passed_over.get((dag_id, task_id)),
            spec_valid,
        )
        # The next fire is shown as its nominal instant, as the schedule states it; the phase (or an
        # anti-herd offset) only moves when the run may start, which next_start_time says.
        statuses[dag_id, task_id] = dataclasses.replace(status, next_fire_time=_nominal_next(dag, dag_model))
    return statuses


def _nominal_next(dag: Any, dag_model: DagModel) -> datetime.datetime | None:
    """The stored next run's occurrence, as a tessera timetable reads it (else Airflow's run_after)."""
    if isinstance(dag.timetable, TesseraTimetable):
        stored = dag.timetable.plan.next_stored(dag_model)
        if stored is not None:
            return stored.occurrence
    return dag_model.next_dagrun_create_after
