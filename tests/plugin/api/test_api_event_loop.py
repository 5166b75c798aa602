"""No tessera route waits for SQLite's write lock on the API server's event loop.

An ``async`` dependency that writes (Airflow's ``action_logging`` commits synchronously) holds the
loop while SQLite makes it wait; a request holding the lock cannot close its session meanwhile, so
both wait out the busy timeout and fail (see :mod:`tessera.plugin.api.routes.audit`). Only
dependencies that never write may be ``async``; this lists every one the routes use.
"""

from __future__ import annotations

import inspect
from typing import Any

READ_ONLY_ASYNC = {
    "airflow.api_fastapi.core_api.security.get_user",  # decodes the token (one read: is it revoked?)
    "fastapi.security.http.HTTPBearer",
    "fastapi.security.oauth2.OAuth2PasswordBearer",
    "tessera.plugin.api.inputs.json_object_body.<locals>.read",  # reads the request body
}


def _name(call: Any) -> str:
    if inspect.isfunction(call):
        return f"{call.__module__}.{call.__qualname__}"
    return f"{type(call).__module__}.{type(call).__qualname__}"


def test_every_async_dependency_of_every_route_is_one_that_never_writes():
    from tessera.plugin.api.app import create_app

    found: dict[str, set[str]] = {}

    def walk(route: str, dependant: Any) -> None:
        for dependency in dependant.dependencies:
            call = dependency.call
            method = type(call).__call__ if call is not None and not inspect.isfunction(call) else None
            if inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(method):
                found.setdefault(_name(call), set()).add(route)
            walk(route, dependency)

    for route in create_app().routes:
        if hasattr(route, "dependant"):
            walk(f"{sorted(route.methods)} {route.path}", route.dependant)
    assert "tessera.plugin.api.inputs.json_object_body.<locals>.read" in found  # the walk sees async ones
    assert set(found) <= READ_ONLY_ASYNC, {
        name: routes for name, routes in found.items() if name not in READ_ONLY_ASYNC
    }
