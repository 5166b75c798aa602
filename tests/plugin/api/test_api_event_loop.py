"""No route of the API server waits for SQLite's write lock on its event loop: tessera's, nor Airflow's.

An ``async`` dependency that writes (Airflow's ``action_logging`` commits synchronously) holds the
loop while SQLite makes it wait; a request holding the lock cannot close its session meanwhile, so
both wait out the busy timeout and fail (see :mod:`tessera.plugin.api.routes.audit`). Only
dependencies that never write may be ``async``; this lists every one the routes use, in tessera's
app and in the app an Airflow API server serves once a worker has started (Airflow's API, its
login). The Execution API keeps its routes in Cadwyn's versioned routers, out of this walk's
reach; it has no ``action_logging``.
"""

from __future__ import annotations

import inspect
import threading
import time
from pathlib import Path
from typing import Any

from .test_api_app import DAG_FILE, airflow_api, forget_dags, store_dags

UNPAUSED = "event_loop_unpaused"
LINGER_SECONDS = 1.0
"""How long the route below keeps the write lock after its write: the unpause's audit-log entry meets it."""

READ_ONLY_ASYNC = {
    "airflow.api_fastapi.core_api.security.get_user",  # decodes the token (one read: is it revoked?)
    "fastapi.security.http.HTTPBearer",
    "fastapi.security.oauth2.OAuth2PasswordBearer",
    "tessera.plugin.api.inputs.json_object_body.<locals>.read",  # reads the request body
}


AIRFLOW_READ_ONLY_ASYNC = {
    # Authorization that reads the row the path names (a backfill's DAG, a log entry's DAG) or the body.
    *(
        f"airflow.api_fastapi.core_api.security.requires_access_{what}.<locals>.inner"
        for what in ("backfill", "connection", "event_log", "pool", "variable")
    ),
    "airflow.api_fastapi.auth.managers.simple.utils.parse_login_body",  # reads POST /auth/token's body
}
OFF_THE_LOOP = "tessera.plugin.api.routes.audit.in_the_thread_pool.<locals>.log_action_in_the_thread_pool"
"""Airflow's ``action_logging``, as the API server runs it once tessera's root middleware has started."""


def _name(call: Any) -> str:
    if inspect.isfunction(call):
        return f"{call.__module__}.{call.__qualname__}"
    return f"{type(call).__module__}.{type(call).__qualname__}"


def _async_dependencies(routes: list[Any], prefix: str = "") -> dict[str, set[str]]:
    """Every ``async`` dependency of ``routes`` (and of the apps they mount): its name and the routes using it."""
    found: dict[str, set[str]] = {}

    def walk(route: str, dependant: Any) -> None:
        for dependency in dependant.dependencies:
            call = dependency.call
            method = type(call).__call__ if call is not None and not inspect.isfunction(call) else None
            if inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(method):
                found.setdefault(_name(call), set()).add(route)
            walk(route, dependency)

    for route in routes:
        if hasattr(route, "dependant"):
            walk(f"{sorted(route.methods)} {prefix}{route.path}", route.dependant)
        elif hasattr(getattr(route, "app", None), "routes"):
            for name, users in _async_dependencies(route.app.routes, prefix + route.path).items():
                found.setdefault(name, set()).update(users)
    return found


def test_every_async_dependency_of_every_route_is_one_that_never_writes():
    from tessera.plugin.api.app import create_app

    found = _async_dependencies(create_app().routes)
    assert "tessera.plugin.api.inputs.json_object_body.<locals>.read" in found  # the walk sees async ones
    assert set(found) <= READ_ONLY_ASYNC, {
        name: routes for name, routes in found.items() if name not in READ_ONLY_ASYNC
    }


def test_airflows_own_routes_write_their_audit_log_entry_off_the_event_loop(airflow_db):
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from fastapi.testclient import TestClient

    purge_cached_app()
    try:
        app = create_app()  # as the API server builds it: the core API, the Execution API, the plugins'
        with TestClient(app):  # the lifespan's startup, as a worker's
            found = _async_dependencies(app.routes)
    finally:
        purge_cached_app()
    allowed = READ_ONLY_ASYNC | AIRFLOW_READ_ONLY_ASYNC | {OFF_THE_LOOP}
    assert set(found) <= allowed, {name: sorted(routes)[:3] for name, routes in found.items() if name not in allowed}
    assert len(found[OFF_THE_LOOP]) >= 40  # every mutating route of Airflow's API (46 in 3.3)


def _write_and_linger(wrote: threading.Event) -> Any:
    """A sync route that writes in its body, as the Execution API's heartbeat does: its session keeps
    SQLite's write lock until FastAPI closes it, a step FastAPI schedules through the event loop."""
    from airflow.api_fastapi.common.db.common import SessionDep
    from airflow.models.dag import DagModel
    from sqlalchemy import update

    def write_and_linger(session: Any) -> None:
        session.execute(update(DagModel).where(DagModel.dag_id == UNPAUSED).values(description="lingering"))
        wrote.set()
        time.sleep(LINGER_SECONDS)

    # Airflow's request session; given as an object, as this module's annotations are strings.
    write_and_linger.__annotations__["session"] = SessionDep
    return write_and_linger


def test_an_unpause_meeting_a_held_write_lock_waits_for_it_instead_of_the_busy_timeout(airflow_db, tmp_path: Path):
    """Airflow's PATCH /api/v2/dags answered 500 after the whole busy timeout when a task's write held the lock."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from fastapi.routing import APIRoute
    from sqlalchemy import select

    store_dags(tmp_path, DAG_FILE, (UNPAUSED,))
    wrote = threading.Event()
    try:
        with airflow_api(tmp_path) as api:
            # First: Airflow's UI answers every path its routes do not.
            api.client.app.router.routes.insert(0, APIRoute("/linger", _write_and_linger(wrote), methods=["POST"]))
            lingering = threading.Thread(target=api.call, args=("POST", "/linger"))
            lingering.start()
            try:
                assert wrote.wait(30), "the lingering write did not run"
                start = time.monotonic()
                answer = api.call("PATCH", f"/api/v2/dags/{UNPAUSED}", json_body={"is_paused": True})
                took = time.monotonic() - start
            finally:
                lingering.join()
        with create_session() as session:
            logged = session.scalars(select(Log.extra).where(Log.dag_id == UNPAUSED, Log.event == "patch_dag")).all()
    finally:
        forget_dags(UNPAUSED)  # the tests after this one on the worker read every stored DAG
    assert answer.status_code == 200, answer.text
    assert took < LINGER_SECONDS + 3, f"the unpause took {took:.1f} s: it waited out the busy timeout"
    assert logged and '"is_paused": true' in logged[-1]  # Airflow's own entry, written by Airflow's code
