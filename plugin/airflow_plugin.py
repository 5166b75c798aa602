"""The AirflowPlugin (entry point ``airflow.plugins``).

It registers every tessera timetable, the template macros, the scheduler-side
listener (one module for every hook: cursor-function admission, AFTER fan-in and
parent freshness, waves), the REST API and the Schedules page.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from tessera.plugin import listener, macros
from tessera.plugin.api.mount import ACTION_LOG_MIDDLEWARE, FASTAPI_APP, SCHEDULES_VIEW, WARM_MIDDLEWARE
from tessera.timetables import Calendar, Cron, Every, Union


class TesseraPlugin(AirflowPlugin):
    name = "tessera"
    timetables = [Every, Calendar, Cron, Union]
    macros = [macros.run_schedule, macros.phase_ms, macros.interval_ms]
    listeners = [listener]
    fastapi_apps = [FASTAPI_APP]
    # Warms the Schedules page when an API server worker starts; Airflow's action log written off its event loop.
    fastapi_root_middlewares = [WARM_MIDDLEWARE, ACTION_LOG_MIDDLEWARE]
    external_views = [SCHEDULES_VIEW]
