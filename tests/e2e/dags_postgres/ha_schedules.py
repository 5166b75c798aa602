"""The DAGs the PostgreSQL high-availability tests run under a dag-processor and two schedulers.

Short cadences, so each test sees several occurrences within a minute or two. The
tasks are ``EmptyOperator``s, which the scheduler completes itself: these tests are
about the runs the schedulers create, not about task execution.
"""

from __future__ import annotations

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.timetables import Backfill, Every, Fixed, Latest

STEADY = {
    # Several DAGs on the same short cadence, so both schedulers have runs to create every few seconds.
    "ha_every_10s_a": Every("10s"),
    "ha_every_10s_b": Every("10s"),
    "ha_every_10s_c": Every("10s", phase=Fixed("0s")),
    "ha_every_20s_fixed": Every("20s", phase=Fixed("3s")),
    "ha_every_15s_delay": Every("15s", delay="5s"),
}
CATCH_UP = {
    "ha_catch_up_latest": Every("10s", phase=Fixed("1s"), catch_up=Latest()),
    "ha_catch_up_backfill_3": Every("10s", phase=Fixed("1s"), catch_up=Backfill(limit=3)),
}

for dag_id, schedule in {**STEADY, **CATCH_UP}.items():
    with DAG(dag_id=dag_id, schedule=schedule, start_date=None, is_paused_upon_creation=False):
        EmptyOperator(task_id="noop")
