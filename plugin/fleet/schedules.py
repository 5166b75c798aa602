"""Which DAGs the operator surfaces show, and the plan of each: its next runs, windows and phase.

A DAG is shown when its timetable is a tessera timetable (the plugin door's
``tessera_timetable``: the import path Airflow records on the DAG row, or on
Airflow 3.1 the tag tessera's dag policy gives it) or when it is a pipeline of a declared
schedule (tag ``tessera-schedule:<name>``; an AFTER schedule is asset-driven, so
its timetable is Airflow's own).

The runs listed are the timetable's public plan (``upcoming``), bounded by the DAG's
start and end dates exactly as the scheduler bounds them, so the REST API, the CLI and
the Schedules page list the runs the scheduler creates, no more and no fewer.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from airflow.models.dag import DagModel, DagTag
from sqlalchemy import ColumnElement, Row, Select, or_, select
from sqlalchemy.exc import SQLAlchemyError

from tessera.timetables.base import TesseraTimetable
from tessera.timetables.public_plan import PublicPlan
from tessera.timetables.rules import format_duration
from tessera.timetables.run_facts.of_task import RunSchedule

from .._airflow import has_tessera_timetable, tessera_timetable
from ..errors import NotFound
from .failures import failure
from .memo import memo_of
from .models import PlannedOccurrence
from .stored import StoredDag, latest_stored, time_restriction

if TYPE_CHECKING:
    from airflow.models.dagbag import DBDagBag
    from sqlalchemy.orm import Session

_US = datetime.timedelta(microseconds=1)

SCHEDULE_TAG_PREFIX = "tessera-schedule:"
"""Mirrors ``tessera.operators.schedules.identity.TAG_PREFIX`` (not imported: operators are optional here)."""


DAG_COLUMNS = (
    DagModel.dag_id,
    DagModel.is_paused,
    DagModel.has_import_errors,
    DagModel.timetable_summary,
    DagModel.timetable_description,
    DagModel.asset_expression,
    DagModel.next_dagrun_data_interval_start,
    DagModel.next_dagrun_data_interval_end,
    DagModel.next_dagrun_create_after,
)
"""What the surfaces read of a DAG row: selected as columns, not as ``DagModel`` objects (a third of the cost)."""


@dataclass(frozen=True)
class ScheduledDag:
    """One DAG the surfaces show: its row, what they use of its latest stored version, and its tessera timetable.

    ``model`` holds the row's :data:`DAG_COLUMNS`; ``error`` says why the stored version could not be
    read (``stored`` is then None).
    """

    model: Row
    stored: StoredDag | None
    timetable: TesseraTimetable | None
    declared_schedule: str | None
    error: str | None = None
    dag_id: str = field(init=False, repr=False, compare=False)
    """The row's DAG id, read from it once: a load of the page reads it some 15 times a DAG (a row's
    attribute costs ten times a plain one's)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "dag_id", self.model.dag_id)

    @cached_property
    def summary(self) -> str:
        if self.timetable is not None:
            return self.timetable.summary
        return self.model.timetable_summary or ""

    @cached_property
    def plan(self) -> PublicPlan | None:
        """The tessera timetable's public plan (None without one): built once per stored version (:mod:`.memo`)."""
        return None if self.timetable is None else memo_of(self.dag_id, self.stored).plan_of(self.timetable)

    @cached_property
    def next_stored(self) -> RunSchedule | None:
        """The run the scheduler creates next (stored on the DAG row), as the plan reads it."""
        end = self.model.next_dagrun_data_interval_end
        if self.plan is None or end is None:
            return None
        plan, model = self.plan, self.model
        return memo_of(self.dag_id, self.stored).run(("window end", end), lambda: plan.next_stored(model))

    def schedule_of(self, run: Any) -> RunSchedule | None:
        """A stored run's schedule facts as it was created (``plan.of_run``), from its id and window.

        Computed once per run and stored version (:mod:`.memo`): a status reads its newest fire up to
        three times, and every reload of the page again.
        """
        if self.plan is None:
            return None
        plan = self.plan
        key = ("run", run.run_id, run.data_interval_start, run.data_interval_end)
        return memo_of(self.dag_id, self.stored).run(key, lambda: plan.of_run(run))

    @property
    def timezone(self) -> str:
        return "UTC" if self.plan is None else self.plan.timezone

    @property
    def cadence_kind(self) -> str:
        if self.plan is not None:
            return "wall_clock" if self.plan.is_wall_clock else "interval"
        return "after" if self.declared_schedule is not None else "other"


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


