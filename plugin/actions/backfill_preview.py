"""Backfill preview: exactly the runs ``airflow backfill create`` creates for a range, with their windows.

Airflow's own ``--dry-run`` prints only logical dates, and a window that starts before
``--from-date`` (a delay shifts windows back) then looks like a bug. The preview runs the
steps ``airflow backfill create`` runs, with the same functions, so it cannot disagree:

* from a deployment: Airflow's dry run (:mod:`tessera.plugin.actions.backfill_dry_run`), which reads
  the stored DAG, validates the range and leaves out the runs that already exist and would not
  be re-run;
* from a DAG file: the same validation and run enumeration on the DAG serialized as the
  dag-processor stores it (no database: nothing is left out as already existing).

Every preview is bounded before and while it works, whoever asks (a viewer may): both ends
of the range lie in tessera's supported dates, it lists at most :data:`MAX_PREVIEW_RUNS`
runs, stepping them one at a time and refusing the range as soon as it holds more, it gives
up after :data:`PREVIEW_SECONDS`, and it stops at once when its :class:`Budget` says the
caller has left. The end-to-end test compares the preview with the runs a real
``airflow backfill create`` creates.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from tessera.timetables.support import partition_date_of

from .._airflow import stored_dag
from ..api.inputs import supported_instant
from ..errors import Invalid
from ..fleet.excluded import excluded_runs
from ..fleet.models import ExcludedRun
from . import backfill_dry_run as dry_run

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

MAX_PREVIEW_RUNS = 1000
"""The most runs one preview lists; a range holding more is refused (narrow it, or preview it in parts)."""
PREVIEW_SECONDS = 3.0
"""How long a preview may step through runs before it gives up (far more than 1000 runs of any timetable take)."""


class BackfillRun(BaseModel):
    run_id: str = Field(description="The run id the backfill gives the run.")
    logical_date: datetime.datetime | None = Field(
        description="What `airflow backfill create --dry-run` prints (none for a partitioned DAG's runs)."
    )
    window_start: datetime.datetime | None = Field(
        description="Start of the window the run evaluates (its data interval)."
    )
    window_end: datetime.datetime | None = Field(description="End of the window (exclusive).")
    run_after: datetime.datetime
    partition_key: str | None = Field(
        default=None, description="The run's partition key, when its timetable is partitioned."
    )


class BackfillPreview(BaseModel):
    dag_id: str
    from_date: datetime.datetime
    to_date: datetime.datetime
    reprocess_behavior: str
    runs: list[BackfillRun] = Field(description=f"At most {MAX_PREVIEW_RUNS}, oldest first.")
    excluded: list[ExcludedRun] = Field(
        default_factory=list, description="Occurrences in the range the schedule skips for its exclusions (no run)."
    )
    note: str = Field(description="What the preview does and does not take into account.")


class PreviewAbandoned(Exception):
    """The caller left before the preview was ready; nothing is answered."""


@dataclass(frozen=True)
class Budget:
    """When a preview must stop: ``seconds`` after it starts listing runs, or once ``abandoned()`` says the caller left.

    The clock starts with the first run, not before: loading the stored DAG (importing its
    timetable's module, in a fresh ``tessera plan`` process) is not the range's cost.
    """

    abandoned: Callable[[], bool] = lambda: False
    seconds: float = field(default_factory=lambda: PREVIEW_SECONDS)
    """Read when the budget is made, not when this class is: a test of the count cap lifts the time limit."""


def _run(info: Any) -> BackfillRun:
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunType

    interval = info.data_interval
    # Built without validation: every field already has its type, and a preview lists up to 1000.
    return BackfillRun.model_construct(
        run_id=DagRun.generate_run_id(
            run_type=DagRunType.BACKFILL_JOB, logical_date=info.logical_date, run_after=info.run_after
        ),
        logical_date=info.logical_date,
        window_start=interval.start if interval else None,
        window_end=interval.end if interval else None,
        run_after=info.run_after,
        partition_key=getattr(info, "partition_key", None),
    )


def _range(from_date: datetime.datetime, to_date: datetime.datetime) -> str:
    return f"`from_date` {from_date.isoformat()} to `to_date` {to_date.isoformat()}"


def _when(info: Any) -> str:
    moment = info.logical_date or partition_date_of(info) or info.run_after
    return moment.isoformat()


def take_runs(
    infos: Iterator[Any], budget: Budget, *, dag_id: str, from_date: datetime.datetime, to_date: datetime.datetime
) -> list[Any]:
    """At most :data:`MAX_PREVIEW_RUNS` runs of ``infos``, or the refusal that says why not."""
    taken: list[Any] = []
    deadline = time.monotonic() + budget.seconds
    for info in infos:
        if budget.abandoned():
            log.info("Backfill preview of %s stopped after %d runs: the caller left", dag_id, len(taken))
            raise PreviewAbandoned(dag_id)
        if len(taken) == MAX_PREVIEW_RUNS:
            raise Invalid(
                f"{_range(from_date, to_date)}: more than {MAX_PREVIEW_RUNS} runs of {dag_id!r}, the most one "
                f"preview lists; narrow the range (its first {MAX_PREVIEW_RUNS} runs reach {_when(taken[-1])})"
            )
        if time.monotonic() > deadline:
            raise Invalid(
                f"{_range(from_date, to_date)}: listing the runs of {dag_id!r} took more than {budget.seconds:g} s "
                f"({len(taken)} listed, up to {_when(taken[-1]) if taken else from_date.isoformat()}); "
                "narrow the range"
            )
        taken.append(info)
    return taken


def _check_range(from_date: datetime.datetime, to_date: datetime.datetime) -> None:
    try:
        supported_instant("from_date", from_date)
        supported_instant("to_date", to_date)
    except ValueError as error:
        raise Invalid(str(error)) from None


def preview_stored(
    session: Session,
    dag_id: str,
    *,
    from_date: datetime.datetime,
    to_date: datetime.datetime,
    reprocess_behavior: str = "none",
    budget: Budget | None = None,
) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates for the stored DAG ``dag_id`` (Airflow's own dry run)."""
    _check_range(from_date, to_date)
    if reprocess_behavior not in ("none", "failed", "completed"):
        raise Invalid(f"`reprocess_behavior`: {reprocess_behavior!r}; use one of none, failed, completed")
    budget = budget or Budget()
    dag = dry_run.stored_dag(session, dag_id)
    dry_run.check_backfill(dag, from_date=from_date, to_date=to_date, reprocess_behavior=reprocess_behavior)
    infos = dry_run.runs_in_range(dag, from_date=from_date, to_date=to_date)
    taken = take_runs(infos, budget, dag_id=dag_id, from_date=from_date, to_date=to_date)
    left_out = dry_run.runs_left_out(session, dag_id, taken, reprocess_behavior)
    return BackfillPreview(
        dag_id=dag_id,
        from_date=from_date,
        to_date=to_date,
        reprocess_behavior=reprocess_behavior,
        runs=[_run(info) for info, skipped in zip(taken, left_out) if not skipped],
        excluded=excluded_runs(dag.timetable, after=from_date, until=to_date),
        note="Airflow's own dry run: runs that already exist and would not be re-run are left out.",
    )


def preview_dag(
    dag: Any, *, from_date: datetime.datetime, to_date: datetime.datetime, budget: Budget | None = None
) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates for a DAG loaded from its file, before it is deployed."""
    _check_range(from_date, to_date)
    stored = stored_dag(dag)  # what the dag-processor stores
    dry_run.check_backfill(stored, from_date=from_date, to_date=to_date, reprocess_behavior=None)
    infos = dry_run.runs_in_range(stored, from_date=from_date, to_date=to_date)
    taken = take_runs(infos, budget or Budget(), dag_id=dag.dag_id, from_date=from_date, to_date=to_date)
    return BackfillPreview(
        dag_id=dag.dag_id,
        from_date=from_date,
        to_date=to_date,
        reprocess_behavior="none",
        runs=[_run(info) for info in taken],
        excluded=excluded_runs(stored.timetable, after=from_date, until=to_date),
        note="From the DAG file: every run of the range is listed (no database, so none is known to exist yet).",
    )
