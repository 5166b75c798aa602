"""TARGET_NODES: one copy of a pipeline's work on each target node, the nodes that are down reported.

A node is an executor queue that only that node's workers serve
(``airflow celery worker --queues default,<node>``). Airflow sends a task to one
queue, so "run on nodes a and b" is two tasks: :meth:`ScheduleSet.per_node
<tessera.operators.schedules.schedule_set.ScheduleSet.per_node>` builds the
pipeline's work once per node, in a task group ``on_<node>`` whose tasks go to that
node's queue, behind a first task, :class:`NodeSelector`.

Which nodes: a node list names them; ``ALL`` means every node of the deployment,
``[tessera] nodes`` (a comma-separated list of node queues, set on the dag-processor).
The copies must exist when the DAG is parsed, and the dag-processor cannot see the
workers, so the candidates come from the declaration or that setting; a deployment
without it is one node, and ``ALL`` is one copy that any worker runs.

Which of them are up is decided when a fire runs, by :class:`NodeSelector` on a
worker: under the CeleryExecutor it asks the live workers which queues they consume
(Celery's ``inspect().active_queues()``, a broadcast over the broker: workers have no
database in Airflow 3, but they all reach the broker). A node no live worker serves
is logged, pushed as the XCom ``down_nodes``, and its copy skipped, so the run is not
held by a message no worker will ever take; the copies on live nodes run in parallel.
With no live target node at all the selector fails, and so does the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from airflow.providers.standard.operators.branch import BaseBranchOperator

from tessera.timetables.rules import excerpt

from ..tessera_names import CONFIG_SECTION

SELECTOR_TASK_ID = "tessera_nodes"
NODES_OPTION = "nodes"
INSPECT_TIMEOUT = 5.0
"""Seconds the selector waits for the workers' replies: a worker that cannot answer in that long is down."""


def group_id(node: str) -> str:
    """The task group of a node's copy; a node id's dots, which group ids refuse, become '_'."""
    return "on_" + re.sub(r"[^\w-]", "_", node)


def configured_nodes() -> tuple[str, ...]:
    """``[tessera] nodes``: every node of the deployment (what ``ALL`` means); empty when not set."""
    from airflow.configuration import conf

    from .checks import target_nodes

    raw = conf.get(CONFIG_SECTION, NODES_OPTION, fallback="") or ""
    names = tuple(name.strip() for name in raw.split(",") if name.strip())
    if not names:
        return ()
    try:
        return tuple(target_nodes(list(names)))  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"[tessera] {NODES_OPTION}: {excerpt(raw)}; {error}") from None


def live_queues(timeout: float = INSPECT_TIMEOUT) -> set[str] | None:
    """The queues some live Celery worker consumes; ``None`` when the executor is not Celery (no nodes to ask)."""
    from airflow.configuration import conf

    if "CeleryExecutor" not in conf.get("core", "executor", fallback=""):
        return None
    from airflow.providers.celery.executors.celery_executor_utils import app

    replies = app.control.inspect(timeout=timeout).active_queues() or {}
    return {queue["name"] for queues in replies.values() for queue in (queues or ())}


class NodeSelector(BaseBranchOperator):
    """The first task of a node-targeted pipeline: runs the copies on live nodes, skips and reports the rest.

    :param nodes: the target nodes, in declaration order.
    """

    ui_color = "#eef3e2"

    def __init__(self, *, nodes: Sequence[str], **kwargs: Any) -> None:
        kwargs.setdefault("task_id", SELECTOR_TASK_ID)
        # Choosing nodes is not the pipeline's work: its retries and timeout are the schedule's business.
        kwargs.setdefault("retries", 0)
        super().__init__(**kwargs)
        self.nodes = list(nodes)

    def choose_branch(self, context: Any) -> list[str]:
        live = live_queues()
        up = self.nodes if live is None else [node for node in self.nodes if node in live]
        down = [node for node in self.nodes if node not in up]
        context["ti"].xcom_push(key="down_nodes", value=down)
        if down:
            self.log.warning("Target node(s) %s have no live worker: their copies are skipped", ", ".join(down))
        if not up:
            raise RuntimeError(f"no target node is up: none of {', '.join(self.nodes)} has a live worker")
        self.log.info("Running on node(s) %s", ", ".join(up))
        return [group_id(node) for node in up]


def build_per_node(dag: Any, nodes: Sequence[str], build: Callable[[str], Any]) -> NodeSelector:
    """Call ``build(node)`` once per node inside the node's task group (queue = the node), behind a selector."""
    from airflow.sdk import TaskGroup

    if SELECTOR_TASK_ID in dag.task_dict:
        raise ValueError(f"dag: {dag.dag_id!r} already has its per-node copies; call per_node once per pipeline")
    groups = [group_id(node) for node in nodes]
    if len(set(groups)) != len(groups):
        raise ValueError(
            f"target_nodes: {excerpt(list(nodes))} give two nodes the same task group ({', '.join(groups)}); "
            f"rename one (ids differing only by '.' and '_' collide)"
        )
    selector = NodeSelector(nodes=nodes, dag=dag)
    for node, group in zip(nodes, groups):
        with TaskGroup(group_id=group, dag=dag, default_args={"queue": node}) as copy:
            build(node)
        selector >> copy
    return selector
