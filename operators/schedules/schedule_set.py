"""The registry DAG files use: declared schedules by name, applied to pipelines.

.. code-block:: python

    schedules = load_schedules(Path(__file__).parent / "schedules.sql")   # or ScheduleSet([...])

    with DAG("orders_load", start_date=..., **schedules.dag_kwargs("daily_etl")) as dag:
        ...
    schedules.apply(dag)   # adds the wave gate when the schedule bounds MAX_WAVE_CONCURRENT

    # TARGET_NODES: the work built once per target node, each copy on its node's queue.
    with DAG("fleet_refresh", start_date=..., **schedules.dag_kwargs("distributed_refresh")) as dag:
        schedules.per_node(dag, lambda node: BashOperator(task_id="refresh", bash_command="..."))
    schedules.apply(dag)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tessera.operators.excerpt import excerpt

from .identity import record_of
from .policy import dag_kwargs
from .schedule import Schedule


class ScheduleSet(Mapping[str, Schedule]):
    """Declared schedules by name; one name may be declared once.

    :param schedules: the declarations, e.g. from :func:`load_schedules`.
    """

    def __init__(self, schedules: Iterable[Schedule]) -> None:
        by_name: dict[str, Schedule] = {}
        for schedule in schedules:
            if not isinstance(schedule, Schedule):
                raise TypeError(f"schedules: {excerpt(schedule)} is a {type(schedule).__name__}; give Schedule objects")
            if schedule.name in by_name:
                raise ValueError(f"name: {schedule.name!r} is declared twice; give each schedule its own name")
            by_name[schedule.name] = schedule
        self._by_name = by_name

    def __getitem__(self, name: str) -> Schedule:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(sorted(self._by_name)) or "none"
            raise KeyError(f"schedule: {excerpt(name)} is not declared; declared schedules: {known}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"ScheduleSet({sorted(self._by_name)})"

    def dag_kwargs(self, name: str, /, **dag_args: Any) -> dict[str, Any]:
        """``DAG(...)`` keyword arguments that make a DAG a pipeline of schedule ``name``.

        Pass the DAG's own tags, callbacks or default_args through here so they are
        combined with the schedule's; see :func:`~tessera.operators.schedules.policy.dag_kwargs`.
        """
        return dag_kwargs(self[name], **dag_args)

    def apply(self, dag: Any) -> Any:
        """Finish a pipeline built with :meth:`dag_kwargs` once its tasks exist; returns the DAG.

        Adds the wave gate in front of the pipeline's first tasks when its schedule bounds
        ``max_wave_concurrent``. A schedule with target nodes must have built its work with
        :meth:`per_node`: a task sent to no node's queue would run on any one worker.
        """
        schedule = self._schedule_of(dag)
        nodes = self._nodes(schedule)
        from .nodes import SELECTOR_TASK_ID

        if nodes and SELECTOR_TASK_ID not in dag.task_dict:
            raise ValueError(
                f"target_nodes: schedule {schedule.name!r} targets {', '.join(nodes)} but {dag.dag_id!r} was not "
                f"built per node; create its tasks with schedules.per_node(dag, build) so each node gets its copy"
            )
        if schedule.max_wave_concurrent:
            from .wave_gate import add_wave_gate

            add_wave_gate(dag, schedule.name)
        return dag

    def per_node(self, dag: Any, build: Callable[[str | None], Any]) -> Any:
        """Build a pipeline's work once per target node of its schedule; returns the DAG.

        ``build(node)`` creates the tasks of one copy (called inside the node's task group,
        whose tasks go to the node's queue). The nodes are the schedule's list, or for
        ``ALL`` the deployment's ``[tessera] nodes``; see :mod:`~tessera.operators.schedules.nodes`.
        Without any (``ALL`` on a deployment that lists no nodes) it builds one copy,
        ``build(None)``, that any worker runs.
        """
        schedule = self._schedule_of(dag)
        if schedule.target_nodes is None:
            raise ValueError(
                f"target_nodes: schedule {schedule.name!r} targets no node; build {dag.dag_id!r}'s tasks "
                f"directly, or give the schedule target_nodes"
            )
        nodes = self._nodes(schedule)
        if not nodes:
            with dag:
                build(None)
            return dag
        from .nodes import build_per_node

        build_per_node(dag, nodes, build)
        return dag

    def _schedule_of(self, dag: Any) -> Schedule:
        record = record_of(dag.default_args)
        if record is None:
            raise ValueError(
                f"dag: {dag.dag_id!r} was not built with ScheduleSet.dag_kwargs(...); pass "
                f"**schedules.dag_kwargs(name) to DAG(...) first"
            )
        return self[record["name"]]

    @staticmethod
    def _nodes(schedule: Schedule) -> tuple[str, ...]:
        if schedule.target_nodes is None:
            return ()
        if schedule.target_nodes == "ALL":
            from .nodes import configured_nodes

            return configured_nodes()
        return tuple(schedule.target_nodes)

    def plan(self, *, pipelines: Mapping[str, Iterable[str]] | None = None, count: int = 3) -> Any:
        """The plan check of these schedules; see :func:`~tessera.operators.schedules.plan_check.check_plan`."""
        from .plan_check import check_plan

        return check_plan(self, pipelines=pipelines, count=count)


def load_schedules(path: str | Path) -> ScheduleSet:
    """Read every ``SCHEDULE ...;`` statement of a file into a :class:`ScheduleSet`.

    :raises ~tessera.operators.schedules.statement.ScheduleSyntaxError: with the line and column of the bad clause.
    """
    from .statement import ScheduleSyntaxError, parse_schedules

    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        # Refused like any other flaw of the file: at the line and column of the first bad byte.
        before = data[: error.start].decode("utf-8")
        line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
        raise ScheduleSyntaxError("not UTF-8 text; save the file as UTF-8", line, column, str(path)) from None
    return ScheduleSet(parse_schedules(text, source=str(path)))
