"""Which DAGs the operator surfaces show, and the plan of each: its next runs, windows and phase.

A DAG is shown when its timetable is a tessera timetable (Airflow records the
timetable's import path on the DAG row) or when it is a pipeline of a declared
schedule (tag ``tessera-schedule:<name>``; an AFTER schedule is asset-driven, so
its timetable is Airflow's own).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from airflow.models.dag import DagModel, DagTag
from sqlalchemy import or_, select
from sqlalchemy.exc import SQLAlchemyError

from tessera.timetables._time.durations import format_duration
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables.base import TesseraTimetable, from_us, to_us

from .models import Contradiction, DagPlan, PlannedOccurrence, StoredNextRun

if TYPE_CHECKING:
    from airflow.models.dagbag import DBDagBag
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)
_CAUSE_DEPTH = 8

TIMETABLE_PREFIX = "tessera.timetables."
SCHEDULE_TAG_PREFIX = "tessera-schedule:"
"""Mirrors ``tessera.operators.schedules.identity.TAG_PREFIX`` (not imported: operators are optional here)."""


@dataclass(frozen=True)
class ScheduledDag:
    """One DAG the surfaces show: its row, its latest serialized version and its tessera timetable.

    ``error`` says why the serialized version could not be read (``dag`` is then None).
    """

    model: DagModel
    dag: Any | None
    timetable: TesseraTimetable | None
    declared_schedule: str | None
    error: str | None = None

    @property
    def dag_id(self) -> str:
        return self.model.dag_id

    @property
    def summary(self) -> str:
        if self.timetable is not None:
            return self.timetable.summary
        return self.model.timetable_summary or ""

    @property
    def timezone(self) -> str:
        zone = None if self.timetable is None else self.timetable.serialize().get("timezone")
        return zone or "UTC"

    @property
    def cadence_kind(self) -> str:
        if self.timetable is not None:
            return "interval" if isinstance(self.timetable._plan.cadence, EpochGrid) else "wall_clock"
        return "after" if self.declared_schedule is not None else "other"


def failure(what: str, dag_id: str, error: Exception) -> str:
    """Log why one DAG's ``what`` failed, and say it in one line for that DAG's row."""
    log.warning("tessera: %s failed for DAG %r", what, dag_id, exc_info=error)
    text = f"{what} failed: {type(error).__name__}: {error}"
    # Airflow wraps a timetable's own error (DeserializationError): name the root cause too.
    root = error
    for _ in range(_CAUSE_DEPTH):
        if (cause := root.__cause__ or root.__context__) is None:
            break
        root = cause
    return text if root is error else f"{text} (because {type(root).__name__}: {root})"


def read_latest(dag_bag: DBDagBag, dag_id: str, session: Session) -> tuple[Any | None, str | None]:
    """The DAG's latest serialized version, or why it cannot be read (its timetable no longer loads, ...).

    Database errors are not the DAG's: they propagate (the session is unusable after one).
    """
    try:
        return dag_bag.get_latest_version_of_dag(dag_id, session=session), None
    except SQLAlchemyError:
        raise
    except Exception as error:
        return None, failure("reading the stored DAG", dag_id, error)


def scheduled_dags(
    session: Session, dag_bag: DBDagBag, *, readable: Collection[str], dag_id: str | None = None
) -> list[ScheduledDag]:
    """The tessera DAGs the caller may read (all of them, or just ``dag_id``), by DAG id."""
    tagged = select(DagTag.dag_id).where(DagTag.name.startswith(SCHEDULE_TAG_PREFIX))
    query = (
        select(DagModel)
        .where(~DagModel.is_stale, DagModel.dag_id.in_(readable))
        .where(or_(DagModel.timetable_type.startswith(TIMETABLE_PREFIX), DagModel.dag_id.in_(tagged)))
        .order_by(DagModel.dag_id)
    )
    if dag_id is not None:
        query = query.where(DagModel.dag_id == dag_id)
    found = []
    for model in session.scalars(query):
        dag, error = read_latest(dag_bag, model.dag_id, session)
        timetable = getattr(dag, "timetable", None)
        tags = sorted(tag.name for tag in model.tags if tag.name.startswith(SCHEDULE_TAG_PREFIX))
        found.append(
            ScheduledDag(
                model=model,
                dag=dag,
                timetable=timetable if isinstance(timetable, TesseraTimetable) else None,
                declared_schedule=tags[0][len(SCHEDULE_TAG_PREFIX) :] if tags else None,
                error=error,
            )
        )
    return found


def stored_next_run(item: ScheduledDag) -> StoredNextRun:
    """The run the scheduler will create next, as stored on the DAG row, with its nominal occurrence."""
    model = item.model
    end = model.next_dagrun_data_interval_end
    occurrence = None
    if item.timetable is not None and end is not None:
        occurrence = from_us(item.timetable._plan.occurrence_of_window_end(to_us(end)))
    return StoredNextRun(
        occurrence=occurrence,
        run_after=model.next_dagrun_create_after,
        window_start=model.next_dagrun_data_interval_start,
        window_end=end,
    )


def upcoming(
    timetable: TesseraTimetable,
    *,
    after: datetime.datetime,
    count: int,
    until: datetime.datetime | None,
    start: datetime.datetime | None = None,
    end: datetime.datetime | None = None,
) -> list[PlannedOccurrence]:
    """The next ``count`` runs that may start strictly after ``after`` (and not after ``until``).

    ``start`` and ``end`` are the DAG's dates: like the scheduler, only occurrences within
    them (inclusive) run.
    """
    plan = timetable._plan
    zone = ZoneInfo(timetable.serialize().get("timezone") or "UTC")
    limit = None if until is None else to_us(until)
    first = to_us(after)  # Plan.upcoming lists the runs that start after this instant
    if start is not None:
        first = max(first, to_us(start) - 1 + plan.phase)
    runs = []
    for run in plan.upcoming(first, count):
        if (limit is not None and run.run_after > limit) or (end is not None and run.occurrence > to_us(end)):
            break
        occurrence = from_us(run.occurrence)
        runs.append(
            PlannedOccurrence(
                occurrence=occurrence,
                occurrence_local=occurrence.astimezone(zone).isoformat(),
                run_after=from_us(run.run_after),
                window_start=from_us(run.window_start),
                window_end=from_us(run.window_end),
                interval_seconds=run.interval / 1_000_000,
            )
        )
    return runs


def dag_plan(
    item: ScheduledDag,
    *,
    after: datetime.datetime,
    count: int,
    until: datetime.datetime | None,
    contradictions: list[Contradiction],
) -> DagPlan:
    timetable = item.timetable
    plan = None if timetable is None else timetable._plan
    mine = [
        c
        for c in contradictions
        if item.dag_id in c.dag_ids or (c.schedule is not None and c.schedule == item.declared_schedule)
    ]
    return DagPlan(
        dag_id=item.dag_id,
        summary=item.summary,
        description=item.model.timetable_description if timetable is None else timetable.description,
        timezone=item.timezone,
        cadence_kind=item.cadence_kind,
        phase=None if plan is None else format_duration(plan.phase),
        phase_ms=None if plan is None else plan.phase // 1000,
        delay=None if plan is None or not plan.delay else format_duration(plan.delay),
        lookback=None if plan is None or plan.lookback is None else format_duration(plan.lookback),
        is_paused=bool(item.model.is_paused),
        declared_schedule=item.declared_schedule,
        next_stored_run=stored_next_run(item),
        occurrences=[]
        if timetable is None
        else upcoming(
            timetable,
            after=after,
            count=count,
            until=until,
            start=getattr(item.dag, "start_date", None),
            end=getattr(item.dag, "end_date", None),
        ),
        contradictions=mine,
    )
