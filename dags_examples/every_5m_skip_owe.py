"""Every 5 minutes, one run at a time; a tick due while a run is still going is skipped and its window owed.

`overlap="skip"` drops a tick that finds the run before it in flight (recorded as
ConcurrencyForbidden). With `dropped="owe"` every run keeps its own 5-minute window, so the
skipped tick's window is left owed instead of folded into the next run: the Schedules page
and `GET /tessera/api/v1/dags/tessera_every_5m_skip_owe/status` list the owed windows, and
`airflow backfill create` over them runs exactly those. (The default, `dropped="cover"`, has the
next run evaluate the skipped windows with its own.)
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every

with DAG(
    dag_id="tessera_every_5m_skip_owe",
    schedule=Every("5m", overlap="skip", dropped="owe"),
    start_date=None,
    tags=["tessera", "interval", "overlap"],
    doc_md=__doc__,
):

    @task
    def evaluate(data_interval_start=None, data_interval_end=None):
        print(f"evaluating {data_interval_start} -> {data_interval_end}")

    evaluate()
