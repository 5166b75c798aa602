"""A herd and its cure, for the Schedules page's fleet load view and ``tessera plan dags_examples --load``.

Six DAGs on Airflow's own cron, every 15 minutes, all start their runs in the same minute:
four spikes an hour, each naming the six. Six more on the same cadence with tessera's
``Every("15m")`` start at their default phase, a stable offset hashed from the DAG id below
15 minutes, so the same work spreads over the quarter hour. The tasks are EmptyOperators: the
scheduler completes them without a worker.
"""

from __future__ import annotations

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.timetables import Every

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
HERD = 6

for i in range(HERD):
    with DAG(
        dag_id=f"tessera_herd_cron_{i}",
        schedule="*/15 * * * *",  # Airflow's own cron: no phase, every DAG at :00, :15, :30, :45
        start_date=START,
        catchup=False,
        tags=["tessera", "load-herd"],
        doc_md=__doc__,
    ):
        EmptyOperator(task_id="sync")

    with DAG(
        dag_id=f"tessera_herd_phased_{i}",
        schedule=Every("15m"),  # the same cadence; the default phase spreads the starts
        start_date=START,
        catchup=False,
        tags=["tessera", "load-herd"],
        doc_md=__doc__,
    ):
        EmptyOperator(task_id="sync")
