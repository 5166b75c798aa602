"""TARGET_NODES on two real Celery workers: one copy per node, in parallel, and a node that is down reported.

``dags_celery/celery_nodes.py``: ``celery_listed_nodes`` targets ``(node-a, node-b, node-c)``,
``celery_all_nodes`` targets ``ALL``, which is the deployment's ``[tessera] nodes``
(the same three). Only ``node-a`` (worker-a) and ``node-b`` (worker-b) have a worker:
the selector asks the live workers which queues they consume, and node-c has none.
"""

from __future__ import annotations

import json

import pytest

from .celery_stack import CeleryHome, calls, set_paused

DAGS = ("celery_listed_nodes", "celery_all_nodes")
WAIT = 240


@pytest.fixture(scope="module")
def node_runs(celery_stack: CeleryHome) -> dict[str, str]:
    """Each DAG unpaused until its first run (its newest occurrence) has finished; its run id."""
    home = celery_stack
    set_paused(home, DAGS, False)
    finished = "SELECT run_id FROM dag_run WHERE dag_id = ? AND state IN ('success', 'failed')"
    try:
        return {
            dag_id: home.wait_for(
                f"a finished run of {dag_id}", lambda d=dag_id: home.query(finished, d), timeout=WAIT
            )[0][0]
            for dag_id in DAGS
        }
    finally:
        set_paused(home, DAGS, True)


@pytest.mark.e2e
@pytest.mark.parametrize("dag_id", DAGS, ids=["node-list", "all"])
def test_each_live_node_runs_its_copy_and_the_down_node_is_reported(
    celery_stack: CeleryHome, node_runs: dict[str, str], dag_id: str
) -> None:
    home, run_id = celery_stack, node_runs[dag_id]
    (run_state,) = home.query("SELECT state FROM dag_run WHERE dag_id = ? AND run_id = ?", dag_id, run_id)[0]
    rows = home.query(
        "SELECT task_id, state, queue, hostname FROM task_instance WHERE dag_id = ? AND run_id = ?", dag_id, run_id
    )
    tis = {task_id: (state, queue, hostname) for task_id, state, queue, hostname in rows}
    assert run_state == "success", tis
    assert tis["tessera_nodes"][0] == "success"
    # One copy per live node, on that node's queue, run by that node's worker; node-c's copy skipped.
    assert tis["on_node-a.work"] == ("success", "node-a", "worker-a")
    assert tis["on_node-b.work"] == ("success", "node-b", "worker-b")
    assert tis["on_node-c.work"][:2] == ("skipped", "node-c")
    # The down node is reported where the run's page shows it: the selector's XCom (and its log).
    (value,) = home.query(
        "SELECT value FROM xcom WHERE dag_id = ? AND run_id = ? AND task_id = 'tessera_nodes' AND key = 'down_nodes'",
        dag_id,
        run_id,
    )[0]
    assert json.loads(value) == ["node-c"]
    copies = [c for c in calls(home, dag_id, "node") if c["run_id"] == run_id]
    assert sorted((c["node"], c["worker"]) for c in copies) == [("node-a", "worker-a"), ("node-b", "worker-b")]
    # Each copy waited for the other to arrive before it ended: they ran at the same time.
    a, b = copies
    assert a["start"] < b["end"] and b["start"] < a["end"], "the two copies did not run at the same time"
