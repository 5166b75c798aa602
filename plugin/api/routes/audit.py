"""The audit-log entry of an API action (Browse > Audit Log), written off the event loop.

Airflow's ``action_logging`` dependency is ``async`` and commits with a blocking session: on
SQLite it waits for the write lock on the API server's event loop. A request that holds the lock
and closes its session through that loop (every sync route does: a task's heartbeat, its rendered
fields, its state) can then never finish: both waited out the busy timeout (60 s) and failed, the
action with a 500 (the shipped tier's POST ``/pause`` met a worker's task-state update so, and an
unpause in Airflow's UI a task's rendered-fields write). Waiting in FastAPI's thread pool blocks
no one else, so:

- tessera's routes record their entry with :func:`audited`, a plain ``def`` dependency;
- Airflow's own routes keep their ``action_logging``, run to its end in the thread pool: the API
  server's app is rewired once, when it starts (:class:`ActionLogOffTheLoop`, a root middleware
  the plugin registers, :mod:`tessera.plugin.api.mount`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from airflow.api_fastapi.core_api.security import GetUserDep
from airflow.models.log import Log
from airflow.utils.session import create_session
from fastapi import Depends, Request

log = logging.getLogger(__name__)


def audited(event: str) -> Any:
    """A dependency that records ``event`` for the route's DAG, by its caller, before the route runs."""

    def log_action(dag_id: str, request: Request, user: GetUserDep) -> None:
        name = user.get_name()
        with create_session() as session:  # committed on its own, whatever the route then does
            session.add(
                Log(
                    event=event,
                    owner=name,
                    owner_display_name=name,
                    dag_id=dag_id,
                    extra=json.dumps({"method": request.method}),
                )  # fmt: skip
            )

    return Depends(log_action)


AIRFLOW_ACTION_LOG = ("airflow.api_fastapi.logging.decorators", "action_logging.<locals>.log_action")
"""Airflow's ``action_logging`` dependency: its module and the qualified name of the coroutine function it returns."""


LogAction = Callable[..., Coroutine[Any, Any, None]]
"""An ``async`` dependency that records an action."""


def is_airflows_action_log(call: Any) -> bool:
    return (getattr(call, "__module__", None), getattr(call, "__qualname__", None)) == AIRFLOW_ACTION_LOG


def in_the_thread_pool(log_action: LogAction) -> LogAction:
    """Airflow's ``log_action``, run to its end on an event loop of its own in FastAPI's thread pool.

    Its only awaits read a JSON request's body. That body is read here first, on the server's loop
    where the request's channel is; Airflow's coroutine then reads the copy Starlette keeps.
    """

    async def log_action_in_the_thread_pool(**values: Any) -> None:
        # Given by name, as FastAPI read them from Airflow's signature: the request is found by its type.
        for request in (value for value in values.values() if isinstance(value, Request)):
            if "application/json" in request.headers.get("content-type", ""):  # when Airflow's reads it
                await request.body()
        await anyio.to_thread.run_sync(asyncio.run, log_action(**values))

    return log_action_in_the_thread_pool


def move_airflows_action_log_off_the_loop(app: Any) -> int:
    """Make every route of ``app`` (and of the apps it mounts) run Airflow's ``action_logging`` in the thread pool.

    Returns how many routes were changed; a route already changed is left as it is.
    """
    moved = 0

    def walk(dependant: Any) -> None:
        nonlocal moved
        for dependency in dependant.dependencies:
            if is_airflows_action_log(dependency.call):
                dependency.call = in_the_thread_pool(dependency.call)
                moved += 1
            walk(dependency)

    for route in app.routes:
        if hasattr(route, "dependant"):
            walk(route.dependant)
        elif hasattr(getattr(route, "app", None), "routes"):  # a mounted app (the Execution API, a plugin's)
            moved += move_airflows_action_log_off_the_loop(route.app)
    return moved


class ActionLogOffTheLoop:
    """A root middleware of the API server: when a worker starts, Airflow's routes log actions off the event loop.

    The lifespan's scope carries the app being started, with every route it will serve.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            moved = move_airflows_action_log_off_the_loop(scope["app"])
            log.info("tessera: %d routes of Airflow's API write their audit-log entry off the event loop", moved)
        await self.app(scope, receive, send)
