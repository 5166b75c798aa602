"""How a tessera timetable reads in Airflow's UI: its one-line summary and the sentence describing its runs.

Both are worded from plain values (the cadence in words, the private plan, the options given),
so every timetable says the same facts the same way; a subclass adds what is its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._time.durations import format_duration

if TYPE_CHECKING:
    from ._time.plan import Plan
    from .policies import CatchUp
    from .run_policy import RunPolicy


def summary_line(
    cadence: str,
    plan: Plan,
    *,
    phase_given: bool,
    catch_up: CatchUp,
    key_format: str | None,
    run_policy: RunPolicy | None,
    dropped: str | None = None,
) -> str:
    """``cadence``, then each option that is not its default: ``every 5m · delay 30s · phase 2m10s``.

    ``dropped`` is given only when it is not the timetable's default (``dropped owe``).
    """
    parts = [cadence]
    if plan.lookback is not None:
        parts.append(f"window {format_duration(plan.lookback)}")
    if plan.delay:
        parts.append(f"delay {format_duration(plan.delay)}")
    if phase_given or plan.phase:
        parts.append(f"phase {format_duration(plan.phase)}")
    if catch_up.backlog != 1:
        parts.append(f"catch-up {catch_up.describe()}")
    if key_format is not None:
        parts.append(f"partitioned {key_format}")
    parts += [] if run_policy is None else run_policy.summary_parts()
    if dropped is not None:
        parts.append(f"dropped {dropped}")
    return " · ".join(parts)


def description_sentence(cadence: str, plan: Plan) -> str:
    """When the runs come, which window each evaluates and when it starts: Airflow's timetable description."""
    window = (
        f"the {format_duration(plan.lookback)} before it"
        if plan.lookback is not None
        else "the time since the previous occurrence"
    )
    delay = f", shifted back {format_duration(plan.delay)}" if plan.delay else ""
    phase = f"; runs start {format_duration(plan.phase)} after each occurrence" if plan.phase else ""
    return f"Runs {cadence}; each run evaluates {window}{delay}{phase}."
