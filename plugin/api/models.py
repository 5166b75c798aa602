"""Response bodies of the tessera REST API (the OpenAPI schema is generated from these)."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .outcomes import RunOutcome

Instant = datetime.datetime


class _Model(BaseModel):
    model_config = ConfigDict(from_attributes=True)


# -- plan -------------------------------------------------------------------------------------


class PlannedOccurrence(_Model):
    """One future run of a schedule."""

    occurrence: Instant = Field(description="The nominal instant of the schedule (UTC).")
    occurrence_local: str = Field(description="The same instant in the schedule's timezone (ISO 8601).")
    run_after: Instant = Field(description="When the run may start: occurrence + phase.")
    window_start: Instant = Field(description="Start of the window the run evaluates (its logical date).")
    window_end: Instant = Field(description="End of the window the run evaluates (exclusive).")
    interval_seconds: float = Field(description="Real spacing from the previous occurrence (23 h / 25 h across DST).")
    partition_key: str | None = Field(
        default=None, description="Airflow's partition_key of the run when its timetable is partitioned."
    )


class StoredNextRun(_Model):
    """The next run as Airflow stored it on the DAG (what the scheduler will create next)."""

    occurrence: Instant | None
    run_after: Instant | None
    window_start: Instant | None
    window_end: Instant | None


class Contradiction(_Model):
    """Something that stops a schedule from firing as written."""

    kind: str = Field(description="e.g. invalid_spec, unknown_parent, after_cycle, no_pipelines.")
    severity: Literal["error", "warning"]
    message: str
    schedule: str | None = Field(default=None, description="The declared schedule it is about, if any.")
    dag_ids: list[str] = Field(default_factory=list)
    source: Literal["import_error", "declared_schedule"]


class DagPlan(_Model):
    dag_id: str
    summary: str
    description: str | None
    timezone: str
    cadence_kind: Literal["interval", "wall_clock", "after", "other"] = Field(
        description="interval: an epoch-aligned grid; wall_clock: calendar or cron in a timezone; "
        "after: behind other declared schedules; other: not a tessera timetable."
    )
    phase: str | None = Field(description="Offset of run_after after each occurrence, e.g. '2m10s'.")
    phase_ms: int | None
    delay: str | None
    lookback: str | None = Field(description="Fixed window length, when the windows overlap.")
    is_paused: bool
    declared_schedule: str | None
    next_stored_run: StoredNextRun
    occurrences: list[PlannedOccurrence]
    contradictions: list[Contradiction]
    error: str | None = Field(
        default=None,
        description="Why this DAG's plan could not be computed; the row then shows only what its DAG row stores.",
    )


class PlanResponse(_Model):
    dags: list[DagPlan]
    contradictions: list[Contradiction] = Field(description="Every contradiction visible to the caller.")
    plan_check: str = Field(
        description="'ok'; 'not available: <why>' when the declared-schedule check is absent; "
        "'incomplete: <why>' when some pipeline DAGs could not be read."
    )


# -- status -----------------------------------------------------------------------------------


class RunSummary(_Model):
    run_id: str
    run_type: str
    state: str | None
    triggered_by: str | None
    occurrence: Instant | None = Field(description="The nominal instant a scheduled run belongs to.")
    run_after: Instant | None
    start_date: Instant | None
    end_date: Instant | None


class Lateness(_Model):
    """Whether the schedule is behind. See ``tessera.plugin.api.status`` for the rule."""

    state: Literal["on_time", "late", "paused", "not_scheduled", "unknown"] = Field(
        description="unknown: the DAG's plan could not be computed (see the row's error)."
    )
    late: bool
    occurrence: Instant | None = Field(description="The nominal instant judged.")
    late_after: Instant | None = Field(description="When that occurrence counts as late if its run has not started.")
    late_by_seconds: float | None = Field(description="How far past its nominal instant the late run is.")
    reason: str
    rule: str


class ConditionModel(_Model):
    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str = ""


class CursorStatus(_Model):
    """The cursor function's own status (the three timestamps, its outcome and conditions)."""

    task_id: str
    last_schedule_time: Instant | None = Field(description="The last tick handled, fired or declined.")
    last_fire_time: Instant | None = Field(description="The last tick that actually fired.")
    last_skip_time: Instant | None = Field(description="The last tick declined.")
    last_skip_reason: str | None
    last_outcome: RunOutcome = Field(description="Airflow's word for the last fire: success, failed or unknown.")
    last_success_time: Instant | None = None
    consecutive_failures: int
    in_flight: list[str] = Field(default_factory=list)
    conditions: list[ConditionModel]


