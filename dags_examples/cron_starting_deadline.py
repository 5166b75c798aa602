"""Hourly sync in New York time that skips any hour it could not start within 10 minutes.

After scheduler downtime the stale ticks are skipped (reason MissedDeadline) and the
schedule resumes at the next tick; `Backfill(limit=3)` would otherwise run up to three
missed hours, and the deadline trims those older than 10 minutes.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Backfill, Cron

with DAG(
    dag_id="tessera_cron_starting_deadline",
    schedule=Cron("0 * * * *", timezone="America/New_York", starting_deadline="10m", catch_up=Backfill(limit=3)),
    start_date=None,
    tags=["tessera", "cron"],
    doc_md=__doc__,
):

    @task
    def sync(data_interval_start=None, data_interval_end=None):
        print(f"syncing {data_interval_start} -> {data_interval_end}")

    sync()
