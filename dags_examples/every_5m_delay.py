"""Every 5 minutes, windows shifted back 30 s so late telemetry lands, phase spread by DAG id."""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_every_5m_delay",
    schedule=Every("5m", delay="30s"),
    start_date=None,
    tags=["tessera", "interval"],
    doc_md=__doc__,
):

    @task
    def evaluate(data_interval_start=None, data_interval_end=None):
        print(f"evaluating {data_interval_start} -> {data_interval_end}")

    evaluate()
