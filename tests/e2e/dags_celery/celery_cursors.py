"""Cursor functions run by two Celery workers, steered from outside through the ``cursor-control`` folder.

Every call appends a ``start`` line and, once it returns, an ``end`` line to
``calls.jsonl``: the DAG, run, the cursor it was given, the worker that ran it and
its process ids. While the folder holds ``hang-<dag_id>``, a call of that DAG on
``worker-b`` announces itself in ``hanging`` and sleeps, so a test can kill the
worker mid-fire. Every DAG starts paused: each test unpauses the ones it needs.

* ``celery_alternate``: every 10 s, a quick call; the deployment's cluster policy sends
  consecutive fires to ``node-a`` and ``node-b`` alternately (``celery_stack.ROUTED``).
* ``celery_forbid``: every 5 s, a call of 7 s under ``Forbid``, each fire routed to a
  node by a hash of its occurrence, so the fires that run land on both workers.
* ``celery_cap_0`` .. ``celery_cap_3``: every 5 s, a call of 6 s each, under the
  deployment's dispatch cap.
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


def _log(line: dict) -> None:
    # One short line per write, appended: lines from the two workers never interleave.
    with (CONTROL / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(line) + "\n")


def _call(payload: dict, seconds: float) -> dict:
    context = get_current_context()
    dag_id = context["dag"].dag_id
    call = {
        "dag_id": dag_id,
        "run_id": context["run_id"],
        "cursor": payload["cursor"],
        "worker": os.environ.get("TESSERA_E2E_HOSTNAME"),
        "pid": os.getpid(),
        "worker_pid": os.getppid(),
    }
    _log({**call, "event": "start", "at": time.time()})
    if (CONTROL / f"hang-{dag_id}").exists() and call["worker"] == "worker-b":
        (CONTROL / "hanging").write_text(json.dumps(call))
        time.sleep(600)
    time.sleep(seconds)
    _log({**call, "event": "end", "at": time.time()})
    return {"count": 1, "cursor": {"n": payload["cursor"]["n"] + 1, "by": call["run_id"]}}


def quick(payload: dict) -> dict:
    return _call(payload, 0)


def seven_seconds(payload: dict) -> dict:
    return _call(payload, 7)


def six_seconds(payload: dict) -> dict:
    return _call(payload, 6)


def _function(dag_id: str, every: str, function, **kwargs) -> None:
    with DAG(dag_id=dag_id, schedule=Every(every, phase=Fixed("0s")), start_date=None, catchup=False):
        CursorFunctionOperator(
            task_id="fire",
            function=function,
            input={"dag": dag_id},
            output_schema={"type": "object", "required": ["count", "cursor"]},
            cursor_from="/cursor",
            cursor_into="/cursor",
            initial={"n": 0, "by": None},
            **kwargs,
        )


_function("celery_alternate", "10s", quick)
_function("celery_forbid", "5s", seven_seconds, concurrency="Forbid")
for index in range(4):
    _function(f"celery_cap_{index}", "5s", six_seconds)
