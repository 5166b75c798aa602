"""On the 31st at 06:00 UTC, which means the month's last day: 28 or 29 February, 30 April, never skipped."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_calendar_month_end",
    schedule=Every.month(on=31, at="06:00", timezone="UTC"),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def close_books(data_interval_start=None, data_interval_end=None):
        print(f"closing the month {data_interval_start} -> {data_interval_end}")

    close_books()
