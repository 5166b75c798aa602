"""The AirflowPlugin (entry point ``airflow.plugins``).

It registers every tessera timetable, the template macros, the scheduler-side
listeners (AFTER fan-in and parent freshness; cursor-function admission), the
REST API and the Schedules page.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from tessera.operators.functions.admission import admission_listener
from tessera.plugin import listeners as tessera_listeners
from tessera.plugin import macros
from tessera.plugin.api.mount import FASTAPI_APP, SCHEDULES_VIEW
from tessera.timetables import Calendar, Cron, Every


class TesseraPlugin(AirflowPlugin):
    name = "tessera"
    timetables = [Every, Calendar, Cron]
    macros = [macros.run_schedule, macros.phase_ms, macros.interval_ms]
    listeners = [tessera_listeners, admission_listener]
    fastapi_apps = [FASTAPI_APP]
    external_views = [SCHEDULES_VIEW]
