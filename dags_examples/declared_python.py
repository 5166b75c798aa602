"""Declared schedules written in Python, and the fan-in step that rebuilds a fact behind three source loads.

The same declarations as ``schedules.sql``: one named schedule carries WHEN and
HOW (retries, timeout, overlap guard, priority, alerts) for every DAG that uses
it. Here the three loads run on their own clocks, and ``gold_cross_source``
runs once all three have finished a fire it has not seen yet, whether they
succeeded or not; a load quiet for more than 26 hours is named on its run note.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet(
    [
        Schedule("daily_etl", cron="0 6 * * *", timezone="America/New_York", retries=3, retry_delay=300, timeout=3600),
        Schedule(
            "hourly_sync",
            cron="0 * * * *",
            description="Hourly data synchronization",
            max_concurrent=1,
            priority=10,
            notify=["ops-team@example.com", "data-eng@example.com"],
            webhook=["https://hooks.slack.example.com/services/T00/B00/xxx"],
        ),
        Schedule("distributed_refresh", cron="0 3 * * *", target_nodes="ALL", timeout=7200, retries=1),
        Schedule("weekly_archive", cron="0 1 * * 0", timezone="Europe/London", catchup=True, active=False),
        Schedule("apc_daily", cron="0 4 * * *", timezone="Europe/Oslo"),
        Schedule("norled_daily", cron="30 4 * * *", timezone="Europe/Oslo"),
        Schedule("mpc_daily", cron="0 5 * * *", timezone="Europe/Oslo", retries=2, retry_delay=600),
        Schedule(
            "gold_cross_source",
            after=["apc_daily", "norled_daily", "mpc_daily"],
            parent_freshness=26,
            description="Runs behind the three source loads",
        ),
    ]
)

for source in ("apc", "norled", "mpc"):
    with DAG(
        dag_id=f"tessera_declared_{source}_load",
        start_date=None,
        doc_md=__doc__,
        **SCHEDULES.dag_kwargs(f"{source}_daily", tags=["tessera", "declared"]),
    ) as load_dag:

        @task
        def load(source: str = source, data_interval_end=None) -> None:
            print(f"loading {source} up to {data_interval_end}")

        load()
    SCHEDULES.apply(load_dag)

with DAG(
    dag_id="tessera_declared_gold_cross_source",
    start_date=None,
    doc_md=__doc__,
    **SCHEDULES.dag_kwargs("gold_cross_source", tags=["tessera", "declared", "fan-in"]),
) as gold_dag:

    @task
    def rebuild(triggering_asset_events=None) -> None:
        for asset, events in (triggering_asset_events or {}).items():
            print(f"{asset.uri}: {[event.extra for event in events]}")

    rebuild()
SCHEDULES.apply(gold_dag)
