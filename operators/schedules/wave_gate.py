"""The wave gate: the first task of each pipeline of a wave-gated schedule, deferred until its wave opens.

See :mod:`~tessera.operators.schedules.waves` for how waves are planned and opened
(in the scheduler). The gate only reads the plan: a run of wave 0 passes at once;
a later wave defers to :class:`WaveGateTrigger` in the triggerer, holding no
worker slot, and its pipeline's real tasks start once the gate succeeds. When an
earlier wave failed and cancelled this one (fail-fast), the gate fails without a
retry, so the pipeline's tasks end ``upstream_failed`` and never start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.sdk import BaseOperator
from airflow.triggers.base import BaseTrigger, TriggerEvent

from tessera.timetables.support import SCHEDULE_STATE, require

from .._airflow import AirflowFailException, asset_state_accessor
from .identity import asset_uri, schedule_asset
from .state import schedule_state
from .waves import GATE_TASK_ID, WAVES_KEY, cancel_reason, gate_state


class WaveGateTrigger(BaseTrigger):
    """Fire once run ``member`` (``"<dag_id>/<run_id>"``) may pass the wave plan of ``schedule``, or is cancelled."""

    def __init__(self, schedule: str, member: str, poll_interval: float = 5.0) -> None:
        super().__init__()
        self.schedule, self.member, self.poll_interval = schedule, member, poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{type(self).__module__}.{type(self).__qualname__}", {
            "schedule": self.schedule,
            "member": self.member,
            "poll_interval": self.poll_interval,
        }

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            plan = await schedule_state(self.schedule, WAVES_KEY)
            state = gate_state(plan, self.member)
            if state != "wait":
                cancelled = cancel_reason(plan, self.member)
                yield TriggerEvent({"member": self.member, "open": (plan or {}).get("open"), "cancelled": cancelled})
                return
            await asyncio.sleep(self.poll_interval)


class WaveGate(BaseOperator):
    """Hold a pipeline run until its wave of the schedule's fire is open (deferred, no worker slot).

    :param schedule: the name of the wave-gated schedule the DAG is a pipeline of.
    :param poll_interval: seconds between the trigger's checks of the wave plan.
    """

    ui_color = "#e8eef7"

    def __init__(self, *, schedule: str, poll_interval: float = 5.0, **kwargs: Any) -> None:
        require(SCHEDULE_STATE, "waves", schedule)
        kwargs.setdefault("task_id", GATE_TASK_ID)
        # Waiting for earlier waves is not the pipeline's work: the schedule's per-attempt
        # timeout and retries must not cut it short or repeat it.
        kwargs.setdefault("execution_timeout", None)
        kwargs.setdefault("retries", 0)
        kwargs["inlets"] = [*kwargs.get("inlets", ()), schedule_asset(schedule)]
        super().__init__(**kwargs)
        self.schedule, self.poll_interval = schedule, poll_interval

    def execute(self, context: Any) -> None:
        member = f"{self.dag_id}/{context['run_id']}"
        plan = asset_state_accessor(asset_uri(self.schedule)).get(WAVES_KEY, default=None)
        state = gate_state(plan, member)
        if state == "cancelled":
            raise AirflowFailException(cancel_reason(plan, member))
        if state == "open":
            return
        self.log.info("Run %s waits for wave %s of schedule %s", member, plan["members"][member], self.schedule)
        self.defer(trigger=WaveGateTrigger(self.schedule, member, self.poll_interval), method_name="execute_complete")

    def execute_complete(self, context: Any, event: dict[str, Any]) -> None:
        if event.get("cancelled"):
            raise AirflowFailException(event["cancelled"])
        self.log.info("Wave open for %s (open wave %s)", event["member"], event["open"])


def add_wave_gate(dag: Any, schedule: str) -> WaveGate:
    """Put a :class:`WaveGate` in front of every first task of ``dag`` (once)."""
    if GATE_TASK_ID in dag.task_dict:
        return dag.task_dict[GATE_TASK_ID]
    roots = list(dag.roots)
    gate = WaveGate(schedule=schedule, dag=dag)
    for root in roots:
        gate >> root
    return gate
