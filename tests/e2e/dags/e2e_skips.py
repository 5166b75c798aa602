"""A cursor function for ``test_scheduler_skips.py``: due every 10 seconds, paused until that test unpauses it.

Paused at creation so it loads no worker while the other end-to-end tests run; the
test pauses it again when it is done.
"""

from __future__ import annotations

from airflow.sdk import DAG

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Every, Fixed


def count_one(payload: dict) -> dict:
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1}}


with DAG(
    dag_id="e2e_cursor_downtime",
    schedule=Every("10s", phase=Fixed("0s")),
    start_date=None,
    is_paused_upon_creation=True,
):
    CursorFunctionOperator(
        task_id="fn",
        function=count_one,
        output_schema={"type": "object", "required": ["count", "cursor"]},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={"n": 0},
    )
