"""Airflow 3.3's backfill dry run, step by step, so a preview can stop at any run.

``airflow.models.backfill._do_dry_run`` builds the list of every run of the range before it
yields the first (``_get_info_list``), then reads the metadata DB once per run. Asked for
1970 to 2026 on a 5-minute DAG, that is six million runs held in the API server's memory,
and the work goes on after the caller has left. This module runs the same steps, in the
same order, with the same private helpers of ``airflow.models.backfill``, but lazily:

* :func:`stored_dag` and :func:`check_backfill`: the stored DAG and Airflow's refusals
  (not periodic, backfill runs not allowed, a range backwards or in the future);
* :func:`runs_in_range`: the runs of the range one at a time, as ``_get_info_list`` filters
  them (a run whose window has not ended yet is not created);
* :func:`runs_left_out`: for a bounded batch of runs, which ones the backfill would skip
  because a run already exists, in one query (the batch's date range) instead of one per run.

This is the only module that uses those private helpers (through :mod:`tessera.plugin._airflow`);
``tests/plugin/actions/test_backfill_bounds.py`` checks that it answers exactly what ``_do_dry_run`` answers.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tessera.timetables.support import partition_date_of

from ..errors import Invalid, NotFound

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _refusal(error: Exception) -> Invalid:
    return Invalid(f"{type(error).__name__}: {error}")


def stored_dag(session: Session, dag_id: str) -> Any:
    """The newest stored version of ``dag_id``, as ``_do_dry_run`` reads it."""
    from airflow.models.serialized_dag import SerializedDagModel

    stored = session.scalar(SerializedDagModel.latest_item_select_object(dag_id))
    if stored is None:
        raise NotFound(f"dag_id: {dag_id!r} has no stored DAG")
    return stored.dag


def check_backfill(
    dag: Any, *, from_date: datetime.datetime, to_date: datetime.datetime, reprocess_behavior: str | None
) -> None:
    """Refuse, in Airflow's words, what ``airflow backfill create`` refuses before it creates anything."""
    from airflow.models.backfill import ReprocessBehavior
    from airflow.utils.types import DagRunType

    from .._airflow import allowed_run_types, validate_backfill_params

    if not dag.timetable.periodic:
        raise Invalid(f"dag_id: {dag.dag_id!r} has a non-periodic schedule; backfill refuses it")
    allowed = allowed_run_types(dag)
    if allowed is not None and DagRunType.BACKFILL_JOB not in allowed:
        raise Invalid(f"dag_id: {dag.dag_id!r} does not allow backfill runs (allowed_run_types)")
    behavior = None if reprocess_behavior is None else ReprocessBehavior(reprocess_behavior)
    try:
        validate_backfill_params(dag, False, from_date, to_date, behavior, None)
    except Exception as error:  # the refusals `airflow backfill create` answers with
        if type(error).__module__.startswith("airflow."):
            raise _refusal(error) from error
        raise


def runs_in_range(dag: Any, *, from_date: datetime.datetime, to_date: datetime.datetime) -> Iterator[Any]:
    """The ``DagRunInfo`` of each run a backfill of the range creates, one at a time, oldest first."""
    from .._airflow import utcnow

    infos = dag.iter_dagrun_infos_between(from_date, to_date)
    if dag.timetable.partitioned:  # _get_info_list keeps every partition of the range
        yield from infos
        return
    now = utcnow()
    for info in infos:
        if info.data_interval is None:
            continue
        if info.data_interval.end >= now:
            # _get_info_list drops every run whose window has not ended; runs come in order, so
            # every later one is dropped too. Stopping here is what keeps a range ending in the
            # year 2999 from stepping through every future period.
            return
        yield info


def _key(moment: datetime.datetime) -> datetime.datetime:
    """An aware instant as a naive UTC one: equal instants, equal keys, whatever their datetime class."""
    return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def runs_left_out(session: Session, dag_id: str, infos: Sequence[Any], reprocess_behavior: str) -> list[bool]:
    """For each run of ``infos``, whether the backfill skips it because of a run that already exists.

    ``_do_dry_run`` asks, per run, for the newest existing run with its logical date (and partition
    date) and keeps the new run unless ``_get_dag_run_no_create_reason`` gives a reason; here the
    existing runs of the whole batch are read at once and the same rule is applied to each.
    """
    from airflow.models.backfill import ReprocessBehavior

    from .._airflow import dag_run_no_create_reason
    from ..scoped_reads import Scope, runs_dated

    scope = Scope.of([dag_id])  # the route's dependency authorized this DAG
    found: dict[str, dict[datetime.datetime, list[Any]]] = {"logical_date": {}, "partition_date": {}}
    # A run info's partition date through the timetables' bridge: Airflow 3.1's run infos have none.
    readers = {"logical_date": lambda info: info.logical_date, "partition_date": partition_date_of}
    for name, index in found.items():
        dates = [date for date in map(readers[name], infos) if date is not None]
        if not dates:
            continue
        # The runs between the batch's first and last date: two bound parameters, whatever the batch's size.
        for row in runs_dated(session, scope, dag_id, name, min(dates), max(dates)):
            index.setdefault(_key(getattr(row, name)), []).append(row)
    behavior = ReprocessBehavior(reprocess_behavior)
    left_out = []
    for info in infos:
        # A partition's runs are found by partition date, others by logical date (every run of a
        # backfill has one of them).
        by = "partition_date" if partition_date_of(info) is not None else "logical_date"
        moment = partition_date_of(info) if by == "partition_date" else info.logical_date
        candidates = found[by].get(_key(moment), []) if moment is not None else []
        matching = [row for row in candidates if info.logical_date is None or row.logical_date == info.logical_date]
        # Airflow's order: runs that started before runs that did not, the latest start first.
        matching.sort(key=lambda row: (row.start_date is None, -(row.start_date or _EPOCH).timestamp()))
        left_out.append(bool(matching) and dag_run_no_create_reason(matching[0], behavior) is not None)
    return left_out


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
