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

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tessera.timetables.rules import excerpt

from .identity import record_of
from .plan_check import after_cycles, check_count, cycle_refusal
from .policy import dag_kwargs
from .schedule import Schedule

MAX_SCHEDULES_FILE_BYTES = 1024 * 1024
"""1 MiB: thousands of statements; the dag-processor reads the file at every parse of every DAG file using it."""
_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


class ScheduleSet(Mapping[str, Schedule]):
    """Declared schedules by name; one name may be declared once, and no AFTER cycle may be declared.

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
        # Schedules behind each other never fire, and nothing fails to show it: refuse the set.
        if cycles := after_cycles(by_name):
            raise ValueError(cycle_refusal(cycles[0]))
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
        """The plan check of these schedules; see :func:`~tessera.operators.schedules.plan_check.check_plan`.

        :param count: next fires listed per schedule, 0 to 1000.
        """
        from .plan_check import check_plan

        return check_plan(self, pipelines=pipelines, count=check_count(count))


def load_schedules(path: str | Path) -> ScheduleSet:
    """Read every ``SCHEDULE ...;`` statement of a file into a :class:`ScheduleSet`.

    The file must be a regular file of at most :data:`MAX_SCHEDULES_FILE_BYTES` (1 MiB) of UTF-8
    text: a device, a FIFO or a directory is refused without being read (``/dev/zero`` would be
    read forever, a FIFO would hold the dag-processor's parse until someone writes to it).

    :raises ValueError: naming ``path``, for a file that is not regular or is over the cap.
    :raises ~tessera.operators.schedules.statement.ScheduleSyntaxError: with the line and column of the bad clause.
    """
    from .statement import ScheduleSyntaxError, parse_schedules

    path = Path(path)
    data = _read_capped(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        # Refused like any other flaw of the file: at the line and column of the first bad byte.
        before = data[: error.start].decode("utf-8")
        line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
        raise ScheduleSyntaxError("not UTF-8 text; save the file as UTF-8", line, column, str(path)) from None
    return ScheduleSet(parse_schedules(text, source=str(path)))


def _read_capped(path: Path) -> bytes:
    """The bytes of a regular file of at most the cap; what the name opens is judged, links followed."""
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
        raise ValueError(
            f"path: {excerpt(str(path))} is {kind}, not a regular file; load_schedules reads a file of "
            f"SCHEDULE statements (at most {MAX_SCHEDULES_FILE_BYTES} bytes)"
        )
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(MAX_SCHEDULES_FILE_BYTES + 1)  # never more, even if the file grows meanwhile
    if len(data) > MAX_SCHEDULES_FILE_BYTES:
        size = max(len(data), os.stat(path).st_size)
        raise ValueError(
            f"path: {excerpt(str(path))} is {size} bytes; a schedules file is at most {MAX_SCHEDULES_FILE_BYTES} "
            "bytes (1 MiB): split it into several files"
        )
    return data