def is_scheduled(model: DagModel) -> bool:
    """Whether the surfaces show this DAG row (the same rule as :func:`scheduled_dags`' query)."""
    if has_tessera_timetable(model):
        return True
    return any(tag.name.startswith(SCHEDULE_TAG_PREFIX) for tag in model.tags)


def _shown(
    query: Select, *, readable: Collection[str] | None, dag_id: str | None, dag_ids: Collection[str] | None = None
) -> Select:
    """``query`` restricted to the DAG rows the surfaces show (see :func:`is_scheduled`), of ``dag_ids`` if given."""
    tagged = select(DagTag.dag_id).where(DagTag.name.startswith(SCHEDULE_TAG_PREFIX))
    query = query.where(~DagModel.is_stale).where(or_(tessera_timetable(), DagModel.dag_id.in_(tagged)))
    if readable is not None:
        query = query.where(DagModel.dag_id.in_(readable))
    if dag_id is not None:
        query = query.where(DagModel.dag_id == dag_id)
    if dag_ids is not None:
        query = query.where(DagModel.dag_id.in_(sorted(dag_ids)))
    return query


def shown_ids(
    session: Session, *, readable: Collection[str] | None, where: Collection[ColumnElement[bool]] = ()
) -> list[str]:
    """The ids of the tessera DAGs the caller may read (of those matching ``where``), in order; one query."""
    query = _shown(select(DagModel.dag_id), readable=readable, dag_id=None).where(*where)
    return list(session.scalars(query.order_by(DagModel.dag_id)))


def scheduled_dags(
    session: Session,
    *,
    readable: Collection[str] | None,
    dag_id: str | None = None,
    dag_ids: Collection[str] | None = None,
) -> list[ScheduledDag]:
    """The tessera DAGs the caller may read (all of them, just ``dag_id``, or those of ``dag_ids``), by DAG id.

    ``readable=None``: the route has already authorized the caller for ``dag_id``.
    Three queries whatever the number of DAGs: the rows, their declared-schedule tags (one
    query, not one per 500 rows as a select-in load batches them) and the stored versions.
    """
    query = _shown(select(*DAG_COLUMNS), readable=readable, dag_id=dag_id, dag_ids=dag_ids).order_by(DagModel.dag_id)
    models = session.execute(query).all()
    schedule_tags: dict[str, list[str]] = {}
    # of the rows just read, by id: the same rows as a subquery made PostgreSQL take 100 ms at 3,000 DAGs
    ids = [model.dag_id for model in models]
    for tagged_id, name in session.execute(
        select(DagTag.dag_id, DagTag.name).where(DagTag.name.startswith(SCHEDULE_TAG_PREFIX), DagTag.dag_id.in_(ids))
    ):
        schedule_tags.setdefault(tagged_id, []).append(name)
    stored = latest_stored(session, [model.dag_id for model in models])
    found = []
    for model in models:
        item = stored.get(model.dag_id)
        error = None
        if item is not None and item.error is not None:
            item, error = None, failure("reading the stored DAG", model.dag_id, item.error)
        timetable = None if item is None else item.timetable
        tags = sorted(schedule_tags.get(model.dag_id, ()))
        found.append(
            ScheduledDag(
                model=model,
                stored=item,
                timetable=timetable if isinstance(timetable, TesseraTimetable) else None,
                declared_schedule=tags[0][len(SCHEDULE_TAG_PREFIX) :] if tags else None,
                error=error,
            )
        )
    return found


