"""TARGET_NODES on real workers: a node list with a node that is down, and ALL over the deployment's nodes.

The deployment's ``[tessera] nodes`` is ``node-a,node-b,node-c``, and only ``node-a``
and ``node-b`` have a worker. Each copy of the work appends a ``node`` line to
``calls.jsonl`` (the node it was built for, the worker that ran it, when it started
and ended). The copies on node-a and node-b meet: each marks its arrival and waits
(at most a minute, then fails) until the other has arrived too, which only copies
running at the same time can do. The
schedules are inactive (the DAGs start paused) and fire once, for their newest
occurrence, when a test unpauses them.
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
        Schedule("listed_nodes", cron="0 0 1 1 *", target_nodes=["node-a", "node-b", "node-c"], active=False),
        Schedule("all_nodes", cron="0 0 1 1 *", target_nodes="ALL", active=False),
    ]
)


def _copy(node: str | None) -> None:
    @task(task_id="work")
    def work(node: str | None = node) -> None:
        context = get_current_context()
        line = {"dag_id": context["dag"].dag_id, "run_id": context["run_id"], "node": node}
        line["worker"] = os.environ.get("TESSERA_E2E_HOSTNAME")
        started = time.time()
        meeting = CONTROL / f"meet-{line['dag_id']}-{line['run_id']}".replace(":", "_")
        meeting.mkdir(exist_ok=True)
        (meeting / str(node)).touch()
        deadline = time.monotonic() + 60
        while not all((meeting / other).exists() for other in ("node-a", "node-b")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {node}: the other copy never ran at the same time")
            time.sleep(0.2)
        with (CONTROL / "calls.jsonl").open("a") as calls:
            calls.write(json.dumps({**line, "event": "node", "start": started, "end": time.time()}) + "\n")

    work()


for name in ("listed_nodes", "all_nodes"):
    with DAG(dag_id=f"celery_{name}", start_date=None, **SCHEDULES.dag_kwargs(name)) as dag:
        SCHEDULES.per_node(dag, _copy)
    SCHEDULES.apply(dag)
