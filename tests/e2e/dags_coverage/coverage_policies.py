"""Slow DAGs for ``test_coverage_e2e.py``: due every 10 s, each run 25 s, one DAG per policy and ``dropped=``.

Each run outlasts two or three of its ticks, so the dropping policies drop a tick or two at
every run. Under ``dropped="cover"`` (the default) the next run's window reaches back over
them; under ``"owe"`` each run keeps its own window and the dropped ones are owed.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG, task

from tessera.timetables import Every, Fixed

RUN_SECONDS = 25

POLICIES: dict[str, dict[str, object]] = {
    "e2e_cover_skip": {"overlap": "skip"},
    "e2e_cover_buffer_one": {"overlap": "buffer_one"},
    "e2e_cover_buffer_all": {"overlap": "buffer_all"},
    "e2e_cover_allow_all_2": {},
    "e2e_cover_cancel_other": {"overlap": "cancel_other"},
    "e2e_owe_skip": {"overlap": "skip", "dropped": "owe"},
    "e2e_owe_buffer_one": {"overlap": "buffer_one", "dropped": "owe"},
}


def timetable_of(dag_id: str) -> Every:
    return Every("10s", phase=Fixed("0s"), **POLICIES[dag_id])  # type: ignore[arg-type]


for dag_id in POLICIES:
    with DAG(
        dag_id=dag_id,
        schedule=timetable_of(dag_id),
        start_date=None,
        is_paused_upon_creation=False,
        **({"max_active_runs": 2} if dag_id.endswith("_2") else {}),
    ):

        @task
        def outlast_the_period() -> None:
            time.sleep(RUN_SECONDS)

        outlast_the_period()
