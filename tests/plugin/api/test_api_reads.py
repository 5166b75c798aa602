"""How often one refresh request reads the DAG row and the stored DAG: once each, whatever it decides.

Counted on the real SQLite metadata DB with a SQLAlchemy ``before_cursor_execute`` listener
on Airflow's engine, over a whole request through the app mounted in Airflow's API app.
A read of the DAG row is a SELECT of the ``dag`` table's full row (``DagModel``); Airflow's
own narrower lookups (its authorization's team name, ``create_dagrun``'s bundle version)
are not the plugin's and are not counted.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from .test_api_app import DAG_FILE, Api, airflow_api, store_dags

DAG_ID = "reads_refresh"
JOINED_DAG_ID = "reads_refresh_joined"
"""A DAG of its own for the refresh that joins: each test sets up the run it needs, whatever ran before."""
READS = {
    "dag row": re.compile(r"^\s*SELECT\b.*\bdag\.is_paused\b.*\bFROM dag\b", re.DOTALL),
    "serialized dag": re.compile(r"\bFROM serialized_dag\b"),
}


@contextmanager
def counted() -> Iterator[Counter[str]]:
    from airflow.settings import engine
    from sqlalchemy import event

    reads: Counter[str] = Counter()

    def count(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        reads.update(name for name, pattern in READS.items() if pattern.search(statement))

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield reads
    finally:
        event.remove(engine, "before_cursor_execute", count)


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-reads")
    store_dags(folder, DAG_FILE, (DAG_ID, JOINED_DAG_ID))
    with airflow_api(folder) as api:
        yield api


def test_the_counter_sees_what_a_plan_request_reads(api):
    """The patterns match real reads: a plan reads the row and the stored DAG too."""
    with counted() as reads:
        answer = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/plan", user="viewer")
    assert answer.status_code == 200, answer.text
    assert reads["dag row"] >= 1 and reads["serialized dag"] >= 1


@pytest.mark.parametrize("outcome", ["started", "joined"])
def test_one_refresh_reads_the_dag_row_once_and_the_stored_dag_once(api, outcome):
    dag_id = JOINED_DAG_ID if outcome == "joined" else DAG_ID
    if outcome == "joined":  # a refresh just before started a run that is still queued: the next one joins it
        first = api.call("POST", f"/tessera/api/v1/dags/{dag_id}/refresh", user="user", json_body={})
        assert first.json()["outcome"] == "started", first.text
    with counted() as reads:
        answer = api.call("POST", f"/tessera/api/v1/dags/{dag_id}/refresh", user="user", json_body={})
    assert answer.status_code in (200, 201), answer.text
    assert answer.json()["outcome"] == outcome
    assert answer.json()["next_scheduled_run_after"] is not None
    assert dict(reads) == {"dag row": 1, "serialized dag": 1}
