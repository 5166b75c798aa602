"""Two cursor functions unpaused at creation, due at the same second every minute (no phase).

On the fresh database of the PostgreSQL deployment, the two schedulers start their
first runs at once, each admission asking for the dispatch pool that does not exist
yet: one scheduler admits both in one transaction, or each admits one at the same instant.
"""

from __future__ import annotations

from airflow.sdk import DAG

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Every, Fixed


def count_one(payload: dict) -> dict:
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1}}


for dag_id in ("ha_fresh_cursor_a", "ha_fresh_cursor_b"):
    with DAG(dag_id=dag_id, schedule=Every("1m", phase=Fixed("0s")), start_date=None, is_paused_upon_creation=False):
        CursorFunctionOperator(
            task_id="fn",
            function=count_one,
            output_schema={"type": "object", "required": ["count", "cursor"]},
            cursor_from="/cursor",
            cursor_into="/cursor",
            initial={"n": 0},
        )
