"""DAGs for ``test_restart_downtime_e2e.py``: due every 10 s; the scheduler is killed while their runs are in flight.

``e2e_restart_buffer_one`` and ``e2e_restart_skip`` (one slot) run 20 s: a run holds its slot
across two ticks, so the scheduler is always killed with one in flight. ``e2e_restart_backfill``
(``Backfill(limit=3)``, Airflow's 16 slots) runs 1 s: after the restart it catches up four runs.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG, task

from tessera.timetables import Backfill, Every, Fixed

DAGS: dict[str, tuple[dict[str, object], int]] = {
    "e2e_restart_buffer_one": ({"overlap": "buffer_one"}, 20),
    "e2e_restart_skip": ({"overlap": "skip"}, 20),
    "e2e_restart_backfill": ({"catch_up": Backfill(limit=3)}, 1),
}

for dag_id, (policy, seconds) in DAGS.items():
    with DAG(
        dag_id=dag_id,
        schedule=Every("10s", phase=Fixed("0s"), **policy),  # type: ignore[arg-type]
        start_date=None,
        is_paused_upon_creation=False,
    ):

        @task
        def work(seconds: int = seconds) -> None:
            time.sleep(seconds)

        work()
