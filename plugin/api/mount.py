"""What the AirflowPlugin registers for the API server: the ``/tessera`` app and the Schedules page view.

Every Airflow process imports the plugin (scheduler, dag-processor, each task), but
only the API server serves this app, and importing FastAPI and Airflow's API security
costs seconds. So the plugin registers a small ASGI callable that imports and builds
the real app (:func:`tessera.plugin.api.app.create_app`) on its first request.
"""

from __future__ import annotations

from typing import Any

from . import URL_PREFIX

PAGE_ROUTE = "tessera-schedules"


class LazyTesseraApp:
    """An ASGI app that builds the tessera FastAPI app on first use."""

    def __init__(self) -> None:
        self._app: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self._app is None:
            from .app import create_app

            self._app = create_app()
        await self._app(scope, receive, send)


FASTAPI_APP = {"app": LazyTesseraApp(), "url_prefix": URL_PREFIX, "name": "tessera"}

SCHEDULES_VIEW = {
    "name": "Schedules",
    "href": f"{URL_PREFIX}/ui/",
    "url_route": PAGE_ROUTE,
    "destination": "nav",
    "icon": f"{URL_PREFIX}/ui/icon.svg",
}
"""A top-level entry of the UI's navigation; the page opens inside Airflow at /plugin/tessera-schedules."""
