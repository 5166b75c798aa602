"""The plugin layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the plugin uses is named here and nowhere else,
each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that moves or
renames one fails that test and is ported in this file. The backfill and serialization helpers
are imported on call, as their callers did: the plugin loads in every Airflow process and most
never need them.
"""

from __future__ import annotations

import datetime
from typing import Any

# Airflow core's "now" (no public home): the API server's clock, which time_machine freezes in tests.
# coerce_datetime: a datetime (or None) as the pendulum DateTime the scheduler compares with.
# from_timestamp: a POSIX timestamp as that DateTime (stored next-run instants).
from airflow._shared.timezones.timezone import coerce_datetime, from_timestamp, utcnow


def validate_backfill_params(
    dag: Any,
    reverse: bool,
    from_date: datetime.datetime,
    to_date: datetime.datetime,
    reprocess_behavior: Any,
    dag_run_conf: dict | None,
) -> None:
    """``airflow.models.backfill._validate_backfill_params``: what ``airflow backfill create``
    refuses before it creates anything; the backfill preview refuses the same, in Airflow's words."""
    from airflow.models.backfill import _validate_backfill_params

    _validate_backfill_params(dag, reverse, from_date, to_date, reprocess_behavior, dag_run_conf)


def dag_run_no_create_reason(dr: Any, reprocess_behavior: Any) -> str | None:
    """``airflow.models.backfill._get_dag_run_no_create_reason``: why a backfill skips a run that
    already exists (None: it runs again); the preview applies Airflow's rule to each run it lists."""
    from airflow.models.backfill import _get_dag_run_no_create_reason

    return _get_dag_run_no_create_reason(dr, reprocess_behavior)


def latest_by_version_select(dag_ids: list[str]) -> Any:
    """``SerializedDagModel._latest_by_version_select``: the select of each DAG's newest stored
    version, Airflow's own query, so the API lists the version the scheduler uses."""
    from airflow.models.serialized_dag import SerializedDagModel

    return SerializedDagModel._latest_by_version_select(dag_ids)


def commit_guards(session: Any) -> list[Any]:
    """The scheduler's commit guards on ``session`` (``airflow.utils.sqlalchemy.CommitProhibitorGuard``).

    ``prohibit_commit(session)`` listens to the session's ``before_commit`` with the guard's
    private ``_validate_commit``, which refuses any commit but the one announced by setting the
    guard's ``expected_commit``. SQLAlchemy fires ``before_commit`` for a savepoint's release too,
    so a listener step that releases one must announce it; found by that bound method, the one
    trace the guard leaves on the session.
    """
    from airflow.utils.sqlalchemy import CommitProhibitorGuard

    validate = CommitProhibitorGuard._validate_commit
    return [fn.__self__ for fn in session.dispatch.before_commit if getattr(fn, "__func__", None) is validate]


__all__ = [
    "coerce_datetime",
    "commit_guards",
    "dag_run_no_create_reason",
    "from_timestamp",
    "latest_by_version_select",
    "utcnow",
    "validate_backfill_params",
]
