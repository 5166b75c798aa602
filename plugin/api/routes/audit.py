"""The audit-log entry of an API action (Browse > Audit Log), written off the event loop.

Airflow's ``action_logging`` dependency is ``async`` and commits with a blocking session: on
SQLite it waits for the write lock on the API server's event loop. A request that holds the lock
and closes its session through that loop (every sync route does) can then never finish: both
waited out the busy timeout (60 s) and failed, the action with a 500 (the shipped tier's POST
``/pause`` met a worker's task-state update so). A plain ``def`` dependency runs in FastAPI's
thread pool, where waiting for the lock blocks no one else.
"""

from __future__ import annotations

import json
from typing import Any

from airflow.api_fastapi.core_api.security import GetUserDep
from airflow.models.log import Log
from airflow.utils.session import create_session
from fastapi import Depends, Request


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
