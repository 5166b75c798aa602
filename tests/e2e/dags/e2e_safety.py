"""DAGs that once stopped a scheduler, run by ``test_scheduler_safety.py`` beside the other end-to-end DAGs.

- ``e2e_cursor_a`` and ``e2e_cursor_b``: two cursor functions, unpaused at creation, due
  at the same second every minute (no phase), so on a fresh deployment the scheduler
  starts a run of each in one loop and admits both in one transaction, while the
  dispatch pool does not exist yet.
- ``e2e_cursor_forbid``: a Forbid cursor function with no schedule, paused at creation;
  the test queues several run-nows, then unpauses it, so all of them start in one loop
  (and, asked while paused, are skipped as ``Suspended``).
- ``e2e_hostile_cron``: every minute since 2000 with the largest backfill limit;
  ``e2e_healthy_every_20s`` beside it must keep getting its runs.
"""

from __future__ import annotations

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Backfill, Cron, Every, Fixed


def count_one(payload: dict) -> dict:
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1}}


def _cursor_function(dag_id: str, schedule: Every | None, *, paused: bool) -> None:
    with DAG(dag_id=dag_id, schedule=schedule, start_date=None, is_paused_upon_creation=paused):
        CursorFunctionOperator(
            task_id="fn",
            function=count_one,
            output_schema={"type": "object", "required": ["count", "cursor"]},
            cursor_from="/cursor",
            cursor_into="/cursor",
            initial={"n": 0},
        )


for name in ("e2e_cursor_a", "e2e_cursor_b"):
    _cursor_function(name, Every("1m", phase=Fixed("0s")), paused=False)
_cursor_function("e2e_cursor_forbid", None, paused=True)

with DAG(
    dag_id="e2e_hostile_cron",
    schedule=Cron("* * * * *", catch_up=Backfill(limit=1000)),
    start_date=datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc),
    is_paused_upon_creation=False,
):
    EmptyOperator(task_id="noop")

with DAG(dag_id="e2e_healthy_every_20s", schedule=Every("20s"), start_date=None, is_paused_upon_creation=False):
    EmptyOperator(task_id="noop")
