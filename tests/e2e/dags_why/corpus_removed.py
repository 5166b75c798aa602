"""The "why" corpus DAG whose file the test removes and restores (``c_removed``)."""

from __future__ import annotations

import datetime

from airflow.sdk import DAG

from tessera.timetables import Every, Fixed

with DAG(
    "c_removed",
    schedule=Every("10s", phase=Fixed("0s")),
    start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
    catchup=False,
):
    pass
