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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.configuration import conf
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.models.errors import ParseImportError
from airflow.models.serialized_dag import SerializedDagModel
from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction
from airflow.utils.session import NEW_SESSION, provide_session
from airflow.utils.types import DagRunType
from sqlalchemy import select

from tessera.timetables.base import TesseraTimetable

from .._airflow import utcnow
from . import skip_events
from .history import FIRE, IN_FLIGHT, SKIP, RunReading, load_history
from .policy import CURSOR_TASK_TYPE
from .record import Outcome, SkipReason
from .skip_events import SkipEvent
from .spec_reasons import CONNECTION_MISSING, connection_missing, spec_reason

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Condition:
    """A yes/no answer with why: ``status`` is ``"True"``, ``"False"`` or ``"Unknown"``."""

    type: str
    status: str
    reason: str
    message: str = ""


@dataclass(frozen=True)
class StateLocation:
    """Where the cursor lives and when a fire last wrote it; never the cursor itself."""

    provider: str
    reference: str
    last_written: datetime.datetime | None


@dataclass(frozen=True)
class FunctionStatus:
    """What a status page shows for one scheduled function (``to_dict`` for the REST API)."""

    dag_id: str
    task_id: str
    paused: bool
    last_schedule_time: datetime.datetime | None
    last_fire_time: datetime.datetime | None
    last_skip_time: datetime.datetime | None
    last_skip_reason: str | None
    last_outcome: str | None
    last_success_time: datetime.datetime | None
    consecutive_failures: int
    in_flight: list[str]
    conditions: list[Condition]
    state: StateLocation | None
    next_fire_time: datetime.datetime | None = None
    """The next tick's nominal instant (its occurrence): no phase or anti-herd offset baked in."""
    next_start_time: datetime.datetime | None = None
    """When the next tick's run may start (the occurrence plus the phase: Airflow's run_after)."""
    history_examined: int = 0
    """How many of the newest runs were read (``consecutive_failures`` counts within them)."""

    def condition(self, kind: str) -> Condition:
        return next(c for c in self.conditions if c.type == kind)

    def to_dict(self) -> dict[str, Any]:
        """camelCase JSON, instants as ISO-8601."""

        def instant(value: datetime.datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        return {
            "dagId": self.dag_id,
            "taskId": self.task_id,
            "paused": self.paused,
            "lastScheduleTime": instant(self.last_schedule_time),
            "lastFireTime": instant(self.last_fire_time),
            "lastSkipTime": instant(self.last_skip_time),
            "lastSkipReason": self.last_skip_reason,
            "lastOutcome": self.last_outcome,
            "lastSuccessTime": instant(self.last_success_time),
            "consecutiveFailures": self.consecutive_failures,
            "inFlight": self.in_flight,
            "nextFireTime": instant(self.next_fire_time),
            "nextStartTime": instant(self.next_start_time),
            "historyExamined": self.history_examined,
            "conditions": [c.__dict__ for c in self.conditions],
            "state": None
            if self.state is None
            else {
                "provider": self.state.provider,
                "reference": self.state.reference,
                "lastWritten": instant(self.state.last_written),
            },
        }


def _cursor_task(dag: Any, dag_id: str, task_id: str | None) -> str:
    names = [task.task_id for task in dag.tasks if task.task_type == CURSOR_TASK_TYPE]
    if task_id is not None:
        if task_id not in names:
            raise LookupError(f"task_id: {task_id!r}; DAG {dag_id!r} has no such cursor function (has {names})")
        return task_id
    if len(names) != 1:
        raise LookupError(f"task_id: None; DAG {dag_id!r} has {len(names)} cursor functions {names}: name one")
    return names[0]


def _spec_valid(dag_model: DagModel, conn_id: Any, session: Session) -> Condition:
    if not dag_model.has_import_errors:
        if (missing := connection_missing(conn_id, session)) is not None:
            return Condition("SpecValid", "False", CONNECTION_MISSING, missing)
        return Condition("SpecValid", "True", "Parsed")
    error = session.scalar(
        select(ParseImportError).where(
            ParseImportError.bundle_name == dag_model.bundle_name,
            ParseImportError.filename == dag_model.relative_fileloc,
        )
    )
    lines = (error.stacktrace or "").strip().splitlines() if error is not None else []
    message = lines[-1] if lines else "the DAG file has an import error"
    return Condition("SpecValid", "False", spec_reason(message), message)


def _ready(spec_valid: Condition, readings: list[RunReading]) -> Condition:
    if spec_valid.status != "True":
        return Condition("Ready", "False", spec_valid.reason, spec_valid.message)
    for reading in readings:
        if reading.kind == SKIP and reading.reason == SkipReason.DISPATCH_START_FAILED.value:
            return Condition("Ready", "False", reading.reason, reading.message or "")
        if reading.kind == FIRE:
            if reading.outcome is Outcome.SUCCEEDED:
                return Condition("Ready", "True", "FireSucceeded")
            return Condition("Ready", "False", reading.reason or "FireFailed", reading.message or "")
    return Condition("Ready", "Unknown", "NoFireYet", "no fire has finished yet")


def _suspended_tick(dag: Any, newest_tick: DagRun | None, now: datetime.datetime) -> datetime.datetime | None:
    """The newest tick that came due while the DAG was paused, if any (its timetable decides)."""
    last = None
    if newest_tick is not None and newest_tick.data_interval_start is not None:
        interval = DataInterval(newest_tick.data_interval_start, newest_tick.data_interval_end)
        last = DagRunInfo(run_after=newest_tick.run_after, data_interval=interval)
    restriction = TimeRestriction(earliest=dag.start_date, latest=None, catchup=False)
    try:
        info = dag.timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)
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
    now = now or utcnow()
    dag_model = session.get(DagModel, dag_id)
    dag = SerializedDagModel.get_dag(dag_id, session=session)
    if dag_model is None or dag is None:
        raise LookupError(f"dag_id: {dag_id!r}; no such DAG has been parsed")
    task_id = _cursor_task(dag, dag_id, task_id)
    timeout = conf.getint("scheduler", "task_instance_heartbeat_timeout", fallback=300)
    stale = now - datetime.timedelta(seconds=timeout)
    runs, readings = load_history(session, dag_id, task_id, limit=history, stale=stale)
    slept = None
    if dag_model.is_paused:
        newest_tick = next((run for run in runs if run.run_type == DagRunType.SCHEDULED), None)
        slept = _suspended_tick(dag, newest_tick, now)
    task = dag.get_task(task_id)
    store = getattr(task, "cursor_store", None)
    spec_valid = _spec_valid(dag_model, getattr(task, "http_conn_id", None), session)
    passed_over = skip_events.newest_passed_over(session, dag_id, task_id)
    status = _summarise(
        dag_model, task_id, store if isinstance(store, dict) else None, readings, slept, passed_over, spec_valid
    )
    # The next fire is shown as its nominal instant, as the schedule states it; the phase (or an
    # anti-herd offset) only moves when the run may start, which next_start_time says.
    return dataclasses.replace(status, next_fire_time=_nominal_next(dag, dag_model))


