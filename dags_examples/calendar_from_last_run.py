"""Every 30 days from the last run, no anchor: a flat period stepped from the previous scheduled run.

The first window starts at the DAG's start date; each later run is the previous one plus 30 days,
read from the runs Airflow stored, so every scheduler and every restart agrees. (Every("30d") would
instead sit on the Unix-epoch grid.)
"""

from __future__ import annotations

import datetime

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_calendar_from_last_run",
    schedule=Every.month(),
    start_date=datetime.datetime(2026, 11, 20, 14, 23, tzinfo=datetime.timezone.utc),
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def reconcile(data_interval_start=None, data_interval_end=None):
        print(f"reconciling {data_interval_start} -> {data_interval_end}")

    reconcile()
