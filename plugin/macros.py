"""Template macros (``{{ macros.tessera.phase_ms(dag, dag_run) }}``): a run's schedule facts in templates."""

from __future__ import annotations

from typing import Any

from tessera.timetables.run_facts.of_task import RunSchedule, run_schedule, schedule_of

__all__ = ["interval_ms", "phase_ms", "run_schedule"]


def phase_ms(dag: Any, dag_run: Any) -> int | None:
    """The run's phase in milliseconds: how long after its occurrence it was allowed to start.

    As recorded on the run when it was created (so a later schedule change does not rewrite it).
    """
    info: RunSchedule | None = schedule_of(dag, dag_run)
    return None if info is None else info.phase_ms


def interval_ms(dag: Any, dag_run: Any) -> int | None:
    """The real spacing of the run's occurrence from the previous one, in milliseconds."""
    info = schedule_of(dag, dag_run)
    return None if info is None else info.interval_ms