def unknown_dag(dag_id: str) -> NotFound:
    """The refusal for a DAG id with no row in Airflow's ``dag`` table."""
    return NotFound(f"dag_id: {dag_id!r} is not a DAG Airflow knows (never parsed, or deleted)")


def not_scheduled(session: Session, dag_id: str, model: DagModel | None = None) -> NotFound:
    """Why ``dag_id`` is no tessera DAG a route can answer for: unknown, no longer parsed, or another schedule."""
    model = model if model is not None else session.get(DagModel, dag_id)
    if model is None:
        return unknown_dag(dag_id)
    if model.is_stale:
        return NotFound(f"dag_id: {dag_id!r} is no longer defined by a parsed DAG file (its file is gone or changed)")
    return NotFound(f"dag_id: {dag_id!r} is not a tessera-scheduled DAG")


def scheduled_model(session: Session, dag_id: str) -> DagModel:
    """The row of a tessera DAG the route has authorized the caller for, without its stored DAG."""
    model = session.get(DagModel, dag_id)
    if model is None or model.is_stale or not is_scheduled(model):
        raise not_scheduled(session, dag_id, model)
    return model


def scheduled_dag(session: Session, dag_id: str) -> ScheduledDag:
    """One tessera DAG the route has authorized the caller for; :class:`NotFound` if it is not one."""
    found = scheduled_dags(session, readable=None, dag_id=dag_id)
    if not found:
        raise not_scheduled(session, dag_id)
    return found[0]


def run_bounds(dag: Any) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """The earliest and latest bound of the DAG's runs, derived as the scheduler derives them.

    Airflow's scheduler restricts a timetable to the earliest start date of the DAG and its
    tasks, and to the DAG's end date, or the latest task end date when every task has one
    (:func:`~.stored.time_restriction`). A :class:`~.stored.StoredDag` carries them, derived from its JSON.
    """
    if isinstance(dag, StoredDag):
        return dag.earliest, dag.latest
    tasks = [(task.start_date, task.end_date) for task in getattr(dag, "tasks", ())]
    return time_restriction(dag.start_date, dag.end_date, tasks)


def planned_runs(
    plan: PublicPlan,
    dag: Any,
    *,
    after: datetime.datetime,
    count: int,
    until: datetime.datetime | None,
    anchor: datetime.datetime | None = None,
) -> list[RunSchedule]:
    """The next ``count`` runs the scheduler creates for ``dag`` starting after ``after`` (and not after ``until``).

    ``dag`` is a DAG (``tessera plan`` parses the file) or a :class:`~.stored.StoredDag` (the API).
    ``anchor``: the DAG row's stored next run (its window end), which a schedule from the last run steps from.
    """
    start, end = run_bounds(dag)
    return plan.upcoming(after=after, count=count, until=until, start_date=start, end_date=end, anchor=anchor)


def occurrence_fields(run: RunSchedule, timezone: str) -> dict[str, Any]:
    """A run's fields as the API lists it (:class:`~.models.PlannedOccurrence`)."""
    return {
        "occurrence": run.occurrence,
        "occurrence_local": run.occurrence.astimezone(ZoneInfo(timezone)).isoformat(),
        "run_after": run.run_after,
        "window_start": run.window_start,
        "window_end": run.window_end,
        "interval_seconds": run.interval_ms / 1000,
        "partition_key": run.partition_key,
    }


def occurrence_of(run: RunSchedule, timezone: str) -> PlannedOccurrence:
    # Built without validation: every field is already of its type, and a page lists ~60,000
    # of them for 1,000 DAGs (validating them cost a tenth of the plan call).
    return PlannedOccurrence.model_construct(**occurrence_fields(run, timezone))


def duration_text(delta: datetime.timedelta) -> str:
    """A duration as users write it (``"2m10s"``)."""
    return format_duration(delta // _US)
