"""Response bodies of the fleet load route (``GET /api/v1/load``) and the backfill preview route."""

from __future__ import annotations

import datetime

from pydantic import BaseModel, Field

from .starts import HORIZON_MINUTES, MAX_SPIKE_DAGS, RUN_CAP, SPIKE_FACTOR, FleetLoad

Instant = datetime.datetime


class LoadSpike(BaseModel):
    minute: Instant = Field(description="The minute (UTC) the runs may start in.")
    runs: int
    dag_ids: list[str] = Field(description=f"The DAGs starting runs in that minute (at most {MAX_SPIKE_DAGS}).")
    dag_count: int = Field(description="How many DAGs start runs in that minute.")


class DagLoad(BaseModel):
    dag_id: str
    runs: int = Field(description="Run starts in the 24 hours.")
    capped: bool = Field(description=f"True when the DAG reached the cap of {RUN_CAP} runs; it starts more.")
    source: str = Field(description="tessera: its public plan; timetable: its own next_dagrun_info_v2.")
    error: str | None = None


class HourPeak(BaseModel):
    hour: Instant = Field(description="The start of a clock hour (UTC); the first and last are partly in range.")
    peak: int = Field(description="Run starts in the busiest minute of that hour within the range.")


class LoadResponse(BaseModel):
    start: Instant = Field(description="The first minute counted (UTC).")
    minutes: int = Field(default=HORIZON_MINUTES)
    counts: list[int] = Field(description="Run starts in each minute from `start` on.")
    total_runs: int
    mean_per_minute: float
    peak: int
    peak_at: Instant | None
    peak_to_mean: float | None = Field(description="The busiest minute over the mean minute; 1.0 is flat.")
    peak_to_mean_without_phases: float | None = Field(
        description="The same ratio with every run counted at its occurrence, as if no DAG had a phase: "
        "what the phases flatten."
    )
    spikes: list[LoadSpike] = Field(
        description=f"Minutes with at least {SPIKE_FACTOR}x the mean run starts (and 2), busiest first."
    )
    hours: list[HourPeak] = Field(description="The busiest minute of each clock hour the range touches.")
    run_cap_per_dag: int = RUN_CAP
    dags: list[DagLoad]
    paused_left_out: int = Field(description="Paused DAGs, not counted (include_paused=true counts them).")


def load_response(load: FleetLoad, *, paused_left_out: int) -> LoadResponse:
    return LoadResponse(
        start=load.start,
        minutes=len(load.counts),
        counts=load.counts,
        total_runs=load.total,
        mean_per_minute=round(load.mean, 3),
        peak=load.peak,
        peak_at=load.peak_at,
        peak_to_mean=load.peak_to_mean,
        peak_to_mean_without_phases=load.peak_to_mean_without_phases,
        spikes=[LoadSpike(minute=s.minute, runs=s.runs, dag_ids=s.dag_ids, dag_count=s.dag_count) for s in load.spikes],
        hours=[HourPeak(hour=hour, peak=peak) for hour, peak in load.hours],
        dags=[
            DagLoad(dag_id=d.dag_id, runs=len(d.starts), capped=d.capped, source=d.source, error=d.error)
            for d in load.dags
        ],
        paused_left_out=paused_left_out,
    )