class StaleParentModel(_Model):
    schedule: str = Field(description="The AFTER parent schedule outside the freshness window.")
    last_completed: Instant | None = Field(description="When it last completed a fire; null: never.")
    age_seconds: float | None = Field(description="How long ago that was; null: never.")
    bound_hours: float = Field(description="The schedule's PARENT_FRESHNESS window, in hours.")


class DagStatus(_Model):
    dag_id: str
    summary: str
    is_paused: bool
    last_fire: RunSummary | None = Field(description="The newest run the schedule itself created.")
    last_run: RunSummary | None = Field(description="The newest run of any kind.")
    next_fire: StoredNextRun
    lateness: Lateness
    last_outcome: RunOutcome = Field(
        description="Airflow's word for how the newest finished run ended (success, failed), "
        "or for a cursor function its last fire (success, failed, unknown: never observed)."
    )
    skip_reason: str | None
    consecutive_failures: int
    conditions: list[ConditionModel] = Field(description="SpecValid (can it fire at all) and Ready (did it work).")
    cursors: list[CursorStatus] = Field(description="One per cursor function of the DAG.")
    cursor_status: str = Field(description="'ok', 'not a cursor function' or 'not available: <why>'.")
    stale_parents: list[StaleParentModel] = Field(
        default_factory=list,
        description="AFTER parents with no completed fire within PARENT_FRESHNESS, as of now (a fire proceeds anyway).",
    )
    error: str | None = Field(
        default=None,
        description="Why this DAG's status could not be computed; the row then shows only its DAG row and runs.",
    )


class StatusResponse(_Model):
    dags: list[DagStatus]


# -- refresh ----------------------------------------------------------------------------------


class Receipt(_Model):
    """What a refresh task reported about its result: metadata only, never the data."""

    task_id: str
    outcome: str | None
    rows: int | None
    duration_seconds: float | None
    changed: bool | None


class RefreshRun(_Model):
    run_id: str
    run_type: str
    state: str | None
    triggered_by: str | None
    triggering_user: str | None
    queued_at: Instant | None
    start_date: Instant | None
    end_date: Instant | None
    dag_version: int | None = Field(description="The DAG version the run executes.")
    bundle_version: str | None
    current_dag_version: int | None = Field(description="The DAG's newest version.")
    runs_current_version: bool | None
    receipts: list[Receipt]


class RefreshResponse(_Model):
    dag_id: str
    outcome: Literal["started", "joined", "coalesced"] = Field(
        description="started: a new run; joined: a run already queued or running; "
        "coalesced: a run that succeeded within the last minute."
    )
    message: str
    run: RefreshRun
    next_scheduled_run_after: Instant | None = Field(
        description="The next scheduled run, unchanged by the refresh (an on-demand run never moves it)."
    )


class RefreshRequest(BaseModel):
    """The body of a refresh: an empty JSON object, ``{}`` (no options yet).

    Required so that a browser form on another site, which cannot send JSON, can never
    start a run with the Airflow UI's session cookie.
    """

    model_config = ConfigDict(extra="forbid")


class RefreshStatus(_Model):
    dag_id: str
    live_run: RefreshRun | None = Field(description="The newest queued or running run, whatever started it.")
    latest_finished_run: RefreshRun | None
    coalescing_window_seconds: int


# -- pause with a note ---------------------------------------------------------------------------


class PauseRequest(BaseModel):
    """The body of a pause or unpause: ``{}`` or ``{"note": "<why>"}`` (at most 1024 bytes of UTF-8)."""

    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(default=None, description="Why (plain text, newlines and tabs kept, at most 1024 bytes).")


class PauseState(_Model):
    """The DAG's pause as tessera recorded it (Airflow's audit log, event tessera.dag.pause / unpause)."""

    dag_id: str
    is_paused: bool
    note: str | None
    by: str | None = Field(description="Who: the signed-in user, the CLI's OS user, or 'tessera' after failures.")
    at: Instant
    reason: str = Field(description="by_hand, or pause_after_failures (then failed_runs names them).")
    failed_runs: list[str] = Field(default_factory=list)
