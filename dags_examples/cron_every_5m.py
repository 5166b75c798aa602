"""`@every 5m`: every five minutes counted from the Unix epoch, so every scheduler agrees on the instants."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Cron

with DAG(
    dag_id="tessera_cron_every_5m",
    schedule=Cron("@every 5m"),
    start_date=None,
    tags=["tessera", "cron"],
    doc_md=__doc__,
):

    @task
    def sweep(data_interval_start=None, data_interval_end=None):
        print(f"sweeping the queue for {data_interval_start} -> {data_interval_end}")

    sweep()
