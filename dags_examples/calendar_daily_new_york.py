"""Daily at 09:00 New York time: 09:00 local on every day, so the transition days' windows are 23h and 25h."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.operators.backoff import backoff
from tessera.timetables import Every

schedule = Every.day(at="09:00", timezone="America/New_York")

with DAG(
    dag_id="tessera_calendar_daily_new_york",
    schedule=schedule,
    start_date=None,
    max_active_runs=1,  # a failing run keeps the slot and retries 5m, 10m, 20m ... at most daily
    default_args=backoff(schedule),
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def report(data_interval_start=None, data_interval_end=None):
        hours = (data_interval_end - data_interval_start).total_seconds() / 3600
        print(f"reporting {data_interval_start} -> {data_interval_end} ({hours:g}h)")

    report()
