"""What the scheduler reads and keeps about a declared schedule: its pipelines, their runs, its state.

Scheduler-side only (it queries the metadata database). Every function takes the
session of the dag run being processed, so reads see that transaction's own
changes and writes commit with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .fires import PipelineRun, fire_of
from .identity import asset_uri, record_of, schedule_tag

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

RECENT_RUNS = 20
"""Runs per pipeline examined for completion; older runs of a fire are long finished."""


def dag_of(dag_run: DagRun, session: Session) -> Any:
    """The run's serialized DAG (the scheduler has usually attached it already)."""
    from airflow.models.serialized_dag import SerializedDagModel

    return getattr(dag_run, "dag", None) or SerializedDagModel.get_dag(dag_run.dag_id, session=session)


def record_of_run(dag_run: DagRun, session: Session) -> dict[str, Any] | None:
    """The declared-schedule record of the run's DAG, if it is a pipeline of one."""
    return record_of(getattr(dag_of(dag_run, session), "default_args", None))


def pipeline_run(run: DagRun) -> PipelineRun | None:
    """The run as completion sees it, or ``None`` if it is not a fire (manual, backfill)."""
    fire = fire_of(
        str(run.run_type),
        data_interval_end=run.data_interval_end,
        logical_date=run.logical_date,
        run_after=run.run_after,
        event_ids=lambda: [event.id for event in run.consumed_asset_events],
    )
    return None if fire is None else PipelineRun(run.dag_id, run.run_id, str(run.state), fire)


def pipelines_of(name: str, session: Session) -> list[str]:
    """The DAG ids of the schedule's active pipelines (tagged, not paused, not removed)."""
    from airflow.models.dag import DagModel, DagTag
    from sqlalchemy import select

    return list(
        session.scalars(
            select(DagTag.dag_id)
            .join(DagModel, DagModel.dag_id == DagTag.dag_id)
            .where(DagTag.name == schedule_tag(name), DagModel.is_stale.is_(False), DagModel.is_paused.is_(False))
            .order_by(DagTag.dag_id)
        )
    )


def runs_by_pipeline(name: str, current: DagRun, session: Session) -> dict[str, list[PipelineRun]]:
    """Recent fires of every pipeline of schedule ``name`` (``current``'s own DAG included)."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    found: dict[str, list[PipelineRun]] = {}
    for dag_id in sorted({*pipelines_of(name, session), current.dag_id}):
        # ORM objects on purpose: a run finished earlier in this scheduler loop but not yet
        # flushed is returned from the session with its new state, which a column query misses.
        runs = session.scalars(
            select(DagRun)
            .where(DagRun.dag_id == dag_id, DagRun.run_type == current.run_type)
            .order_by(DagRun.id.desc())
            .limit(RECENT_RUNS)
        ).all()
        views = [view for run in runs if run is not current and (view := pipeline_run(run)) is not None]
        if dag_id == current.dag_id and (mine := pipeline_run(current)) is not None:
            views.append(mine)
        found[dag_id] = views
    return found


def schedule_asset_id(name: str, session: Session, *, lock: bool = False) -> int | None:
    """The id of the schedule's asset; ``None`` when no DAG refers to it (nothing waits on it).

    ``lock`` takes its row lock, serialising two schedulers recording one fire at once
    (a no-op on SQLite, which has a single writer anyway).
    """
    from airflow.models.asset import AssetModel
    from airflow.utils.sqlalchemy import with_row_locks
    from sqlalchemy import select

    query = select(AssetModel.id).where(AssetModel.uri == asset_uri(name))
    return session.scalar(with_row_locks(query, of=AssetModel, session=session) if lock else query)
