"""Every read of Airflow's records made on a caller's behalf, limited to the DAGs the caller may read.

A route authorizes the DAG it is about, but an answer about one DAG can quote another's records:
the task instances holding the pool slot its task waits for, the DAGs of a file in error. Airflow
answers 403 for another DAG's runs and task instances, so tessera must not quote them either.

This package is the only part of the request-serving code (``plugin/api``) that queries Airflow's
tables of runs (``DagRun``, ``DagRunNote``, ``Backfill``), task instances and pools, the audit log
(``Log``), XCom and import errors (``ParseImportError``); ``tests/plugin/scoped_reads/test_scoped_reads.py``
fails when another module there does. Each read takes the caller's :class:`Scope` and returns rows
of the DAGs in it only. A read that crosses DAGs counts what the caller may not read but never
names it: a pool's occupancy says how many slots other DAGs hold, not which; an import error's
text is shown only to a caller who may read every DAG of its file (as Airflow's own import-error
view does).

``DagModel`` rows (and tags, serialized DAGs) are not read here: the lists select them with the
caller's readable ids (``schedules``, ``load_fleet``, ``triggers``, ``broken``), a route reads its
own DAG's row, and a row's id and schedule are what the lists show anyway.

The features keep readers of their own records (pause history, skip events, parse states,
cursor-function statuses) beside their code, for the scheduler and the CLI; a request reaches
them only through this package, which hands them the DAGs in scope alone (the test follows the
calls of every function of ``operators`` and ``plugin`` to find which of them read these tables).
The scheduler's and the dag-processor's own reads (listeners, ``parse_watch``) are made on
nobody's behalf and stay with their features.

One module per kind of record: :mod:`.scope` (the caller's DAGs), :mod:`.runs`,
:mod:`.run_picks` (a status's history of many DAGs), :mod:`.tasks` (task instances, pools,
XCom), :mod:`.audit` and :mod:`.import_errors`.
"""

from __future__ import annotations

from .audit import (
    audit_entries,
    newest_entry_of,
    oldest_audit_entry,
    parse_problems,
    parse_records,
    pause_log,
    pauses_standing,
    run_entries,
    skip_log,
)
from .import_errors import HIDDEN, ImportErrorRow, function_statuses, import_errors
from .run_picks import QUEUED_FIRE, outcomes_and_queued, run_picks, runs_by_pk
from .runs import (
    REACH,
    RUNS_AROUND,
    BackfillRow,
    RunRow,
    active_runs_at,
    backfills,
    newest_run_pk,
    note_of,
    notes_of,
    owed_window_counts,
    run_orm,
    runs_after,
    runs_before,
    runs_between,
    runs_dated,
)
from .scope import Scope
from .tasks import PoolHolder, PoolOccupancy, TaskRow, pool_occupancy, tasks_of, xcom_values

__all__ = [
    "BackfillRow",
    "HIDDEN",
    "ImportErrorRow",
    "PoolHolder",
    "QUEUED_FIRE",
    "PoolOccupancy",
    "REACH",
    "RUNS_AROUND",
    "RunRow",
    "Scope",
    "TaskRow",
    "active_runs_at",
    "audit_entries",
    "backfills",
    "function_statuses",
    "import_errors",
    "newest_entry_of",
    "newest_run_pk",
    "note_of",
    "notes_of",
    "owed_window_counts",
    "oldest_audit_entry",
    "outcomes_and_queued",
    "parse_problems",
    "parse_records",
    "pause_log",
    "pauses_standing",
    "pool_occupancy",
    "run_entries",
    "run_orm",
    "run_picks",
    "runs_after",
    "runs_before",
    "runs_between",
    "runs_by_pk",
    "runs_dated",
    "skip_log",
    "tasks_of",
    "xcom_values",
]
