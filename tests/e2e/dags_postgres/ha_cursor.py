"""A cursor function run by real workers, whose behaviour the fault tests steer from outside.

Each call appends what it was given (run, cursor, process ids) to ``calls.jsonl`` in
the deployment's ``cursor-control`` folder; while that folder holds a file ``hang``,
a call announces itself in ``hanging`` and sleeps, so a test can kill its worker
mid-fire. The DAG starts paused: the fault tests unpause it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from airflow.sdk import DAG, get_current_context

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Every, Fixed

CONTROL = Path(__file__).resolve().parent.parent / "cursor-control"


def digest(payload: dict) -> dict:
    call = {"run_id": get_current_context()["run_id"], "cursor": payload["cursor"], "pid": os.getpid()}
    call["worker_pid"] = os.getppid()  # the worker's task supervisor: killing both is losing the worker
    with (CONTROL / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(call) + "\n")
    if (CONTROL / "hang").exists():
        (CONTROL / "hanging").write_text(json.dumps(call))
        time.sleep(600)
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1}}


with DAG(dag_id="ha_cursor", schedule=Every("10s", phase=Fixed("0s")), start_date=None, catchup=False):
    CursorFunctionOperator(
        task_id="digest",
        function=digest,
        input={"region": "emea"},
        output_schema={"type": "object", "required": ["count", "cursor"]},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={"n": 0},
    )
