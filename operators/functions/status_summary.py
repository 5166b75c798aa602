"""What the status says of one cursor function, from how its newest runs read (:mod:`.history`).

The reading itself (which runs, which records, the DAG's row) is :mod:`.status`'s; this
module only turns the readings into the answer: the three timestamps, the last outcome and
skip reason, the consecutive failures and the SpecValid/Ready conditions.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .history import FIRE, IN_FLIGHT, SKIP, RunReading
from .record import Outcome, SkipReason

if TYPE_CHECKING:
    from airflow.models.dag import DagModel

    from .skip_events import SkipEvent


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


def summarise(
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
