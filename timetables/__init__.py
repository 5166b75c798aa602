"""Tessera timetables: exact, stable, tiling schedules for Airflow 3.3."""

from __future__ import annotations

from .base import TesseraTimetable
from .calendar import Calendar
from .cron import Cron
from .every import Every
from .policies import Backfill, Fixed, Latest, Spread, anti_herd
from .run_info import RunSchedule, run_schedule

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
    "anti_herd",
    "run_schedule",
]
