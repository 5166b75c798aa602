"""What the operator surfaces read from the stored (serialized) DAGs: many at once, each decoded once per version.

The plan, the status and the declared-schedule check need four things of a stored DAG:
its timetable, the date bounds of its runs, its cursor-function tasks and its
``default_args``. Deserializing the whole DAG (every task) to get them costs about
0.7 ms a DAG, and Airflow's API DAG cache is keyed by version id and looked up one DAG
at a time (64 entries by default), so a page over 1,000 DAGs read and deserialized
every one of them on every load. Here:

* one query finds the latest serialized row of every DAG asked for (Airflow's own
  "latest version of each DAG" select), reading only its id and ``dag_hash``;
* a second query fetches the JSON of the rows whose hash this process has not decoded
  yet (none on a reload when nothing changed), whatever the number of DAGs;
* each is decoded from its JSON alone, with Airflow's own decoders
  (``decode_timetable``, as ``LazyDeserializedDAG.timetable`` does), and kept per DAG id
  with its hash, so a changed DAG is decoded again and an unchanged one never.

The date bounds follow Airflow's deserialization: a task without its own start or end
date takes the DAG's (``set_task_dag_references``).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow.models.serialized_dag import SerializedDagModel
from airflow.serialization.serialized_objects import BaseSerialization
from sqlalchemy import select

from .._airflow import decode_timetable, from_timestamp, latest_by_version_select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

CURSOR_TASK_TYPE = "CursorFunctionOperator"
"""Mirrors ``tessera.operators.functions.policy.CURSOR_TASK_TYPE`` (operators are optional here)."""


@dataclass(frozen=True)
class StoredDag:
    """What the surfaces use of one stored DAG; ``error`` when its JSON could not be decoded (then nothing else)."""

    dag_id: str
    timetable: Any = None
    earliest: datetime.datetime | None = None
    """The earliest start date of the DAG and its tasks: the scheduler's lower bound on its runs."""
    latest: datetime.datetime | None = None
    """The DAG's end date, or the latest task end date when every task has one: the upper bound."""
    description: str = ""
    """The timetable's description, worded once per version (a cron's wording takes milliseconds)."""
    cursor_task_ids: tuple[str, ...] = ()
    default_args: dict[str, Any] = field(default_factory=dict)
    error: Exception | None = None


def _instant(value: Any) -> datetime.datetime | None:
    return None if value is None else from_timestamp(value)


def time_restriction(
    start: datetime.datetime | None,
    end: datetime.datetime | None,
    tasks: list[tuple[datetime.datetime | None, datetime.datetime | None]],
) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """The bounds Airflow's scheduler puts on a DAG's runs (``SerializedDAG._time_restriction``): the one copy.

    From the DAG's start and end and each task's (start, end): the earliest start of the DAG and its
    tasks; the DAG's end, or the latest end when every task has one. Contract-tested against
    Airflow's own (``tests/test_airflow_doors.py``).
    """
    starts = [task_start for task_start, _ in tasks if task_start is not None]
    if start is not None:
        starts.append(start)
    latest = end
    ends = [task_end for _, task_end in tasks if task_end is not None]
    if len(ends) == len(tasks):
        if end is not None:
            ends.append(end)
        if ends:
            latest = max(ends)
    return (min(starts) if starts else None), latest


def run_bounds(dag: dict[str, Any]) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """:func:`time_restriction` from a DAG's JSON, where a task's dates equal to the DAG's are left out."""
    start, end = _instant(dag.get("start_date")), _instant(dag.get("end_date"))
    tasks = [task["__var"] for task in dag.get("tasks") or ()]
    bounds = [(_instant(task.get("start_date")) or start, _instant(task.get("end_date")) or end) for task in tasks]
    return time_restriction(start, end, bounds)


def decode(dag_id: str, data: dict[str, Any]) -> StoredDag:
    """One stored DAG's parts, from its serialized JSON (``SerializedDagModel.data``) alone."""
    try:
        dag = data["dag"]
        earliest, latest = run_bounds(dag)
        tasks = [task["__var"] for task in dag.get("tasks") or ()]
        default_args = BaseSerialization.deserialize(dag["default_args"]) if dag.get("default_args") else {}
        timetable = decode_timetable(dag["timetable"])
        return StoredDag(
            dag_id=dag_id,
            timetable=timetable,
            description=timetable.description,
            earliest=earliest,
            latest=latest,
            cursor_task_ids=tuple(task["task_id"] for task in tasks if task.get("task_type") == CURSOR_TASK_TYPE),
            default_args=default_args if isinstance(default_args, dict) else {},
        )
    except Exception as error:  # the DAG's own problem (a timetable that no longer loads): its row says so
        return StoredDag(dag_id=dag_id, error=error)


_decoded: dict[str, tuple[str, StoredDag]] = {}
"""Per DAG id, the hash of the version decoded last and what it decoded to.

One small entry (a timetable and a few dates) per DAG id this process has listed; the entry
of a deleted DAG stays until the API server restarts, which a fleet's churn does not make large.
"""
_lock = threading.Lock()


def latest_stored(session: Session, dag_ids: Collection[str]) -> dict[str, StoredDag]:
    """The latest stored version of each of ``dag_ids`` that has one, in two queries at most.

    Database errors propagate (the session is unusable after one); a DAG whose JSON
    cannot be decoded is returned with its ``error``.
    """
    if not dag_ids:
        return {}
    model = SerializedDagModel
    latest = latest_by_version_select(list(dag_ids)).with_only_columns(model.id, model.dag_id, model.dag_hash)
    rows = session.execute(latest).all()
    with _lock:
        known = {dag_id: _decoded.get(dag_id) for _, dag_id, _ in rows}
    found: dict[str, StoredDag] = {}
    stale = {}
    for row_id, dag_id, dag_hash in rows:
        entry = known[dag_id]
        if entry is not None and entry[0] == dag_hash:
            found[dag_id] = entry[1]
        else:
            stale[row_id] = dag_hash
    if stale:
        for row in session.scalars(select(model).where(model.id.in_(list(stale)))):
            try:
                data = row.data  # decompressed here when stored compressed
            except Exception as error:
                stored = StoredDag(dag_id=row.dag_id, error=error)
            else:
                stored = decode(row.dag_id, data)
            found[row.dag_id] = stored
            with _lock:
                _decoded[row.dag_id] = (stale[row.id], stored)
    return found
