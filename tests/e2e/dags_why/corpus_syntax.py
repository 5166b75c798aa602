"""The "why" corpus DAG whose file the test breaks with a Python syntax error (``c_syntax``)."""

from __future__ import annotations

import datetime

from airflow.sdk import DAG

from tessera.timetables import Every, Fixed

with DAG(
    "c_syntax",
    schedule=Every("10s", phase=Fixed("0s")),
    start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
    catchup=False,
):
    pass
