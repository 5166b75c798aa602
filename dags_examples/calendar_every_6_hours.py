"""Every 6 hours on absolute time (00:00, 06:00, 12:00, 18:00 UTC), unaffected by daylight saving."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_calendar_every_6_hours",
    schedule=Every.hour(6),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def sync(data_interval_start=None, data_interval_end=None):
        print(f"syncing {data_interval_start} -> {data_interval_end}")

    sync()
