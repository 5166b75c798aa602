"""Backfill preview: exactly the runs ``airflow backfill create`` creates for a range, with their windows.

Airflow's own ``--dry-run`` prints only logical dates, and a window that starts before
``--from-date`` (a delay shifts windows back) then looks like a bug. The preview asks the
same functions ``airflow backfill create`` asks, in the same order, so it cannot disagree:

* from a deployment: Airflow's dry run itself (``_do_dry_run``), which reads the stored DAG,
  validates the range and leaves out the runs that already exist and would not be re-run;
* from a DAG file: the same validation and run enumeration (``_validate_backfill_params``,
  ``_get_info_list``) on the DAG serialized as the dag-processor stores it (no database:
  nothing is left out as already existing).

Both are private functions of Airflow 3.3's ``airflow.models.backfill``; the end-to-end test
compares the preview with the runs a real ``airflow backfill create`` creates.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from .errors import Invalid, NotFound

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

REPROCESS_BEHAVIORS = ("none", "failed", "completed")


class BackfillRun(BaseModel):
    run_id: str = Field(description="The run id the backfill gives the run.")
    logical_date: datetime.datetime = Field(description="What `airflow backfill create --dry-run` prints.")
    window_start: datetime.datetime = Field(description="Start of the window the run evaluates (its data interval).")
    window_end: datetime.datetime = Field(description="End of the window (exclusive).")
    run_after: datetime.datetime
    partition_key: str | None = Field(
        default=None, description="The run's partition key, when its timetable is partitioned."
    )


class BackfillPreview(BaseModel):
    dag_id: str
    from_date: datetime.datetime
    to_date: datetime.datetime
    reprocess_behavior: str
    runs: list[BackfillRun]
    note: str = Field(description="What the preview does and does not take into account.")


def _run(info: Any) -> BackfillRun:
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunType

    return BackfillRun(
        run_id=DagRun.generate_run_id(
            run_type=DagRunType.BACKFILL_JOB, logical_date=info.logical_date, run_after=info.run_after
        ),
        logical_date=info.logical_date,
        window_start=info.data_interval.start,
        window_end=info.data_interval.end,
        run_after=info.run_after,
        partition_key=getattr(info, "partition_key", None),
    )


def _refusal(error: Exception) -> Invalid:
    return Invalid(f"{type(error).__name__}: {error}")


def _check_range(from_date: datetime.datetime, to_date: datetime.datetime, reprocess_behavior: str) -> None:
    for name, moment in (("from_date", from_date), ("to_date", to_date)):
        if moment.tzinfo is None:
            raise Invalid(f"`{name}`: {moment.isoformat()} has no timezone; give one, e.g. 'Z'")
    if reprocess_behavior not in REPROCESS_BEHAVIORS:
        raise Invalid(f"`reprocess_behavior`: {reprocess_behavior!r}; use one of {', '.join(REPROCESS_BEHAVIORS)}")


def preview_stored(
    session: Session,
    dag_id: str,
    *,
    from_date: datetime.datetime,
    to_date: datetime.datetime,
    reprocess_behavior: str = "none",
) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates for the stored DAG ``dag_id`` (Airflow's own dry run)."""
    from airflow.exceptions import DagNotFound
    from airflow.models.backfill import ReprocessBehavior, _do_dry_run

    _check_range(from_date, to_date, reprocess_behavior)
    try:
        infos = list(
            _do_dry_run(
                dag_id=dag_id,
                from_date=from_date,
                to_date=to_date,
                reverse=False,
                reprocess_behavior=ReprocessBehavior(reprocess_behavior),
                session=session,
            )
        )
    except DagNotFound as error:
        raise NotFound(f"dag_id: {dag_id!r} has no stored DAG") from error
    except Exception as error:  # Airflow's refusals: a range backwards or in the future, a non-periodic DAG
        if type(error).__module__.startswith("airflow."):
            raise _refusal(error) from error
        raise
    return BackfillPreview(
        dag_id=dag_id,
        from_date=from_date,
        to_date=to_date,
        reprocess_behavior=reprocess_behavior,
        runs=[_run(info) for info in infos],
        note="Airflow's own dry run: runs that already exist and would not be re-run are left out.",
    )


def preview_dag(dag: Any, *, from_date: datetime.datetime, to_date: datetime.datetime) -> BackfillPreview:
    """The runs ``airflow backfill create`` creates for a DAG loaded from its file, before it is deployed."""
    from airflow.models.backfill import _get_info_list, _validate_backfill_params
    from airflow.serialization.serialized_objects import DagSerialization

    _check_range(from_date, to_date, "none")
    stored = DagSerialization.from_dict(DagSerialization.to_dict(dag))  # what the dag-processor stores
    if not stored.timetable.periodic:
        raise Invalid(f"dag_id: {dag.dag_id!r} has a non-periodic schedule; backfill refuses it")
    try:
        _validate_backfill_params(stored, False, from_date, to_date, None, None)
    except Exception as error:  # the refusals `airflow backfill create` would answer with
        if type(error).__module__.startswith("airflow."):
            raise _refusal(error) from error
        raise
    infos = _get_info_list(from_date=from_date, to_date=to_date, reverse=False, dag=stored)
    return BackfillPreview(
        dag_id=dag.dag_id,
        from_date=from_date,
        to_date=to_date,
        reprocess_behavior="none",
        runs=[_run(info) for info in infos],
        note="From the DAG file: every run of the range is listed (no database, so none is known to exist yet).",
    )
