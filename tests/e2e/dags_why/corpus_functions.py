"""Cursor functions of the "why" fault corpus: a paused run-now, a Forbid overlap, the dispatch cap.

The deployment runs with ``[tessera] max_concurrent_dispatches = 1``: while ``c_forbid``'s
slow fire is in flight, the cap is full.
"""

from __future__ import annotations

import time

from airflow.sdk import DAG

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Every, Fixed


def count_one(payload: dict) -> dict:
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1}}


def slow_count(payload: dict) -> dict:
    time.sleep(60)
    return count_one(payload)


for dag_id, schedule, function in [
    ("c_suspended", None, count_one),
    ("c_forbid", Every("1h", phase=Fixed("0s")), slow_count),
    ("c_cap", Every("1h", phase=Fixed("0s")), count_one),
]:
    with DAG(dag_id=dag_id, schedule=schedule, start_date=None, catchup=False):
        CursorFunctionOperator(
            task_id="fn",
            function=function,
            output_schema={"type": "object", "required": ["count", "cursor"]},
            cursor_from="/cursor",
            cursor_into="/cursor",
            initial={"n": 0},
        )
