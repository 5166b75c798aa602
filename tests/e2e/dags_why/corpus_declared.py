"""Declared schedules of the "why" fault corpus: MAX_CONCURRENT, a wave gate, and an AFTER fan-in.

``c_child`` runs AFTER ``c_src_a`` and ``c_src_b`` with a 0.003 h (10.8 s) freshness window:
``c_src_b`` fires once when unpaused, ``c_src_a`` later and then every 30 s, so the child's first
run names ``c_src_b`` as a stale parent, and then the child waits for ``c_src_b``.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet(
    [
        # INACTIVE: paused at creation, like every corpus DAG; the test unpauses each when its step starts.
        # Daily, not hourly: unpausing runs the newest due occurrence, and two pipelines unpaused either
        # side of an occurrence ran different fires (the wave never opened; one run in eight crossed an hour).
        Schedule("c_mc", interval_seconds=86400, max_concurrent=1, active=False),
        Schedule("c_waves", interval_seconds=86400, max_wave_concurrent=1, active=False),
        Schedule("c_src_a", interval_seconds=30, active=False),
        Schedule("c_src_b", interval_seconds=86400, active=False),
        Schedule("c_fan_in", after=["c_src_a", "c_src_b"], parent_freshness=0.003, active=False),
    ]
)


@task
def sleep(seconds: float) -> None:
    time.sleep(seconds)


for name, dag_id, seconds in [
    ("c_mc", "c_mc_pipe", 60),
    ("c_waves", "c_wave_1", 60),
    ("c_waves", "c_wave_2", 1),
]:
    with DAG(dag_id, start_date=None, **S.dag_kwargs(name)) as dag:
        sleep(seconds)
    S.apply(dag)

for name, dag_id in [("c_src_a", "c_src_a_load"), ("c_src_b", "c_src_b_load"), ("c_fan_in", "c_child")]:
    with DAG(dag_id, start_date=None, **S.dag_kwargs(name)) as dag:
        pass
    S.apply(dag)
