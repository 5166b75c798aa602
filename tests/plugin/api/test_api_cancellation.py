"""A real HTTP server and real clients that leave: the work stops, nothing is logged as an error.

Airflow's API app (the tessera app mounted in it, as ``test_api_app`` builds it) served by uvicorn on
127.0.0.1, on the real SQLite metadata DB, with a fleet of 1,000 paused ``Every("1m")`` DAGs (counted
from their lanes, cheaply), 5 paused and 30 active DAGs on Airflow's own cron ``* * * * *`` (each run a
question to the timetable, hundreds of times a lane's cost) and one active ``Every("1m")``. What is
measured is work done, not time: the DAGs the load stepped (a counter around ``load.dag_starts``), and
the log records of the app.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tessera.plugin.api import inputs
from tessera.plugin.fleet.load import starts as load

from .test_api_app import Api, airflow_api, forget_dags, store_dags
from .test_api_load import _delete_every_dag

PAUSED = tuple(f"cancel_paused_{n:04d}" for n in range(1000))
PAUSED_CRONS = tuple(f"cancel_paused_cron_{n}" for n in range(5))
ACTIVE = tuple(f"cancel_active_{n:02d}" for n in range(30))
"""30 Airflow crons of 1,440 runs a day: 43,200 questions to their timetables, within the load's 50,000, and
seconds of work; with the 5 paused ones, 50,400: over it."""
ACTIVE_TESSERA = "cancel_every_minute"
EVERY_MINUTE = """
from airflow.sdk import DAG
from tessera.timetables import Every

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("1m"), start_date=None):
        pass
"""
CRON_EVERY_MINUTE = """
import datetime
from airflow.sdk import DAG

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule="* * * * *", start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc),
             catchup=False):
        pass
