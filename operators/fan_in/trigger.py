"""The triggerer side of waiting for parent schedules: poll their completed-fire counts, no worker held.

A trigger runs in the triggerer process, which has no metadata database access in
Airflow 3; it reads what the scheduler-side listener recorded in each schedule
asset's state store (``fires``: ``{"count", "last_fire", "completed_at", "runs"}``)
through the supervisor, one small request per parent per poll.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from tessera.operators.schedules.state import schedule_state

FIRES_KEY = "fires"


def fire_count(state: Any) -> int:
    """How many fires a schedule has completed, from its ``fires`` state (0 before the first)."""
    return int(state.get("count", 0)) if isinstance(state, dict) else 0


def released(seen: dict[str, int], states: dict[str, Any]) -> bool:
    """Whether every parent completed a fire beyond the count ``seen`` of it."""
    return all(fire_count(states.get(name)) > count for name, count in seen.items())


class AfterTrigger(BaseTrigger):
    """Fire once every parent schedule has completed more fires than ``seen`` records.

    :param seen: parent schedule name -> the number of its fires already reacted to.
    :param poll_interval: seconds between polls.
    """

    def __init__(self, seen: dict[str, int], poll_interval: float = 10.0) -> None:
        super().__init__()
        self.seen = dict(seen)
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{type(self).__module__}.{type(self).__qualname__}", {
            "seen": self.seen,
            "poll_interval": self.poll_interval,
        }

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            states = {name: await schedule_state(name, FIRES_KEY) for name in self.seen}
            if released(self.seen, states):
                yield TriggerEvent({"status": "released", "fires": states})
                return
            self.log.debug("Waiting for parent fires beyond %s", self.seen)
            await asyncio.sleep(self.poll_interval)
