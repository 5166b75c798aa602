"""AFTER fan-in and a gated wave whose pipelines run on different Celery workers.

* ``celery_fan_a`` and ``celery_fan_b`` fire every 20 s, their one task pinned to
  ``node-a`` and ``node-b``; ``celery_fan_child`` runs AFTER both (fan-in).
* ``celery_wave`` fires every 30 s with MAX_WAVE_CONCURRENT 1: ``celery_wave_1`` (on
  ``node-a``) runs first, ``celery_wave_2`` (on ``node-b``) once it has finished.

Every task appends a ``step`` line to ``calls.jsonl`` (DAG, run, worker, start, end).
The schedules are inactive (paused at creation): the tests unpause them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from airflow.sdk import DAG, get_current_context, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

CONTROL = Path(__file__).resolve().parent.parent / "cursor-control"
SCHEDULES = ScheduleSet(
    [
        Schedule("celery_fan_a", interval_seconds=20, active=False),
        Schedule("celery_fan_b", interval_seconds=20, active=False),
        Schedule("celery_fan_child", after=["celery_fan_a", "celery_fan_b"], active=False),
        Schedule("celery_wave", interval_seconds=30, max_wave_concurrent=1, active=False),
    ]
)


def _step(seconds: float, queue: str) -> None:
    @task(task_id="step", queue=queue)
    def step() -> None:
        context = get_current_context()
        line = {"dag_id": context["dag"].dag_id, "run_id": context["run_id"], "event": "step"}
        line["worker"] = os.environ.get("TESSERA_E2E_HOSTNAME")
        started = time.time()
        time.sleep(seconds)
        with (CONTROL / "calls.jsonl").open("a") as calls:
            calls.write(json.dumps({**line, "start": started, "end": time.time()}) + "\n")

    step()


for dag_id, schedule, seconds, queue in (
    ("celery_fan_a", "celery_fan_a", 1, "node-a"),
    ("celery_fan_b", "celery_fan_b", 1, "node-b"),
    ("celery_fan_child", "celery_fan_child", 0, "default"),
    ("celery_wave_1", "celery_wave", 3, "node-a"),
    ("celery_wave_2", "celery_wave", 3, "node-b"),
):
    with DAG(dag_id=dag_id, start_date=None, **SCHEDULES.dag_kwargs(schedule)) as dag:
        _step(seconds, queue)
    SCHEDULES.apply(dag)
