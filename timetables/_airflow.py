"""The timetables layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the timetables use is named here and nowhere
else, each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that
moves or renames one fails that test and is ported in this file. Tessera runs on Airflow 3.1,
3.2 and 3.3; what differs between them is bridged here, and the running release
(:data:`AIRFLOW`) is read here only (``tessera.timetables.support`` refuses what it lacks).
"""

from __future__ import annotations

import datetime
from typing import Any

import airflow

# Airflow's "now" (no public home in core): the clock the scheduler reads and time_machine freezes.
from airflow._shared.timezones.timezone import coerce_datetime, utcnow
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable
from packaging.version import Version

AIRFLOW: tuple[int, int] = Version(airflow.__version__).release[:2]  # type: ignore[assignment]
"""The running Airflow's major and minor release: (3, 1), (3, 2) or (3, 3)."""
AIRFLOW_VERSION: str = airflow.__version__
"""The running Airflow's version as it names itself, for messages."""

# Timetable._decode_partition_date (Airflow 3.3): how Airflow turns a run's partition_key into its
# partition_date; PartitionPlan overrides it (under this name) to decode tessera's key formats.
DECODE_PARTITION_DATE = "_decode_partition_date"

OVERRIDDEN: tuple[tuple[type, str], ...] = (
    ((Timetable, DECODE_PARTITION_DATE),) if hasattr(Timetable, DECODE_PARTITION_DATE) else ()
)
"""The private Airflow methods this layer overrides, with the Airflow class that defines each (on this Airflow)."""

try:
    from airflow.exceptions import InvalidPartitionKeyError
except ImportError:  # Airflow 3.1 and 3.2: partitions are refused before a key is ever decoded (support.py)

    class InvalidPartitionKeyError(ValueError):  # type: ignore[no-redef]
        """Stands in for Airflow 3.3's error where it does not exist."""


_KEYED = "partition_key" in DagRunInfo._fields
"""Whether Airflow's ``DagRunInfo`` carries a partition (Airflow 3.2 added the fields, and requires them in 3.2)."""


def run_info(
    run_after: datetime.datetime,
    data_interval: DataInterval | None,
    partition: tuple[datetime.datetime, str] | None = None,
) -> DagRunInfo:
    """Airflow's ``DagRunInfo`` of one run, ``partition`` its date and key (None: not partitioned).

    Airflow 3.1's ``DagRunInfo`` is a two-field tuple; 3.2 added ``partition_date`` and ``partition_key``
    as required fields (3.3 gives them defaults). A partition is never planned on 3.1 (support.py refuses it).
    """
    if not _KEYED:
        return DagRunInfo(run_after=run_after, data_interval=data_interval)  # type: ignore[arg-type]
    date, key = partition if partition is not None else (None, None)
    keyed: Any = DagRunInfo
    return keyed(run_after=run_after, data_interval=data_interval, partition_date=date, partition_key=key)


def stored_run_info(timetable: Timetable, dag_model: Any) -> DagRunInfo | None:
    """The next run the scheduler stored for ``dag_model`` (``Timetable.next_run_info_from_dag_model``, 3.2).

    Airflow 3.1 has no such method (its scheduler reads the DAG model's fields itself): the same
    reading, without the partition fields 3.1 does not have.
    """
    theirs = getattr(Timetable, "next_run_info_from_dag_model", None)
    if theirs is not None:
        return theirs(timetable, dag_model=dag_model)
    from airflow.models.dag import get_next_data_interval

    run_after = coerce_datetime(dag_model.next_dagrun_create_after)
    return None if run_after is None else run_info(run_after, get_next_data_interval(timetable, dag_model))


def next_run_info(timetable: Timetable, *, last_dagrun_info: DagRunInfo | None, restriction: Any) -> DagRunInfo | None:
    """The run any timetable (tessera's or Airflow's own) plans after ``last_dagrun_info``, as the scheduler asks.

    ``next_dagrun_info_v2`` arrived in Airflow 3.2; on 3.1 the scheduler asks ``next_dagrun_info``
    with the last automated run's window, which is what this passes it there.
    """
    step = getattr(timetable, "next_dagrun_info_v2", None)
    if step is not None:
        return step(last_dagrun_info=last_dagrun_info, restriction=restriction)
    last = None if last_dagrun_info is None else last_dagrun_info.data_interval
    return timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)


def partition_date_of(info: DagRunInfo) -> datetime.datetime | None:
    """A planned run's ``partition_date`` (None: not partitioned, or Airflow 3.1, whose runs have none)."""
    return getattr(info, "partition_date", None)


__all__ = [
    "AIRFLOW",
    "AIRFLOW_VERSION",
    "DECODE_PARTITION_DATE",
    "OVERRIDDEN",
    "InvalidPartitionKeyError",
    "next_run_info",
    "partition_date_of",
    "run_info",
    "stored_run_info",
    "utcnow",
]
