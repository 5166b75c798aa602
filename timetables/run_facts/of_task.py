"""What a running task can learn about its own schedule: occurrence, window, phase, interval."""

from __future__ import annotations

from typing import Any

from ..public_plan import RunSchedule


def run_schedule(context: dict[str, Any]) -> RunSchedule | None:
    """The schedule facts of the run a task belongs to; ``None`` if its DAG has no tessera timetable.

    Use it in a task (``run_schedule(get_current_context())``) or in a template
    (``{{ macros.tessera.run_schedule(task_instance.get_template_context()).phase_ms }}``,
    or the shorter ``{{ macros.tessera.phase_ms(dag, dag_run) }}``).
    """
    return schedule_of(context["dag"], context["dag_run"])


def schedule_of(dag: Any, dag_run: Any) -> RunSchedule | None:
    from ..base import TesseraTimetable

    timetable = dag.timetable
    if not isinstance(timetable, TesseraTimetable):
        return None
    return timetable.plan.of_run(dag_run)  # what the run recorded when it was created, else recomputed
