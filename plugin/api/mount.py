"""What the AirflowPlugin registers for the API server: the ``/tessera`` app and the Schedules page view.

Every Airflow process imports the plugin (scheduler, dag-processor, each task), but
only the API server serves this app, and importing FastAPI and Airflow's API security
costs seconds. So the plugin registers a small ASGI callable that imports and builds
the real app (:func:`tessera.plugin.api.app.create_app`) on its first request, or when the API server's
worker starts and warms the Schedules page (:class:`WarmAtStart`). A second root middleware moves
Airflow's own audit-log writes off the event loop when a worker starts (:mod:`.routes.audit`).
"""

from __future__ import annotations

import threading
from typing import Any

from . import URL_PREFIX

PAGE_ROUTE = "tessera-schedules"


class LazyTesseraApp:
    """An ASGI app that builds the tessera FastAPI app on first use (or when the worker warms up)."""

    def __init__(self) -> None:
        self._app: Any = None
        self._lock = threading.Lock()

    def built(self) -> Any:
        """The tessera app, built once whichever thread asks first (a request, or the warm-up)."""
        if self._app is None:
            with self._lock:
                if self._app is None:
                    from .app import create_app

                    self._app = create_app()
        return self._app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.built()(scope, receive, send)


LAZY_APP = LazyTesseraApp()
FASTAPI_APP = {"app": LAZY_APP, "url_prefix": URL_PREFIX, "name": "tessera"}


class WarmAtStart:
    """A root middleware of the API server that warms the Schedules page when a worker starts.

    Airflow adds a plugin's root middlewares to the API server's app only (no other process builds it),
    and the app's lifespan starts when a worker does: on its ``startup`` the page's caches are filled
    in the background (:mod:`tessera.plugin.fleet.warm`), so the first visitor after a restart does
    not pay for them. Every other message passes through untouched.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def watch_start() -> Any:
            message = await receive()
            if message.get("type") == "lifespan.startup":
                from ..fleet.warm import start_warming

                start_warming(LAZY_APP.built)
            return message

        await self.app(scope, watch_start, send)


WARM_MIDDLEWARE = {"middleware": WarmAtStart, "args": [], "kwargs": {}, "name": "tessera-warm-page"}


def _action_log_off_the_loop(app: Any) -> Any:
    # Imported when the API server builds its middlewares, not by every process that loads the plugin.
    from .routes.audit import ActionLogOffTheLoop

    return ActionLogOffTheLoop(app)


ACTION_LOG_MIDDLEWARE = {
    "middleware": _action_log_off_the_loop,
    "args": [],
    "kwargs": {},
    "name": "tessera-action-log-off-the-loop",
}

SCHEDULES_VIEW = {
    "name": "Schedules",
    "href": f"{URL_PREFIX}/ui/",
    "url_route": PAGE_ROUTE,
    "destination": "nav",
    "icon": f"{URL_PREFIX}/ui/icon.svg",
}
"""A top-level entry of the UI's navigation; the page opens inside Airflow at /plugin/tessera-schedules."""
