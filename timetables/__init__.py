"""Tessera timetables: exact, stable, tiling schedules for Airflow 3.3.

The names below are loaded on first use (PEP 562), so importing the pure core
(``tessera.timetables._time``) never imports Airflow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "TesseraTimetable": ".base",
    "Calendar": ".calendar",
    "Cron": ".cron",
    "Every": ".every",
    "Backfill": ".policies",
    "Fixed": ".policies",
    "Latest": ".policies",
    "Spread": ".policies",
    "anti_herd": ".policies",
    "RunSchedule": ".public_plan",
    "run_schedule": ".run_facts.of_task",
    "Union": ".union",
    "between": ".exclusions",
    "holidays_of": ".holiday_calendars",
}
__all__ = [
    "Backfill",
    "Calendar",
    "Cron",
    "Every",
    "Fixed",
    "Latest",
    "RunSchedule",
    "Spread",
    "TesseraTimetable",
    "Union",
    "anti_herd",
    "between",
    "holidays_of",
    "run_schedule",
]

if TYPE_CHECKING:
    from .base import TesseraTimetable
    from .calendar import Calendar
    from .cron import Cron
    from .every import Every
    from .exclusions import between
    from .holiday_calendars import holidays_of
    from .policies import Backfill, Fixed, Latest, Spread, anti_herd
    from .public_plan import RunSchedule
    from .run_facts.of_task import run_schedule
    from .union import Union


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
