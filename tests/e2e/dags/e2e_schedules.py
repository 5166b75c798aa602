"""The DAGs the end-to-end tests run under a real dag-processor and scheduler.

Short cadences so a few runs exist within a couple of minutes. Their tasks are
``EmptyOperator``s, which the scheduler completes itself: the tests are about
the runs the scheduler creates, not about task execution.
"""

from __future__ import annotations

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.timetables import Every, Fixed

with DAG(
    dag_id="e2e_every_30s_fixed_phase",
    schedule=Every("30s", delay="5s", phase=Fixed("3s")),
    start_date=None,
    is_paused_upon_creation=False,
):
    EmptyOperator(task_id="noop")

with DAG(
    dag_id="e2e_every_30s_default_phase",
    schedule=Every("30s"),
    start_date=None,
    is_paused_upon_creation=False,
):
    EmptyOperator(task_id="noop")

# Only backfilled (dry run), never scheduled: it stays paused.
with DAG(
    dag_id="e2e_every_1h_delay_5m",
    schedule=Every("1h", delay="5m"),
    start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
):
    EmptyOperator(task_id="noop")
