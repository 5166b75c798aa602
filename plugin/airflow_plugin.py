"""The AirflowPlugin (entry point ``airflow.plugins``): registers every tessera timetable and macro."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from tessera.plugin import macros
from tessera.timetables import Calendar, Cron, Every


class TesseraPlugin(AirflowPlugin):
    name = "tessera"
    timetables = [Every, Calendar, Cron]
    macros = [macros.run_schedule, macros.phase_ms, macros.interval_ms]
