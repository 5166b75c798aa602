"""TARGET_NODES as Airflow builds it: one copy of the work per node, each on its node's queue, behind a selector.

Which nodes are up is decided at run time on real Celery workers: see
``tests/e2e/test_celery_nodes.py``.
"""

from __future__ import annotations

import datetime

import pytest
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.operators.schedules.nodes import SELECTOR_TASK_ID, configured_nodes, group_id
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tests.compat.airflow_names import DagSerialization

START = datetime.datetime(2026, 1, 4, tzinfo=datetime.timezone.utc)
SCHEDULES = ScheduleSet(
    [
        Schedule("listed", interval_seconds=60, target_nodes=["node-a", "node.b"]),
        Schedule("everywhere", interval_seconds=60, target_nodes="ALL"),
        Schedule("anywhere", interval_seconds=60),
    ]
)


def _pipeline(schedule: str, *, per_node: bool = True) -> DAG:
    with DAG("pipeline", start_date=START, **SCHEDULES.dag_kwargs(schedule)) as dag:
        if per_node:
            SCHEDULES.per_node(dag, lambda node: EmptyOperator(task_id="refresh") >> EmptyOperator(task_id="publish"))
        else:
            EmptyOperator(task_id="refresh")
    SCHEDULES.apply(dag)
    return DagSerialization.from_dict(DagSerialization.to_dict(dag))


def test_a_node_list_gets_one_copy_per_node_on_its_queue() -> None:
    dag = _pipeline("listed")
    assert sorted(dag.task_dict) == sorted(
        [SELECTOR_TASK_ID, "on_node-a.refresh", "on_node-a.publish", "on_node_b.refresh", "on_node_b.publish"]
    )
    queues = {task_id: task.queue for task_id, task in dag.task_dict.items() if task_id != SELECTOR_TASK_ID}
    assert queues == {
        "on_node-a.refresh": "node-a",
        "on_node-a.publish": "node-a",
        "on_node_b.refresh": "node.b",
        "on_node_b.publish": "node.b",
    }
    # The selector runs first, on any worker, and each copy keeps its own order.
    assert dag.get_task(SELECTOR_TASK_ID).downstream_task_ids == {"on_node-a.refresh", "on_node_b.refresh"}
    assert dag.get_task(SELECTOR_TASK_ID).queue not in ("node-a", "node.b")
    assert dag.get_task("on_node_b.refresh").downstream_task_ids == {"on_node_b.publish"}


def test_all_means_the_deployments_configured_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__TESSERA__NODES", "n1, n2,n3")
    assert configured_nodes() == ("n1", "n2", "n3")
    dag = _pipeline("everywhere")
    assert {task.queue for task_id, task in dag.task_dict.items() if task_id != SELECTOR_TASK_ID} == {"n1", "n2", "n3"}


def test_all_without_configured_nodes_is_one_copy_any_worker_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__TESSERA__NODES", raising=False)
    dag = _pipeline("everywhere")
    assert sorted(dag.task_dict) == ["publish", "refresh"]


def test_a_bad_configured_node_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__TESSERA__NODES", "n1,a b")
    with pytest.raises(ValueError, match=r"\[tessera\] nodes: 'n1,a b'; target_nodes: 'a b' is not a node id"):
        configured_nodes()


def test_a_node_list_pipeline_not_built_per_node_is_refused() -> None:
    with pytest.raises(ValueError, match="not built per node; create its tasks with schedules.per_node"):
        _pipeline("listed", per_node=False)


def test_per_node_on_a_schedule_without_nodes_is_refused() -> None:
    with pytest.raises(ValueError, match="targets no node"):
        _pipeline("anywhere")


def test_node_ids_that_collide_as_group_ids_are_refused() -> None:
    assert group_id("a.b") == group_id("a_b") == "on_a_b"
    schedules = ScheduleSet([Schedule("s", interval_seconds=60, target_nodes=["a.b", "a_b"])])
    with DAG("pipeline", start_date=START, **schedules.dag_kwargs("s")) as dag:
        with pytest.raises(ValueError, match="same task group"):
            schedules.per_node(dag, lambda node: EmptyOperator(task_id="refresh"))
