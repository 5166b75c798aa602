"""What a running task can learn about its own schedule: occurrence, window, phase, interval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunSchedule:
    """The schedule facts pinned to one run, in the units tasks use (ms and aware datetimes)."""

    occurrence: Any
    run_after: Any
    window_start: Any
    window_end: Any
    phase_ms: int
    interval_ms: int
    """The real spacing of this occurrence from the previous one (23h or 25h across a DST change)."""
    partition_key: str | None = None
    """Airflow's ``partition_key`` of this run when its timetable is ``partitioned`` (its period's start)."""


def run_schedule(context: dict[str, Any]) -> RunSchedule | None:
    """The schedule facts of the run a task belongs to; ``None`` if its DAG has no tessera timetable.

    Use it in a task (``run_schedule(get_current_context())``) or in a template
    (``{{ macros.tessera.run_schedule(task_instance.get_template_context()).phase_ms }}``,
    or the shorter ``{{ macros.tessera.phase_ms(dag, dag_run) }}``).
    """
    return schedule_of(context["dag"], context["dag_run"])


def schedule_of(dag: Any, dag_run: Any) -> RunSchedule | None:
    from .base import TesseraTimetable

    timetable = dag.timetable
    if not isinstance(timetable, TesseraTimetable):
        return None
    return timetable.plan.of_run(dag_run)  # what the run recorded when it was created, else recomputed
