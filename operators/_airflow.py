"""The operators layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the operators use is named here and nowhere
else, each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that
moves or renames one fails that test and is ported in this file. Tessera runs on Airflow 3.1,
3.2 and 3.3: a name that moved between them is taken from where the running release keeps it
(tried newest first); one a release lacks stands in here, and the feature built on it is
refused at parse time there (``tessera.timetables.support``).
"""

from __future__ import annotations

from typing import Any

# Airflow core's "now" (no public home): the scheduler-side clock, which time_machine freezes in tests.
from airflow._shared.timezones.timezone import utcnow

# The Task SDK's copy of the same clock: what task code (the cursor function operator) reads in a worker.
from airflow.sdk._shared.timezones.timezone import utcnow as task_utcnow
from sqlalchemy.orm import Session

# The exceptions task code raises to fail without retrying, to skip, and that a task's timeout raises:
# the Task SDK's since Airflow 3.2, airflow.exceptions' on 3.1.
try:
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException, AirflowTaskTimeout
except ImportError:  # Airflow 3.1
    from airflow.exceptions import AirflowFailException, AirflowSkipException, AirflowTaskTimeout  # type: ignore

# A task's retry policy (Airflow 3.3). Before 3.3, backoff() is refused at parse time
# (support.EXACT_RETRY_WAITS), so CadenceBackoff derives from a stand-in no task ever holds.
try:
    from airflow.sdk import RetryDecision, RetryPolicy
except ImportError:  # Airflow 3.1 and 3.2

    class RetryPolicy:  # type: ignore[no-redef]
        """Stands in for Airflow 3.3's ``airflow.sdk.RetryPolicy`` where it does not exist."""

    RetryDecision = None  # type: ignore[assignment,misc]


def task_states(*names: str) -> list[Any]:
    """Airflow's ``TaskInstanceState`` members of these names that this release has (``AWAITING_INPUT``,
    a task waiting for a person's answer, arrived in Airflow 3.3)."""
    from airflow.utils.state import TaskInstanceState

    return [getattr(TaskInstanceState, name) for name in names if hasattr(TaskInstanceState, name)]


def dialect_name(session: Session) -> str:
    """The database dialect of ``session`` (``sqlite``, ``postgresql``, ``mysql``).

    ``airflow.utils.sqlalchemy.get_dialect_name`` since Airflow 3.2; on 3.1, what it reads: the bind's dialect.
    """
    try:
        from airflow.utils.sqlalchemy import get_dialect_name
    except ImportError:  # Airflow 3.1
        return session.get_bind().dialect.name
    return get_dialect_name(session)


def stats_and_conf(where: str) -> tuple[Any, Any]:
    """Airflow's ``Stats`` and configuration for a core process (``where="core"``) or task code (``"task"``).

    Airflow 3.2 split them into ``airflow.observability`` and ``airflow.sdk.observability`` (with
    ``airflow.sdk.configuration`` for task code); 3.1 has one ``airflow.stats`` and one ``conf``.
    """
    try:
        if where == "task":
            from airflow.sdk.configuration import conf
            from airflow.sdk.observability.stats import Stats
        else:
            from airflow.configuration import conf  # type: ignore[assignment]
            from airflow.observability.stats import Stats  # type: ignore[assignment]
    except ImportError:  # Airflow 3.1
        from airflow.configuration import conf  # type: ignore[assignment]
        from airflow.stats import Stats  # type: ignore[assignment]
    return Stats, conf


def runtime_task_instance() -> type:
    """The Task SDK's task instance as a worker runs it (``airflow.sdk.execution_time.task_runner``, the SDK's
    own module: no public home, and one that moves as the Task SDK grows)."""
    from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

    return RuntimeTaskInstance


def asset_scope(asset_id: int) -> Any:
    """Airflow's ``AssetScope`` for ``asset_id``: the key of an asset's state store on the server side.

    ``airflow._shared.state.AssetScope`` (Airflow 3.3) has no public home; imported on call, as the state store is.
    """
    from airflow._shared.state import AssetScope

    return AssetScope(asset_id=asset_id)


def asset_state_backend() -> Any:
    """Airflow's asset state store on the server side (``airflow.state.get_state_backend()``, Airflow 3.3)."""
    from airflow.state import get_state_backend

    return get_state_backend()


def asset_state_accessor(uri: str) -> Any:
    """An asset's state store as task and trigger code reach it (``AssetStateStoreAccessor``, Airflow 3.3)."""
    from airflow.sdk.execution_time.context import AssetStateStoreAccessor

    return AssetStateStoreAccessor(uri=uri)


def run_created_columns() -> tuple[Any, ...]:
    """The ``DagRun`` columns that say when a run was made, to ``coalesce`` in that order: ``created_at``
    (Airflow 3.2 added it), then ``queued_at`` and ``run_after``, which every release has."""
    from airflow.models.dagrun import DagRun

    created = getattr(DagRun, "created_at", None)  # Airflow 3.1: no such column
    found = (DagRun.queued_at, DagRun.run_after)
    return found if created is None else (created, *found)


def run_created_at(dag_run: Any) -> Any:
    """When ``dag_run`` (a ``DagRun`` or a row of one) was made: what :func:`run_created_columns` coalesce to."""
    return getattr(dag_run, "created_at", None) or dag_run.queued_at or dag_run.run_after


__all__ = [
    "AirflowFailException",
    "AirflowSkipException",
    "AirflowTaskTimeout",
    "RetryDecision",
    "RetryPolicy",
    "asset_scope",
    "asset_state_accessor",
    "asset_state_backend",
    "dialect_name",
    "run_created_at",
    "run_created_columns",
    "runtime_task_instance",
    "stats_and_conf",
    "task_states",
    "task_utcnow",
    "utcnow",
]
