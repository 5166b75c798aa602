"""Cron with Kubernetes CronJob semantics. Being built: issue 7."""

from __future__ import annotations

from .base import TesseraTimetable


class Cron(TesseraTimetable):
    """Placeholder until issue 7 lands; constructing it is refused."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError("Cron is not built yet")
