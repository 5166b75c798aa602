"""Declared schedules kept in ``schedules.sql`` and applied to pipelines by name.

Each DAG takes its schedule's whole policy with ``**SCHEDULES.dag_kwargs(name)``:
``daily_etl`` retries a failed run three times, five minutes apart, each attempt of
the whole run allowed an hour;
``hourly_sync`` never overlaps itself, goes first when slots are short and alerts
by email and webhook on failure; ``distributed_refresh`` runs one copy on every
node of the deployment (``[tessera] nodes``; a deployment without it is one node);
``weekly_archive`` is created switched off and, once switched on, runs every
Sunday that passed while it was off, oldest first, one at a time (no start date
needed).
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule_set import load_schedules

SCHEDULES = load_schedules(Path(__file__).with_name("schedules.sql"))

for name in ("daily_etl", "hourly_sync", "distributed_refresh", "weekly_archive"):
    with DAG(
        dag_id=f"tessera_declared_{name}",
        start_date=None,
        doc_md=__doc__,
        **SCHEDULES.dag_kwargs(name, tags=["tessera", "declared"]),
    ) as dag:

        def work(node: str | None = None, schedule: str = name) -> None:
            @task(task_id="run")
            def run(schedule: str = schedule, node=node, data_interval_start=None, data_interval_end=None):
                print(f"{schedule} on {node or 'any worker'}: {data_interval_start} -> {data_interval_end}")

            run()

        if SCHEDULES[name].target_nodes is None:
            work()
        else:  # TARGET_NODES: the work once per node, each copy on its node's queue
            SCHEDULES.per_node(dag, work)
    SCHEDULES.apply(dag)
