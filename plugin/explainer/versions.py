"""Which definition of a DAG was in force at an instant: its DAG versions and their stored (serialized) DAGs.

Airflow keeps every version of a DAG (``dag_version``, numbered, with its creation time) and the
serialized DAG of each. The schedule that decided an occurrence at T is the one of the newest
version created at or before T; the current one is the newest version. Three indexed look-ups
(``dag_id``, ``version_number``) and one read of at most two serialized DAGs.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.dag_version import DagVersion
from airflow.models.serialized_dag import SerializedDagModel
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from ..fleet.failures import failure
from ..fleet.schedules import run_bounds

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


_SAME_WRITE = datetime.timedelta(seconds=1)
"""A stored DAG written within this of its version's creation was written with it."""


@dataclass(frozen=True)
class Version:
    id: uuid.UUID
    number: int
    created_at: datetime.datetime

    @property
    def record(self) -> str:
        stored = self.created_at.astimezone(datetime.timezone.utc)
        return f"dag_version {self.number} (stored {stored:%Y-%m-%d %H:%M:%S} UTC)"


@dataclass(frozen=True)
class Definition:
    """What one stored version says about scheduling (or why it could not be read)."""

    version: Version
    timetable: Any = None
    start: datetime.datetime | None = None
    end: datetime.datetime | None = None
    catchup: bool = False
    max_active_runs: int | None = None
    run_timeout: datetime.timedelta | None = None
    """The DAG's ``dagrun_timeout`` (a declared schedule's TIMEOUT): Airflow fails a run that runs longer."""
    default_args: dict[str, Any] | None = None
    rewritten: datetime.datetime | None = None
    """When the version's stored DAG was last rewritten in place, if after it was created: Airflow keeps
    updating one version until a task has run under it, so its definition before then is not stored."""
    error: str | None = None

    @property
    def summary(self) -> str:
        if self.error is not None:
            return f"(not readable: {self.error})"
        return str(getattr(self.timetable, "summary", "") or type(self.timetable).__name__)


@dataclass(frozen=True)
class DagAtT:
    model: DagModel
    then: Definition | None
    """The version in force at T (None: the DAG was first stored after T, see ``first``)."""
    now: Definition | None
    first: Version | None


def _version(session: Session, dag_id: str, *where: Any, order: Any) -> Version | None:
    row = session.execute(
        select(DagVersion.id, DagVersion.version_number, DagVersion.created_at)
        .where(DagVersion.dag_id == dag_id, *where)
        .order_by(order)
        .limit(1)
    ).first()
    return None if row is None else Version(*row)


def _definition(version: Version, row: SerializedDagModel | None, dag_id: str) -> Definition:
    if row is None:
        return Definition(version, error="its serialized DAG is gone")
    try:
        dag = row.dag
        start, end = run_bounds(dag)
        updated = row.last_updated
        rewritten = updated if updated is not None and updated > version.created_at + _SAME_WRITE else None
        return Definition(
            version,
            timetable=dag.timetable,
            start=start,
            end=end,
            catchup=bool(dag.catchup),
            max_active_runs=dag.max_active_runs,
            run_timeout=dag.dagrun_timeout if isinstance(dag.dagrun_timeout, datetime.timedelta) else None,
            default_args=dict(dag.default_args or {}),
            rewritten=rewritten,
        )
    except SQLAlchemyError:
        raise
    except Exception as error:  # a version whose timetable no longer loads: say so, never a 500
        return Definition(version, error=failure(f"reading DAG version {version.number}", dag_id, error))


def dag_at(session: Session, model: DagModel, at: datetime.datetime) -> DagAtT:
    dag_id = model.dag_id
    then = _version(session, dag_id, DagVersion.created_at <= at, order=DagVersion.created_at.desc())
    latest = _version(session, dag_id, order=DagVersion.version_number.desc())
    first = None if then is not None else _version(session, dag_id, order=DagVersion.version_number)
    wanted = {version.id: version for version in (then, latest) if version is not None}
    rows = {}
    if wanted:
        query = select(SerializedDagModel).where(SerializedDagModel.dag_version_id.in_(list(wanted)))
        rows = {row.dag_version_id: row for row in session.scalars(query)}
    defined = {vid: _definition(version, rows.get(vid), dag_id) for vid, version in wanted.items()}
    return DagAtT(
        model=model,
        then=None if then is None else defined[then.id],
        now=None if latest is None else defined[latest.id],
        first=first,
    )
