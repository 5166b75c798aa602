"""``AfterSensor``: inside a run of a DAG with its own schedule, wait for the parents' next completed fires.

For a DAG that keeps its clock but must not proceed until each parent schedule
has completed a fire it has not reacted to yet. Completed means every run of
that fire finished, failed or not, as for an AFTER schedule. The task defers to
:class:`~tessera.operators.fan_in.trigger.AfterTrigger`, so the wait holds no
worker slot; what it has reacted to is remembered per task in each parent
schedule's asset state store, so the next run waits for newer fires.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator

from tessera.operators.schedules.checks import name as check_name
from tessera.operators.schedules.identity import asset_uri, schedule_asset
from tessera.timetables.rules import excerpt, parse_duration
from tessera.timetables.support import SCHEDULE_STATE, require

from .._airflow import asset_state_accessor
from .trigger import FIRES_KEY, AfterTrigger, fire_count, released

MAX_POLL_SECONDS = 3600
"""An hour: a slower poll would release a waiting run long after its parents completed."""
MAX_WAIT = datetime.timedelta(days=366)


class AfterSensor(BaseOperator):
    """Wait, deferred, until every parent schedule completed a fire this task has not reacted to.

    The first run of the task waits for each parent's next fire. The XCom it returns maps
    each parent to the completed fire that released it (``count``, ``last_fire``,
    ``completed_at``, ``runs``).

    :param parents: the parent schedules' names (a list or tuple; one name may be given as a string).
    :param poll_interval: seconds between the trigger's checks, 1 to 3600 (or a duration: ``"30s"``,
        a ``timedelta``).
    :param wait_timeout: give up (the task fails) after this long (``"6h"``, a ``timedelta``), at most
        366 days; ``None`` waits indefinitely.
    """

    def __init__(
        self,
        *,
        parents: Sequence[str],
        poll_interval: float | str | datetime.timedelta = 10.0,
        wait_timeout: str | datetime.timedelta | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(parents, str | list | tuple):
            raise TypeError(
                f"parents: {excerpt(parents)}; give the parent schedules' names as a list, e.g. parents=['apc_daily']"
            )
        require(SCHEDULE_STATE, "parents", parents)
        names = [parents] if isinstance(parents, str) else list(parents)
        if not names:
            raise ValueError("parents: []; name at least one parent schedule, e.g. parents=['apc_daily']")
        self.parents = [check_name("parents", name) for name in names]
        interval = check_poll_interval(poll_interval)
        timeout = check_wait_timeout(wait_timeout)
        # The parents' assets as inlets: Airflow registers them, which is what lets this task
        # (and its trigger) read their state stores.
        kwargs["inlets"] = [*kwargs.get("inlets", ()), *(schedule_asset(p) for p in self.parents)]
        super().__init__(**kwargs)
        self.poll_interval = interval
        self.wait_timeout = timeout

    def _seen_key(self) -> str:
        return f"seen:{self.dag_id}.{self.task_id}"

    def execute(self, context: Any) -> dict[str, Any] | None:
        states, seen = {}, {}
        for parent in self.parents:
            store = asset_state_accessor(asset_uri(parent))
            states[parent] = store.get(FIRES_KEY, default=None)
            stored_seen = store.get(self._seen_key(), default=None)
            # Never seen: react to the parent's NEXT fire, not to its whole history.
            seen[parent] = fire_count(states[parent]) if stored_seen is None else int(stored_seen)
        if released(seen, states):
            return self._release(states)
        self.log.info("Waiting for parent fires beyond %s", seen)
        self.defer(
            trigger=AfterTrigger(seen=seen, poll_interval=self.poll_interval),
            method_name="execute_complete",
            timeout=self.wait_timeout,
        )

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        return self._release(event["fires"])

    def _release(self, states: dict[str, Any]) -> dict[str, Any]:
        for parent in self.parents:
            asset_state_accessor(asset_uri(parent)).set(self._seen_key(), fire_count(states[parent]))
        self.log.info("Released by parent fires: %s", states)
        return states


def check_poll_interval(value: object) -> float:
    """Seconds between polls, 1 to 3600 (each poll is a request per parent): a number or a duration."""
    seconds = _seconds("poll_interval", value)
    if seconds is None or not 1 <= seconds <= MAX_POLL_SECONDS:
        raise ValueError(
            f"poll_interval: {excerpt(value)}; give a number of seconds from 1 to {MAX_POLL_SECONDS}, e.g. 10 "
            "(or a duration such as '30s' or a timedelta)"
        )
    return seconds


def check_wait_timeout(value: object) -> datetime.timedelta | None:
    """``None``, or a duration (``"6h"``, a ``timedelta``) of more than zero and at most 366 days."""
    if value is None:
        return None
    seconds = _seconds("wait_timeout", value) if isinstance(value, str | datetime.timedelta) else None
    if seconds is None or not 0 < seconds <= MAX_WAIT.total_seconds():
        raise ValueError(
            f"wait_timeout: {excerpt(value)}; give a duration of more than zero and at most 366 days, e.g. '6h' "
            f"or timedelta(hours=6), or None to wait indefinitely"
        )
    return datetime.timedelta(seconds=seconds)


def _seconds(field: str, value: object) -> float | None:
    """``value`` in seconds (a number, a duration string, a timedelta), or None for anything else."""
    if isinstance(value, str | datetime.timedelta):
        # The one duration rule: its refusal names the field, and it refuses a pendulum Duration
        # with months or years (a month is not a fixed number of seconds) as every other duration does.
        return parse_duration(field, value) / 1_000_000
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        return None
    if isinstance(value, int) and value.bit_length() > 64:  # float() of it would overflow; far out of range
        return None
    return float(value)
