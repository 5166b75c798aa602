"""The status of a tessera DAG: last and next fire, lateness, last outcome, skip reason and conditions.

When is a run late? A run is late when it has not started (not created yet, or
created but still queued) and its *late-after* instant has passed:

* calendar and cron cadences (a wall-clock time in a timezone): 20 minutes after the
  nominal occurrence, or 5 minutes after the phase-shifted start if that is later.
  A phase of up to 15 minutes plus the scheduler's own latency is healthy, so a run
  10 minutes past its nominal time is not called late;
* interval cadences (an epoch grid, ``@every``): after the phase-shifted start plus a
  margin of one interval, at least 1 minute and at most 5 minutes.

A paused DAG is never late, and neither is one with nothing scheduled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow._shared.timezones.timezone import utcnow
from airflow.models.dagrun import DagRun
from airflow.utils.types import DagRunType
from sqlalchemy import select

from tessera.timetables._time.durations import US_PER_MINUTE
from tessera.timetables._time.plan import Plan, PlannedRun
from tessera.timetables.base import from_us, to_us

from .adapters import NOT_A_CURSOR_FUNCTION, cursor_function_status
from .models import ConditionModel, Contradiction, DagStatus, Lateness, RunSummary
from .schedules import ScheduledDag, stored_next_run

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

WALL_CLOCK_GRACE = 20 * US_PER_MINUTE
START_GRACE = 5 * US_PER_MINUTE
INTERVAL_MARGIN_MIN = 1 * US_PER_MINUTE
INTERVAL_MARGIN_MAX = 5 * US_PER_MINUTE
RULES = {
    "wall_clock": "late when not started 20 min after the nominal time (or 5 min after its phase, if later)",
    "interval": "late when not started one interval (1 to 5 min) after its phase-shifted start",
}
_FAILURE_HISTORY = 100


def late_after(run: PlannedRun, *, wall_clock: bool) -> int:
    """The instant (us) after which ``run`` is late if it has not started."""
    if wall_clock:
        return max(run.occurrence + WALL_CLOCK_GRACE, run.run_after + START_GRACE)
    return run.run_after + min(max(run.interval, INTERVAL_MARGIN_MIN), INTERVAL_MARGIN_MAX)


def assess_lateness(
    plan: Plan | None,
    *,
    wall_clock: bool,
    paused: bool,
    pending_occurrence: int | None,
    queued_occurrence: int | None,
    now: int,
) -> Lateness:
    """Judge the run the scheduler owes next (``pending``) and the newest scheduled run still queued."""
    if paused:
        return Lateness(
            state="paused",
            late=False,
            occurrence=None,
            late_after=None,
            late_by_seconds=None,
            reason="the DAG is paused",
            rule="",
        )
    if plan is None or pending_occurrence is None:
        return Lateness(
            state="not_scheduled",
            late=False,
            occurrence=None,
            late_after=None,
            late_by_seconds=None,
            reason="no clock-driven run is scheduled",
            rule="",
        )
    rule = RULES["wall_clock" if wall_clock else "interval"]
    candidates = [(queued_occurrence, "its run is queued but has not started"), (pending_occurrence, "")]
    for occurrence, why in candidates:
        if occurrence is None:
            continue
        deadline = late_after(plan.run(occurrence), wall_clock=wall_clock)
        if now > deadline:
            return Lateness(
                state="late",
                late=True,
                occurrence=from_us(occurrence),
                late_after=from_us(deadline),
                late_by_seconds=(now - occurrence) / 1_000_000,
                reason=why or "the scheduler has not created its run yet",
                rule=rule,
            )
    deadline = late_after(plan.run(pending_occurrence), wall_clock=wall_clock)
    return Lateness(
        state="on_time",
        late=False,
        occurrence=from_us(pending_occurrence),
        late_after=from_us(deadline),
        late_by_seconds=None,
        reason="",
        rule=rule,
    )


def _summary(run: DagRun | None, plan: Plan | None) -> RunSummary | None:
    if run is None:
        return None
    occurrence = None
    if plan is not None and run.data_interval_end is not None and run.run_type == DagRunType.SCHEDULED:
        occurrence = from_us(plan.occurrence_of_window_end(to_us(run.data_interval_end)))
    triggered_by = getattr(run.triggered_by, "value", run.triggered_by)
    return RunSummary(
        run_id=run.run_id,
        run_type=str(run.run_type),
        state=str(run.state),
        triggered_by=triggered_by,
        occurrence=occurrence,
        run_after=run.run_after,
        start_date=run.start_date,
        end_date=run.end_date,
    )


def _conditions(
    item: ScheduledDag, contradictions: list[Contradiction], last_outcome: str | None
) -> list[ConditionModel]:
    errors = [c.message for c in contradictions if c.severity == "error"]
    if item.model.has_import_errors or errors:
        message = errors[0] if errors else "the DAG file has an import error"
        spec = ConditionModel(type="SpecValid", status="False", reason="SpecInvalid", message=message)
        return [spec, ConditionModel(type="Ready", status="False", reason="SpecInvalid", message=message)]
    spec = ConditionModel(type="SpecValid", status="True", reason="Parsed")
    if last_outcome == "success":
        return [spec, ConditionModel(type="Ready", status="True", reason="RunSucceeded")]
    if last_outcome == "failed":
        return [
            spec,
            ConditionModel(type="Ready", status="False", reason="RunFailed", message="the newest run failed"),
        ]
    return [
        spec,
        ConditionModel(type="Ready", status="Unknown", reason="NoRunYet", message="no run has finished yet"),
    ]


def _missed_ticks(plan: Plan | None, fires: list[DagRun]) -> str | None:
    """Whether the schedule skipped ticks between its two newest fires (paused or scheduler down)."""
    if plan is None or len(fires) < 2 or fires[0].data_interval_end is None or fires[1].data_interval_end is None:
        return None
    newest = plan.occurrence_of_window_end(to_us(fires[0].data_interval_end))
    previous = plan.occurrence_of_window_end(to_us(fires[1].data_interval_end))
    return "MissedTicks" if plan.cadence.following(previous) < newest else None


def dag_status(item: ScheduledDag, contradictions: list[Contradiction], session: Session) -> DagStatus:
    plan = None if item.timetable is None else item.timetable._plan
    dag_id = item.dag_id
    runs = select(DagRun).where(DagRun.dag_id == dag_id)
    fires = session.scalars(
        runs.where(DagRun.run_type == DagRunType.SCHEDULED).order_by(DagRun.run_after.desc()).limit(2)
    ).all()
    last_run = session.scalar(runs.order_by(DagRun.run_after.desc(), DagRun.id.desc()).limit(1))
    finished = session.scalars(
        runs.where(DagRun.end_date.is_not(None)).order_by(DagRun.end_date.desc()).limit(_FAILURE_HISTORY)
    ).all()
    failures = 0
    for run in finished:
        if run.state != "failed":
            break
        failures += 1
    last_outcome = str(finished[0].state) if finished else None
    mine = [c for c in contradictions if dag_id in c.dag_ids]
    nxt = stored_next_run(item)
    queued = fires[0] if fires and fires[0].start_date is None and fires[0].data_interval_end is not None else None
    lateness = assess_lateness(
        plan,
        wall_clock=item.cadence_kind == "wall_clock",
        paused=bool(item.model.is_paused),
        pending_occurrence=None if nxt.occurrence is None else to_us(nxt.occurrence),
        queued_occurrence=None
        if queued is None or plan is None
        else plan.occurrence_of_window_end(to_us(queued.data_interval_end)),
        now=to_us(utcnow()),
    )
    cursors, cursor_status = [], NOT_A_CURSOR_FUNCTION
    if item.dag is not None:
        cursors, cursor_status = cursor_function_status(item.dag, session)
    conditions = _conditions(item, mine, last_outcome)
    skip_reason = "Suspended" if item.model.is_paused else _missed_ticks(plan, list(fires))
    if cursors:
        conditions = list(cursors[0].conditions)
        last_outcome, skip_reason = cursors[0].last_outcome, cursors[0].last_skip_reason
        failures = cursors[0].consecutive_failures
    return DagStatus(
        dag_id=dag_id,
        summary=item.summary,
        is_paused=bool(item.model.is_paused),
        last_fire=_summary(fires[0] if fires else None, plan),
        last_run=_summary(last_run, plan),
        next_fire=nxt,
        lateness=lateness,
        last_outcome=last_outcome,
        skip_reason=skip_reason,
        consecutive_failures=failures,
        conditions=conditions,
        cursors=cursors,
        cursor_status=cursor_status,
    )
