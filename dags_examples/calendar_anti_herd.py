"""Daily at 09:00 UTC, started 0-14 whole minutes late (stable per DAG) so such DAGs do not start together.

The offset only moves when the run starts: its logical date, its window and the
next run the UI shows stay exactly 09:00.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every, anti_herd

with DAG(
    dag_id="tessera_calendar_anti_herd",
    schedule=Every.day(at="09:00", timezone="UTC", phase=anti_herd()),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def refresh_dashboard(data_interval_start=None, data_interval_end=None):
        print(f"refreshing {data_interval_start} -> {data_interval_end}")

    refresh_dashboard()
