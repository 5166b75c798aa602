"""Metrics of cursor-carrying functions, through Airflow's Stats (StatsD / OpenTelemetry as configured).

Every metric is tagged ``dag_id`` and ``task_id`` (plus ``outcome`` or ``reason``) for
the backends that keep tags, and, while ``[metrics] legacy_names_on`` is on, is also
sent under a per-function name for plain StatsD, which drops tags:
``tessera.cursor_function.fires.<outcome>.<dag_id>.<task_id>``. A DAG may hold more
than one function, so the task id is part of the name: each function has its own
``seconds_since_last_success`` gauge. See :mod:`tessera.operators.stats`.

Emitting a metric never changes a fire's result: a broken metrics backend is logged
and ignored.
"""

from __future__ import annotations

import datetime

from tessera.operators.stats import Metric, Where, emit

PREFIX = "tessera.cursor_function"
FIRES = f"{PREFIX}.fires"
"""Counter: fires by ``outcome`` (Succeeded, Failed)."""
FIRE_DURATION = f"{PREFIX}.fire_duration"
"""Timer: wall time of a fire, bookkeeping included, by ``outcome``."""
SECONDS_SINCE_LAST_SUCCESS = f"{PREFIX}.seconds_since_last_success"
"""Gauge, set at the end of every fire (0 after a clean one) and by the scheduler every heartbeat."""
CURSOR_WRITE_FAILURES = f"{PREFIX}.cursor_write_failures"
"""Counter: fires whose function succeeded but whose cursor could not be saved."""
SKIPS = f"{PREFIX}.skips"
"""Counter: declined ticks by ``reason``; emitted where the decision is made."""

_FUNCTION = ("dag_id", "task_id")
METRICS = {
    FIRES: Metric(FIRES, "counter", ("outcome", *_FUNCTION)),
    FIRE_DURATION: Metric(FIRE_DURATION, "timer", ("outcome", *_FUNCTION)),
    SECONDS_SINCE_LAST_SUCCESS: Metric(SECONDS_SINCE_LAST_SUCCESS, "gauge", _FUNCTION),
    CURSOR_WRITE_FAILURES: Metric(CURSOR_WRITE_FAILURES, "counter", _FUNCTION),
    SKIPS: Metric(SKIPS, "counter", ("reason", *_FUNCTION)),
}


def _emit(
    where: Where, name: str, dag_id: str, task_id: str, value: float | datetime.timedelta = 1, **extra: str
) -> None:
    emit(METRICS[name], {"dag_id": dag_id, "task_id": task_id, **extra}, value, where=where)


def fire_finished(
    dag_id: str,
    task_id: str,
    *,
    outcome: str,
    duration: datetime.timedelta,
    since_success: float | None,
) -> None:
    """A fire ended (task code: the Task SDK's Stats)."""
    _emit("task", FIRES, dag_id, task_id, outcome=outcome)
    _emit("task", FIRE_DURATION, dag_id, task_id, duration, outcome=outcome)
    if since_success is not None:
        _emit("task", SECONDS_SINCE_LAST_SUCCESS, dag_id, task_id, since_success)


def cursor_write_failed(dag_id: str, task_id: str) -> None:
    """The function succeeded but its cursor was not saved (task code)."""
    _emit("task", CURSOR_WRITE_FAILURES, dag_id, task_id)


def tick_skipped(dag_id: str, task_id: str, reason: str, *, in_task: bool, count: int = 1) -> None:
    """``count`` ticks were declined, by the worker (``in_task``) or by the scheduler-side admission."""
    _emit("task" if in_task else "core", SKIPS, dag_id, task_id, count, reason=reason)


def clean_success_stored(dag_id: str, task_id: str) -> None:
    """A clean fire's success was stored: the gauge is 0 (task code, after the state is reported)."""
    _emit("task", SECONDS_SINCE_LAST_SUCCESS, dag_id, task_id, 0.0)


def since_last_success(dag_id: str, task_id: str, seconds: float) -> None:
    """The scheduler's periodic health gauge (core processes' Stats)."""
    _emit("core", SECONDS_SINCE_LAST_SUCCESS, dag_id, task_id, seconds)
