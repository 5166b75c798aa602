"""Two DAGs for ``test_overlap_pause_e2e.py``, paused until that test unpauses them.

``e2e_cancel_other``: due every 10 s, each run takes 25 s, ``overlap="cancel_other"``: each
new run fails the one still in flight. ``e2e_pause_after_failures``: due every 10 s, every
run fails, ``pause_after_failures=2``: the DAG pauses itself after its second failed run.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG, task

from tessera.timetables import Every, Fixed

with DAG(
    dag_id="e2e_cancel_other",
    schedule=Every("10s", phase=Fixed("0s"), overlap="cancel_other"),
    start_date=None,
    is_paused_upon_creation=True,
):

    @task
    def outlast_the_period() -> None:
        time.sleep(25)

    outlast_the_period()


with DAG(
    dag_id="e2e_pause_after_failures",
    schedule=Every("10s", phase=Fixed("0s"), pause_after_failures=2),
    start_date=None,
    is_paused_upon_creation=True,
):

    @task
    def always_fail() -> None:
        raise RuntimeError("the source is down")

    always_fail()