"""
START_WITHIN_SECONDS = 60.0
STOPPED_WITHIN_SECONDS = 2.0


@dataclass
class Server:
    api: Api
    base: str
    stepped: list[str] = field(default_factory=list)
    """The DAGs the load stepped through (one entry per ``load.dag_starts`` call), in every request."""

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api.tokens[user]}"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _served(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on 127.0.0.1 in a thread (its lifespan already run by the test client)."""
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def server(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import update

    _delete_every_dag()  # the load counts every DAG of the database: only this module's fleet
    folder = tmp_path_factory.mktemp("tessera-cancellation")
    store_dags(folder, EVERY_MINUTE, (*PAUSED, ACTIVE_TESSERA))
    store_dags(folder, CRON_EVERY_MINUTE, (*PAUSED_CRONS, *ACTIVE))
    with create_session() as session:
        paused = (*PAUSED, *PAUSED_CRONS)
        session.execute(update(DagModel).where(DagModel.dag_id.in_(paused)).values(is_paused=True))
    try:
        with airflow_api(folder) as api, _served(api.client.app) as base:
            yield Server(api, base)
    finally:
        forget_dags("cancel_")


@pytest.fixture
def stepped(server: Server, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the DAGs the load steps through, in whichever request and thread."""
    real = load.dag_starts
    server.stepped.clear()

    def counted(dag: load.FleetDag, **kwargs: Any) -> load.DagStarts:
        server.stepped.append(dag.dag_id)
        return real(dag, **kwargs)

    monkeypatch.setattr(load, "dag_starts", counted)
    return server.stepped


def test_a_viewer_asking_a_load_over_its_budget_is_refused_before_any_dag_is_counted(server, stepped):
    answer = httpx.get(
        f"{server.base}/tessera/api/v1/load",
        params={"include_paused": "true"},
        headers=server.headers("viewer"),
        timeout=60,
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(
        "`minutes`: 1440 minutes of 1,036 DAGs hold about 50,400 run starts of other timetables (each asked for "
        "separately); one load counts at most 50,000: ask for minutes=1428 or fewer"
    ), detail
    assert detail.endswith("include_paused=false leaves the paused DAGs out"), detail
    assert stepped == [], "refused before a single DAG was stepped"


def test_the_1000_paused_every_minute_dags_are_counted_within_the_budget(server, stepped):
    """The outside test's fleet: 1,000 paused Every("1m") DAGs, counted from their lanes (an hour of it here)."""
    answer = httpx.get(
        f"{server.base}/tessera/api/v1/load",
        params={"include_paused": "true", "minutes": 60},
        headers=server.headers("viewer"),
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    assert len(stepped) == 1036
    runs = {dag["dag_id"]: dag["runs"] for dag in answer.json()["dags"]}
    assert {runs[dag_id] for dag_id in (*PAUSED, ACTIVE_TESSERA)} == {60}  # counted from their lanes, exactly
    # Airflow's own timetables read the clock as they skip ahead: one counted after the clock passed a
    # minute (a loaded machine) starts a minute later, so it has 59 runs in the hour.
    assert {runs[dag_id] for dag_id in (*PAUSED_CRONS, *ACTIVE)} <= {59, 60}


def callers_that_leave_once(
    base: str, path: str, headers: dict[str, str], started: Callable[[], bool], *, count: int = 3
) -> None:
    """``count`` callers ask ``path`` on connections of their own, and hang up once ``started()`` holds.

    Not after a fixed time: on a loaded machine the work may not have begun within it, and a caller
    that leaves first proves nothing. Bounded: the work must start within :data:`START_WITHIN_SECONDS`.
    """
    host, port = base.removeprefix("http://").split(":")
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Connection: close\r\n\r\n".encode()
    clients = [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]
    try:
        for client in clients:
            client.sendall(request)
        deadline = time.monotonic() + START_WITHIN_SECONDS
        while not started():
            assert time.monotonic() < deadline, f"the work of {path} did not start within {START_WITHIN_SECONDS} s"
            time.sleep(0.02)
    finally:
        for client in clients:
            client.close()


def test_three_callers_that_give_up_leave_the_server_idle(server, stepped):
    """Each asks the active fleet's load (seconds of work) and leaves once the work has begun."""
    callers = 3
    # Every caller's request has stepped its first DAG (or more): each left a load in progress.
    callers_that_leave_once(
        server.base, "/tessera/api/v1/load", server.headers("viewer"), lambda: len(stepped) >= callers, count=callers
    )
    left_at = len(stepped)
    assert left_at > 0, "the load had started when its callers left"

    # Stopped: no DAG is stepped for a whole second, within STOPPED_WITHIN_SECONDS of the callers leaving.
    deadline = time.monotonic() + STOPPED_WITHIN_SECONDS
    seen, still_since = len(stepped), time.monotonic()
    while time.monotonic() - still_since < 1.0:
        assert time.monotonic() < deadline + 1.0, f"still stepping: {len(stepped)} DAGs, {left_at} when callers left"
        time.sleep(0.05)
        if len(stepped) != seen:
            seen, still_since = len(stepped), time.monotonic()
    print(f"\nDAGs stepped: {left_at} when the callers left, {len(stepped)} in all (of {callers * len(ACTIVE)} asked)")
    assert len(stepped) <= left_at + callers, "each request stepped at most the DAG it was in when its caller left"
    assert len(stepped) < callers * len(ACTIVE), "the abandoned requests did not run to the end"

    answer = httpx.get(f"{server.base}/tessera/api/v1/load?minutes=1", headers=server.headers("viewer"), timeout=60)
    assert answer.status_code == 200 and answer.json()["total_runs"] == len(ACTIVE) + 1, answer.text


def test_a_client_that_leaves_mid_body_is_no_error(server, caplog):
    """Headers and part of a body, then the connection closed: no 500, no traceback, nothing paused."""
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    dag_id = ACTIVE_TESSERA
    ended: list[str] = []
    real = inputs.read_capped

    async def read_capped(chunks: Any, declared_length: str | None) -> bytes:
        try:
            return await real(chunks, declared_length)
        except BaseException as error:
            ended.append(type(error).__name__)
            raise

    port = int(server.base.rsplit(":", 1)[1])
    head = (
        f"POST /tessera/api/v1/dags/{dag_id}/pause HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {server.api.tokens['admin']}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n"
    )
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.INFO):
        patch.setattr(inputs, "read_capped", read_capped)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(head.encode() + b'{"note": "half a bo')
            time.sleep(0.5)  # the route is authorized and waits for the rest of the body: then hang up
        deadline = time.monotonic() + 10
        while not ended and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # whatever the app logs about the request, after the reader stopped
    assert ended == ["ClientDisconnect"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert errors == [], [f"{r.name}: {r.getMessage()}" for r in errors]
    with create_session() as session:
        assert not session.get(DagModel, dag_id).is_paused
