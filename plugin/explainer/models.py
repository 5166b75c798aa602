"""The answer to "why did (or didn't) this DAG run at T?": one verdict sentence, then the evidence that proves it.

The evidence comes in the order a person checks it: what the timetable decided (``schedule``),
what Airflow did (``airflow``), what happens next (``next``). Every item names the record that
proves it (``record``: a run id, an audit-log entry, a scheduler job, an import error, a DAG
version); an item the records cannot decide says which record is missing (``missing``).
Nothing here carries a run's ``conf``, a cursor value or a function's input or output.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

Section = Literal["schedule", "airflow", "next"]


class Evidence(BaseModel):
    section: Section = Field(description="schedule: what the timetable decided; airflow: what Airflow did; next.")
    fact: str = Field(description="A short machine-readable name of the fact, e.g. 'occurrence', 'paused', 'run'.")
    text: str = Field(description="The fact in one sentence.")
    record: str | None = Field(
        default=None, description='The record that proves it, e.g. "audit log #41 (cli_dag_pause)"; null: derived.'
    )


class OccurrenceModel(BaseModel):
    """One occurrence of the schedule, as the timetable planned it."""

    nominal: datetime.datetime = Field(description="The schedule's nominal instant (UTC).")
    nominal_local: str = Field(description="The same instant in the schedule's timezone (ISO 8601).")
    run_after: datetime.datetime = Field(description="When its run may start (nominal + phase).")
    window_start: datetime.datetime | None
    window_end: datetime.datetime | None


class RunModel(BaseModel):
    """A run the answer is about (never its conf)."""

    run_id: str
    run_type: str
    state: str | None
    run_after: datetime.datetime | None
    queued_at: datetime.datetime | None
    start_date: datetime.datetime | None
    end_date: datetime.datetime | None
    triggered_by: str | None
    triggering_user: str | None


class WhyAnswer(BaseModel):
    dag_id: str
    at: datetime.datetime = Field(description="The instant asked about (UTC).")
    cause: str = Field(
        description="What decided it, as a stable code: ran, running, late, queued, queued_max_active_runs, "
        "waiting_pool, waiting_wave_gate, fire_skipped, overlap_dropped, replaced, timed_out, paused, broken, "
        "file_missing, scheduler_down, passed_over, missed_deadline, max_active_runs, excluded, before_start_date, "
        "after_end_date, before_dag_existed, dst_gap, dst_once, not_due_yet, waiting_for_parents, manual_run, "
        "backfill_run, no_schedule, cannot_tell (the records that would say were cleaned), unexplained."
    )
    verdict: str = Field(description="One sentence: whether it ran at or around T, and why.")
    occurrence: OccurrenceModel | None = Field(description="The occurrence at or around T the verdict is about.")
    run: RunModel | None = Field(description="The run that answered that occurrence, if any.")
    schedule_in_force: str = Field(description="The schedule as stored in the DAG version in force at T.")
    schedule_now: str = Field(description="The schedule as stored in the DAG's newest version.")
    evidence: list[Evidence]
    missing: list[str] = Field(
        default_factory=list, description="Records the answer needed and could not find (cleaned, never written)."
    )


@dataclass
class Decision:
    """A verdict being built: its cause, its sentence, the evidence and the missing records."""

    cause: str
    verdict: str
    evidence: list[Evidence] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def add(self, section: Section, fact: str, text: str, record: str | None = None) -> None:
        self.evidence.append(Evidence(section=section, fact=fact, text=text, record=record))
