"""The "why" corpus DAG whose file the test rewrites with another schedule (``c_changed``)."""

from __future__ import annotations

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.timetables import Every, Fixed

with DAG(
    "c_changed",
    schedule=Every("10s", phase=Fixed("0s")),
    start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
    catchup=False,
):
    # A task (the scheduler finishes it, no worker): Airflow then keeps this version's definition once it changes.
    EmptyOperator(task_id="work")
