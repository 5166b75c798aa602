"""The "why" corpus DAG whose file the test breaks with a Python RuntimeError at import (``c_runtime``)."""

from __future__ import annotations

import datetime

from airflow.sdk import DAG

from tessera.timetables import Every, Fixed

with DAG(
    "c_runtime",
    schedule=Every("10s", phase=Fixed("0s")),
    start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
    catchup=False,
):
    pass
