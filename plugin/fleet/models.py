"""Response bodies of the tessera REST API (the OpenAPI schema is generated from these)."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .outcomes import RunOutcome

Instant = datetime.datetime
MAX_FAILED_RUNS_LISTED = 10
"""A pause after 1,000 failures names its 10 newest runs (and counts them all): a row stays small."""


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


class ExcludedRun(_Model):
    """An occurrence the schedule skips for its exclusions (a date, a range, a holiday): no run is created."""

    occurrence: Instant = Field(description="The instant the run would have been due (UTC).")
    occurrence_local: str = Field(description="The same instant in the schedule's timezone (ISO 8601).")
    reasons: list[str] = Field(description="Why, e.g. 'Independence Day (observed) (holidays US-NY)'.")


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


class BrokenModel(_Model):
    """Why a DAG's file no longer parses (or is gone), and since when; see ``tessera.plugin.fleet.broken``."""

    reason: str = Field(description="CronInvalid, ScheduleInvalid, InputInvalid, ... SpecInvalid, or FileMissing.")
    message: str = Field(description="The import error's last line (hidden unless you may read every DAG of its file).")
    since: Instant | None = Field(description="When it broke: the first failing parse recorded; null: not recorded.")
    last_parsed: Instant | None = Field(description="The DAG's last successful parse: it broke after this.")
    stale: bool = Field(description="Airflow stopped scheduling it (before that it runs its last parsed version).")
    record: str = Field(description="The records that show it (the import error, tessera's parse record).")


class LaneSegment(_Model):
    """Occurrences ``first + (j // len(offsets)) * period + offsets[j % len(offsets)]`` for ``0 <= j < count``."""

    first: int = Field(description="The segment's first occurrence, in microseconds since the Unix epoch.")
    period: int = Field(description="Microseconds after which the offsets repeat.")
    offsets: list[int] = Field(description="Ascending from 0, each below the period.")
    count: int


class Lane(_Model):
    """Every run that starts after ``after`` and at or before ``until``, as segments of occurrences.

    A run may start ``phase`` after its occurrence; its window ends ``delay`` before it and starts
    ``lookback`` earlier, or without one at the previous occurrence (``before`` for the first)
    minus ``delay``. All in microseconds (since the Unix epoch for instants).
    """

    after: int
    until: int
    before: int | None
    phase: int
    delay: int
    lookback: int | None
    through: int | None = Field(description="null: the segments reach `until`; else the last occurrence they hold.")
    segments: list[LaneSegment]


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
    excluded: list[ExcludedRun] = Field(
        default_factory=list,
        description="Occurrences skipped for the schedule's exclusions between `after` and the last listed run.",
    )
    contradictions: list[Contradiction]
    error: str | None = Field(
        default=None,
        description="Why this DAG's plan could not be computed; the row then shows only what its DAG row stores.",
    )
    broken: BrokenModel | None = Field(default=None, description="Set while the DAG's file does not parse or is gone.")
    lane: Lane | None = Field(default=None, description="Its runs over the page's timeline (``GET /api/v1/page``).")


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
    """Whether the schedule is behind. See ``tessera.plugin.fleet.lateness`` for the rule."""

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


class PauseNote(_Model):
    """Why a paused DAG is paused, as tessera recorded it (audit log event ``tessera.dag.pause``).

    Set only while the DAG's newest pause change is that pause: a pause made in Airflow's UI, its
    REST API or ``airflow dags pause`` records no note, and the row's ``pause`` is then null.
    """

    note: str | None = Field(description="The note given with the pause (user text, at most 1024 bytes); null: none.")
    by: str | None = Field(description="Who: the signed-in user, the CLI's OS user, or 'tessera' after failures.")
    at: Instant = Field(description="When the DAG was paused.")
    reason: str = Field(description="by_hand, or pause_after_failures (paused after that many failed runs in a row).")
    failed_runs: list[str] = Field(
        default_factory=list, description=f"The newest failed runs that paused it (at most {MAX_FAILED_RUNS_LISTED})."
    )
    failed_run_count: int = Field(default=0, description="How many runs failed in a row when it was paused.")


class DropModel(_Model):
    """The newest fires tessera recorded as not run (audit log event ``tessera.schedule.skip``)."""

    reason: str = Field(
        description="BufferFull, ConcurrencyForbidden, Superseded (overlap), Suspended, MissedDeadline."
    )
    count: int = Field(description="How many fires (at least this many when at_least).")
    at_least: bool
    first: Instant = Field(description="When the first of them was due.")
    last: Instant = Field(description="When the last of them was due.")
    message: str = Field(description="Why, in words (names the overlap or catch-up policy).")
    run_id: str | None = Field(description="The run that recorded them when it started.")
    record: str = Field(description='The record, e.g. "audit log #41 (tessera.schedule.skip)".')


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
    skip_reason: str | None = Field(
        description="Suspended while paused; else the reason of the newest dropped fires (latest_drop), else "
        "MissedTicks when ticks went unrun between the two newest fires; null: none."
    )
    latest_drop: DropModel | None = Field(default=None, description="The newest fires recorded as not run.")
    owed_windows: int | None = Field(
        default=None,
        description="How many dropped windows are owed (not yet run by a later run or a backfill); null: not counted.",
    )
    consecutive_failures: int
    conditions: list[ConditionModel] = Field(description="SpecValid (can it fire at all) and Ready (did it work).")
    cursors: list[CursorStatus] = Field(description="One per cursor function of the DAG.")
    cursor_status: str = Field(description="'ok', 'not a cursor function' or 'not available: <why>'.")
    stale_parents: list[StaleParentModel] = Field(
        default_factory=list,
        description="AFTER parents with no completed fire within PARENT_FRESHNESS, as of now (a fire proceeds anyway).",
    )
    pause: PauseNote | None = Field(
        default=None, description="Why it is paused, when tessera paused it (with a note or after failed runs)."
    )
    error: str | None = Field(
        default=None,
        description="Why this DAG's status could not be computed; the row then shows only its DAG row and runs.",
    )
    broken: BrokenModel | None = Field(default=None, description="Set while the DAG's file does not parse or is gone.")


class StatusResponse(_Model):
    dags: list[DagStatus]