def _nominal_next(dag: Any, dag_model: DagModel) -> datetime.datetime | None:
    """The stored next run's occurrence, as a tessera timetable reads it (else Airflow's run_after)."""
    if isinstance(dag.timetable, TesseraTimetable):
        stored = dag.timetable.plan.next_stored(dag_model)
        if stored is not None:
            return stored.occurrence
    return dag_model.next_dagrun_create_after


def _summarise(
    dag_model: DagModel,
    task_id: str,
    store: dict[str, str] | None,
    readings: list[RunReading],
    slept: datetime.datetime | None,
    passed_over: SkipEvent | None,
    spec_valid: Condition,
) -> FunctionStatus:
    ticks = [r for r in readings if r.tick]
    fires = [r for r in readings if r.kind == FIRE]
    skips = [r for r in readings if r.kind == SKIP]
    last_schedule = ticks[0].time if ticks else None
    last_skip, last_reason = (skips[0].time, skips[0].reason) if skips else (None, None)
    if passed_over is not None:
        # Ticks that never became runs: declined, and handled, all the same.
        last_schedule = passed_over.last if last_schedule is None else max(last_schedule, passed_over.last)
        if last_skip is None or passed_over.last > last_skip:
            last_skip, last_reason = passed_over.last, passed_over.reason
    if slept is not None:
        last_schedule = slept if last_schedule is None else max(last_schedule, slept)
        if last_skip is None or slept > last_skip:
            last_skip, last_reason = slept, SkipReason.SUSPENDED.value
    failures = 0
    for fire in fires:  # newest first; Unknown neither counts nor breaks the streak
        if fire.outcome is Outcome.SUCCEEDED:
            break
        if fire.outcome is Outcome.FAILED:
            failures += 1
    success = next((f for f in fires if f.outcome is Outcome.SUCCEEDED), None)
    written = success.finished if success is not None and store is not None else None
    return FunctionStatus(
        dag_id=dag_model.dag_id,
        task_id=task_id,
        paused=bool(dag_model.is_paused),
        last_schedule_time=last_schedule,
        last_fire_time=max((r.time for r in readings if r.kind in (FIRE, IN_FLIGHT)), default=None),
        last_skip_time=last_skip,
        last_skip_reason=last_reason,
        last_outcome=fires[0].outcome.value if fires and fires[0].outcome else None,
        last_success_time=None if success is None else success.finished,
        consecutive_failures=failures,
        in_flight=[r.run_id for r in readings if r.kind == IN_FLIGHT],
        conditions=[spec_valid, _ready(spec_valid, readings)],
        state=None if store is None else StateLocation(store["provider"], store["reference"], written),
        next_fire_time=None,
        next_start_time=dag_model.next_dagrun_create_after,
        history_examined=len(readings),
    )
