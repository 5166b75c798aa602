"""One DAG per ``overlap=`` policy for ``test_overlap_policies_e2e.py``: due every 10 s, each run 25 s.

Each run outlasts two or three of its ticks, so every policy has to decide about ticks that
find its runs in flight. ``e2e_overlap_allow_all`` leaves ``overlap`` at its default;
``e2e_overlap_allow_all_2`` is the same with ``max_active_runs=2``, so ticks pile up past the cap.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG, task

from tessera.timetables import Every, Fixed

RUN_SECONDS = 25

POLICIES: dict[str, dict[str, object]] = {
    "e2e_overlap_skip": {"overlap": "skip"},
    "e2e_overlap_buffer_one": {"overlap": "buffer_one"},
    "e2e_overlap_buffer_all": {"overlap": "buffer_all"},
    "e2e_overlap_allow_all": {},
    "e2e_overlap_allow_all_2": {},
}

for dag_id, overlap in POLICIES.items():
    with DAG(
        dag_id=dag_id,
        schedule=Every("10s", phase=Fixed("0s"), **overlap),  # type: ignore[arg-type]
        start_date=None,
        is_paused_upon_creation=False,
        **({"max_active_runs": 2} if dag_id.endswith("_2") else {}),
    ):

        @task
        def outlast_the_period() -> None:
            time.sleep(RUN_SECONDS)

        outlast_the_period()
