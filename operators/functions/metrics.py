"""Metrics of cursor-carrying functions, through Airflow's Stats (StatsD / OpenTelemetry as configured).

Every metric is tagged ``dag_id`` and ``task_id`` (plus ``outcome`` or ``reason``);
with a plain StatsD backend, enable tagging to split them by function. Emitting a
metric never changes a fire's result: a broken metrics backend is logged and
ignored.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

PREFIX = "tessera.cursor_function"
FIRES = f"{PREFIX}.fires"
"""Counter: fires by ``outcome`` (Succeeded, Failed)."""
FIRE_DURATION = f"{PREFIX}.fire_duration"
"""Timer: wall time of a fire, bookkeeping included, whatever its outcome."""
SECONDS_SINCE_LAST_SUCCESS = f"{PREFIX}.seconds_since_last_success"
"""Gauge, set at the end of every fire: 0 after a clean one."""
CURSOR_WRITE_FAILURES = f"{PREFIX}.cursor_write_failures"
"""Counter: fires whose function succeeded but whose cursor could not be saved."""
SKIPS = f"{PREFIX}.skips"
"""Counter: declined ticks by ``reason``; emitted where the decision is made."""


def _emit(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:
        log.warning("could not emit a tessera metric", exc_info=True)


def _tags(dag_id: str, task_id: str, **extra: str) -> dict[str, str]:
    return {"dag_id": dag_id, "task_id": task_id, **extra}


def fire_finished(
    dag_id: str,
    task_id: str,
    *,
    outcome: str,
    duration: datetime.timedelta,
    since_success: float | None,
) -> None:
    """A fire ended (task code: the Task SDK's Stats)."""
    from airflow.sdk.observability.stats import Stats

    tags = _tags(dag_id, task_id)
    _emit(lambda: Stats.incr(FIRES, tags={**tags, "outcome": outcome}))
    _emit(lambda: Stats.timing(FIRE_DURATION, duration, tags=tags))
    if since_success is not None:
        _emit(lambda: Stats.gauge(SECONDS_SINCE_LAST_SUCCESS, since_success, tags=tags))


def cursor_write_failed(dag_id: str, task_id: str) -> None:
    """The function succeeded but its cursor was not saved (task code)."""
    from airflow.sdk.observability.stats import Stats

    _emit(lambda: Stats.incr(CURSOR_WRITE_FAILURES, tags=_tags(dag_id, task_id)))


def tick_skipped(dag_id: str, task_id: str, reason: str, *, in_task: bool) -> None:
    """A tick was declined, by the worker (``in_task``) or by the scheduler-side admission."""
    if in_task:
        from airflow.sdk.observability.stats import Stats
    else:
        from airflow.observability.stats import Stats  # type: ignore[no-redef]

    _emit(lambda: Stats.incr(SKIPS, tags=_tags(dag_id, task_id, reason=reason)))
