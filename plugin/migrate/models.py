"""The migration report as the CLI prints it in JSON and the REST API answers it (one shape for both)."""

from __future__ import annotations

import datetime

from pydantic import BaseModel, Field

from .compare import DagComparison, Variant
from .runs import Run


class Moved(BaseModel):
    before: datetime.datetime = Field(description="When the run starts today.")
    after: datetime.datetime = Field(description="When it starts on the proposed schedule.")


class WindowChange(BaseModel):
    occurrence: datetime.datetime
    before: tuple[datetime.datetime, datetime.datetime] = Field(description="Airflow's data interval today.")
    after: tuple[datetime.datetime, datetime.datetime] = Field(description="The proposed schedule's window.")


class VariantReport(BaseModel):
    name: str = Field(description="`exact`, `spread`, `wall-clock` or `cronjob`.")
    proposal: str | None = Field(description="The tessera schedule, as the patch writes it; null: not offered.")
    note: str = Field(description="Why it is not offered, or the error the proposal raised.")
    verdict: str = Field(
        description="`identical`, `same runs, different windows`, `different runs` or `not confirmed: ...`."
    )
    compared: int = Field(description="Runs compared (occurrences on either side).")
    appear: int
    disappear: int
    move: int
    window: int = Field(description="Runs whose data window changes.")
    first_appear: list[datetime.datetime]
    first_disappear: list[datetime.datetime]
    first_move: list[Moved]
    first_window: list[WindowChange]


class DagMigration(BaseModel):
    dag_id: str
    file: str | None = Field(description="The DAG file, relative to the folder (null from the REST API).")
    schedule: str = Field(description="The current schedule, in words.")
    kind: str = Field(description="`cron`, `crons`, `delta`, `events`, `tessera`, `not_clock` or `custom`.")
    verdict: str = Field(description="The exact variant's verdict; empty for a schedule that is not compared.")
    reads_windows: bool | None = Field(
        description="The file mentions data_interval_*, logical_date or ds; null: unknown."
    )
    ranges: list[tuple[datetime.datetime, datetime.datetime]] = Field(description="The spans stepped run by run.")
    repeated: list[tuple[datetime.datetime, datetime.datetime]] = Field(
        description="The stretches counted as whole periods, each a copy of the one before (its schedule repeats)."
    )
    period_seconds: float | None = Field(description="The period the schedule repeats with; null: stepped whole.")
    truncated: bool = Field(
        description="A side needed more runs than the comparison steps: its verdicts say `not confirmed`."
    )
    notes: list[str]
    variants: list[VariantReport]


class Histogram(BaseModel):
    """Run starts per minute over the first 24 hours of the range, every DAG compared."""

    runs: int
    peak: int
    peak_at: datetime.datetime | None
    mean_per_minute: float
    peak_to_mean: float | None


class Problem(BaseModel):
    file: str
    problem: str


class PatchReport(BaseModel):
    variant: str
    files: list[str] = Field(description="The files the patch rewrites.")
    not_rewritten: list[Problem] = Field(description="DAGs left alone, and why.")


class MigrateReport(BaseModel):
    since: datetime.datetime
    until: datetime.datetime
    dags: list[DagMigration]
    before: Histogram
    after: Histogram = Field(description="The same, each DAG on the variant asked for (its exact one if not offered).")
    variant: str = Field(description="The variant the `after` histogram and the patch use.")
    problems: list[Problem] = Field(description="Files that do not import, and what the folder holds that is not read.")
    patch: PatchReport | None = None


def _window(run: Run) -> tuple[datetime.datetime, datetime.datetime]:
    return run.window_start, run.window_end


def variant_report(variant: Variant) -> VariantReport:
    found = variant.difference
    return VariantReport(
        name=variant.name,
        proposal=None if variant.call is None else variant.call.source(),
        note=variant.note,
        verdict=variant.verdict,
        compared=found.compared,
        appear=found.appear,
        disappear=found.disappear,
        move=found.move,
        window=found.window,
        first_appear=found.first_appear,
        first_disappear=found.first_disappear,
        first_move=[Moved(before=old, after=new) for old, new in found.first_move],
        first_window=[
            WindowChange(occurrence=old.occurrence, before=_window(old), after=_window(new))
            for old, new in found.first_window
        ],
    )


def dag_migration(comparison: DagComparison, file: str | None) -> DagMigration:
    current = comparison.current
    return DagMigration(
        dag_id=comparison.dag_id,
        file=file,
        schedule=current.words,
        kind=current.kind,
        verdict=comparison.verdict,
        reads_windows=comparison.reads_windows,
        ranges=comparison.ranges,
        repeated=comparison.repeated,
        period_seconds=None if comparison.period is None else comparison.period.total_seconds(),
        truncated=comparison.truncated,
        notes=comparison.notes,
        variants=[variant_report(v) for v in comparison.variants],
    )
