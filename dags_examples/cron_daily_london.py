"""Every day at 06:00 London time, as a Kubernetes CronJob would run it (also across BST changes)."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Cron

with DAG(
    dag_id="tessera_cron_daily_london",
    schedule=Cron("0 6 * * *", timezone="Europe/London"),
    start_date=None,
    tags=["tessera", "cron"],
    doc_md=__doc__,
):

    @task
    def digest(data_interval_start=None, data_interval_end=None):
        print(f"digest of {data_interval_start} -> {data_interval_end}")

    digest()
