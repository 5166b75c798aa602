"""The fleet whose load is shown: every active DAG the caller may read, read in a constant number of queries.

Only the timetable and the DAG's own start and end dates are decoded from each stored DAG
(not its tasks), because that is all a timetable needs to answer "when is the next run".
Task-level start and end dates, which the scheduler also honours, are not read: a DAG
whose tasks start later than the DAG itself is counted from the DAG's start date.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import TYPE_CHECKING

from airflow.models.dag import DagModel
from airflow.models.serialized_dag import SerializedDagModel
from sqlalchemy import select

from tessera.plugin._airflow import decode_timetable

from .starts import FleetDag

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _instant(value: object) -> datetime.datetime | None:
    if value is None:
        return None
    return datetime.datetime.fromtimestamp(float(value), tz=datetime.timezone.utc)  # type: ignore[arg-type]


def _fleet_dag(dag_id: str, data: dict) -> FleetDag:
    try:
        dag = data["dag"]
        return FleetDag(
            dag_id=dag_id,
            timetable=decode_timetable(dag["timetable"]),
            start_date=_instant(dag.get("start_date")),
            end_date=_instant(dag.get("end_date")),
        )
    except Exception as error:  # a timetable that no longer loads: listed with why, not a 500
        return FleetDag(dag_id=dag_id, timetable=None, error=f"reading the timetable failed: {error!r}")


def fleet(
    session: Session, *, readable: Collection[str], include_paused: bool, offset: int = 0, limit: int | None = None
) -> tuple[list[FleetDag], int]:
    """The active DAGs among ``readable`` with their timetables, and how many paused ones were left out.

    By DAG id, ``limit`` of them from ``offset`` (all by default): a page of the active DAGs, so a
    stale DAG the caller may still read takes no place on it. Two queries whatever the number of
    DAGs: the DAG rows, then their latest stored versions.
    """
    rows = session.execute(
        select(DagModel.dag_id, DagModel.is_paused)
        .where(~DagModel.is_stale)
        .where(DagModel.dag_id.in_(readable))
        .order_by(DagModel.dag_id)
        .offset(offset)
        .limit(limit)
    ).all()
    wanted = [dag_id for dag_id, paused in rows if include_paused or not paused]
    paused_left_out = len(rows) - len(wanted)
    if not wanted:
        return [], paused_left_out
    stored = {
        row.dag_id: row.data for row in SerializedDagModel.get_latest_serialized_dags(dag_ids=wanted, session=session)
    }
    dags = [
        _fleet_dag(dag_id, stored[dag_id])
        if stored.get(dag_id)
        else FleetDag(dag_id=dag_id, timetable=None, error="not serialized yet")
        for dag_id in wanted
    ]
    return dags, paused_left_out
