"""Single flight for refresh DAGs: a DAG with a ``RefreshSQLOperator`` runs one run at a time.

A refresh re-computes a dashboard's numbers; two runs of it at once race to write the
same table and report two receipts for one change. The on-demand refresh API already
joins a run in flight, but Airflow's own surfaces (the schedule, the Trigger button,
``POST /api/v2/dags/{dag_id}/dagRuns``, the CLI) start runs beside it unless the DAG
allows one active run. So the dag policy holds every such DAG to ``max_active_runs=1``:
the scheduler then keeps a second run *queued* until the first one ends. No run is
dropped; a refresh requested while one is in flight joins it instead.

A DAG that leaves ``max_active_runs`` at Airflow's default gets 1; a DAG that asks for
more is refused with an import error naming the field, rather than silently changed.
"""

from __future__ import annotations

from typing import Any

from .refresh_sql import RefreshSQLOperator


def refresh_tasks(dag: Any) -> list[str]:
    """The task ids of ``dag``'s ``RefreshSQLOperator`` tasks."""
    return [task.task_id for task in dag.tasks if isinstance(task, RefreshSQLOperator)]


def hold_single_flight(dag: Any, *, default_max_active_runs: int) -> bool:
    """Give a refresh DAG ``max_active_runs=1``; whether ``dag`` is a refresh DAG.

    :param default_max_active_runs: Airflow's ``[core] max_active_runs_per_dag``, the value
        of a DAG that did not set the field (it is replaced, not refused).
    :raises ValueError: the DAG asks for more than one active run.
    """
    tasks = refresh_tasks(dag)
    if not tasks:
        return False
    if dag.max_active_runs not in (1, default_max_active_runs):
        raise ValueError(
            f"max_active_runs: {dag.max_active_runs!r} on DAG {dag.dag_id!r}; a DAG with a RefreshSQLOperator task"
            f" ({', '.join(tasks)}) runs one refresh at a time, so a second run waits queued instead of racing"
            " the first; remove max_active_runs or set it to 1"
        )
    dag.max_active_runs = 1
    return True
