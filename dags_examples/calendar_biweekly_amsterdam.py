"""Every 2 weeks on Monday at 07:00 Amsterdam time; the fortnights count from the week of 1970-01-05."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_calendar_biweekly_amsterdam",
    schedule=Every.week(on="monday", at="07:00", every=2, timezone="Europe/Amsterdam"),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def plan_sprint(data_interval_start=None, data_interval_end=None):
        print(f"sprint review covers {data_interval_start} -> {data_interval_end}")

    plan_sprint()
