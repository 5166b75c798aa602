"""A restarted API server worker warms the Schedules page before its first visitor, on nobody's behalf.

The warm-up is checked on the real metadata DB with DAGs stored by Airflow: it builds the tessera
app, decodes every tessera DAG's stored version and computes the first page's lanes (what a load
then reads from memory), and none of its statements runs on Airflow's engine, which the requests
use (and which the query-counting tests watch). The API server's app carries the middleware that
starts it when a worker's lifespan starts.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..api.test_api_app import forget_dags, store_dags

IDS = ("warm_a", "warm_b", "warm_c")
FILE = """
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
from tessera.timetables import Every

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("15m"), start_date=None):
        EmptyOperator(task_id="work")
"""


@pytest.fixture(scope="module")
def stored(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    store_dags(tmp_path_factory.mktemp("tessera-warm"), FILE, IDS)
    try:
        yield
    finally:
        forget_dags("warm_")


def test_the_warm_up_decodes_every_dag_and_computes_the_first_pages_lanes_off_the_requests_engine(stored):
    from airflow.settings import engine
    from sqlalchemy import event

    from tessera.plugin.fleet import memo
    from tessera.plugin.fleet import stored as stored_dags
    from tessera.plugin.fleet.warm import warm_page

    built: list[bool] = []
    on_requests_engine: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        on_requests_engine.append(statement)

    for dag_id in IDS:  # as after a restart: nothing decoded, no lane
        stored_dags._decoded.pop(dag_id, None)
        memo._memos.pop(dag_id, None)
    event.listen(engine, "before_cursor_execute", count)
    try:
        warm_page(lambda: built.append(True))
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert built == [True]
    assert on_requests_engine == []
    for dag_id in IDS:
        assert dag_id in stored_dags._decoded, dag_id
        assert memo._memos[dag_id].lane is not None, dag_id


def test_the_api_servers_app_starts_the_warm_up_when_a_worker_starts(stored):
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from fastapi.testclient import TestClient

    from tessera.plugin.api.mount import WarmAtStart
    from tessera.plugin.fleet.warm import WARMED

    purge_cached_app()
    try:
        app = create_app(apps="core")
        assert [m for m in app.user_middleware if m.cls is WarmAtStart], "the plugin's root middleware is missing"
        with TestClient(app):  # the lifespan's startup, as a worker's
            assert WARMED.wait(timeout=120), "the warm-up did not finish"
    finally:
        purge_cached_app()
