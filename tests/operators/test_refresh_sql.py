"""``RefreshSQLOperator`` run by Airflow (``dag.test()``) against a real SQLite database through a connection."""

from __future__ import annotations

import json
import random
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.operators.refresh_sql import (
    NO_CHANGE,
    RECEIPT_KEY,
    REFRESHED,
    SKIPPED,
    STATE_TABLE,
    RefreshSQLOperator,
    fingerprint,
)

TOTALS = "SELECT region, COUNT(*) AS n FROM orders GROUP BY region"
# Stands in for a newer version of the DAG writing the same table while this run is between
# its read and its write: the "query" itself bumps the table's generation, as that write would.
NEWER_VERSION_WRITES_MID_RUN = (
    f"UPDATE {STATE_TABLE} SET generation = generation + 1, query_fingerprint = 'a-newer-query'"
    " WHERE target = 'totals' RETURNING 'newer' AS region, generation AS n"
)
DAG_FILE = """
from airflow.sdk import DAG
from tessera.operators.refresh_sql import RefreshSQLOperator
from tessera.timetables import Every

with DAG({dag_id!r}, schedule=Every("1h"), start_date=None):
    RefreshSQLOperator(
        task_id="refresh",
        conn_id="refresh_db",
        sql={sql!r},
        target_table="totals",
        target_ddl="CREATE TABLE IF NOT EXISTS totals (region TEXT, n INTEGER)",
    )
"""


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite database with an ``orders`` table, reachable as the Airflow connection ``refresh_db``."""
    path = tmp_path / "dashboard.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (region TEXT, amount REAL)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [("emea", 10.0), ("emea", 5.0), ("apac", 7.5)])
    monkeypatch.setenv("AIRFLOW_CONN_REFRESH_DB", json.dumps({"conn_type": "sqlite", "host": str(path)}))
    return path


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute(sql).fetchall())


def _refresh(tmp_path: Path, dag_id: str, sql: str) -> tuple[str, dict[str, Any]]:
    """Write a refresh DAG file and run it once: (task state, receipt)."""
    path = tmp_path / f"{dag_id}.py"
    path.write_text(textwrap.dedent(DAG_FILE.format(dag_id=dag_id, sql=sql)))
    return _run(path, dag_id, "refresh")


def _run(path: Path, dag_id: str, task_id: str) -> tuple[str, dict[str, Any]]:
    """Parse a DAG file, store it, run it once with ``dag.test()``: (state of ``task_id``, its receipt)."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(path))
    assert bag.import_errors == {}
    sync_bag_to_db(bag, "dags-folder", None)
    run = bag.dags[dag_id].test()
    with create_session() as session:
        state = session.scalar(
            select(TaskInstance.state).where(
                TaskInstance.dag_id == dag_id, TaskInstance.run_id == run.run_id, TaskInstance.task_id == task_id
            )
        )
        row = session.scalar(
            select(XComModel).where(
                XComModel.dag_id == dag_id, XComModel.run_id == run.run_id, XComModel.key == RECEIPT_KEY
            )
        )
        return str(state), XComModel.deserialize_value(row)


def test_refresh_no_change_and_change_are_three_outcomes(tmp_path, database, airflow_db):
    state, first = _refresh(tmp_path, "refresh_outcomes", TOTALS)
    assert (state, first["outcome"], first["rows"], first["changed"]) == ("success", REFRESHED, 2, True)
    assert set(first) == {"outcome", "rows", "duration_seconds", "changed"}, "metadata only, never the data"
    assert _rows(database, "SELECT region, n FROM totals") == [("apac", 1), ("emea", 2)]

    state, second = _refresh(tmp_path, "refresh_outcomes", TOTALS)
    assert (state, second["outcome"], second["changed"]) == ("success", NO_CHANGE, False)
    assert _rows(database, f"SELECT generation FROM {STATE_TABLE}") == [(1,)], "nothing was rewritten"

    with sqlite3.connect(database) as conn:
        conn.execute("INSERT INTO orders VALUES ('amer', 3.0)")
    state, third = _refresh(tmp_path, "refresh_outcomes", TOTALS)
    assert (state, third["outcome"], third["rows"], third["changed"]) == ("success", REFRESHED, 3, True)
    assert _rows(database, "SELECT region, n FROM totals") == [("amer", 1), ("apac", 1), ("emea", 2)]
    assert _rows(database, f"SELECT generation FROM {STATE_TABLE}") == [(2,)]


def test_a_write_landing_between_read_and_write_is_skipped_and_loses_nothing(tmp_path, database, airflow_db):
    _refresh(tmp_path, "refresh_collision", TOTALS)
    before = _rows(database, "SELECT region, n FROM totals")

    state, receipt = _refresh(tmp_path, "refresh_collision", NEWER_VERSION_WRITES_MID_RUN)

    assert (state, receipt["outcome"], receipt["changed"]) == ("skipped", SKIPPED, False)
    assert _rows(database, "SELECT region, n FROM totals") == before, "the newer write is kept"
    assert _rows(database, f"SELECT generation, query_fingerprint FROM {STATE_TABLE}") == [(2, "a-newer-query")]


def test_the_example_dag_refreshes_then_reports_no_change(tmp_path, monkeypatch, airflow_db):
    from tests.conftest import EXAMPLES

    path = tmp_path / "dashboard.db"
    monkeypatch.setenv("AIRFLOW_CONN_TESSERA_DEMO_SQLITE", json.dumps({"conn_type": "sqlite", "host": str(path)}))
    example = EXAMPLES / "refresh_dashboard.py"
    state, first = _run(example, "tessera_refresh_dashboard", "refresh_totals")
    assert (state, first["outcome"], first["rows"]) == ("success", REFRESHED, 2)
    assert _rows(path, "SELECT region, orders, revenue FROM dashboard_totals") == [
        ("apac", 1, 80.5),
        ("emea", 1, 120.0),
    ]
    state, second = _run(example, "tessera_refresh_dashboard", "refresh_totals")
    assert (state, second["outcome"], second["changed"]) == ("success", NO_CHANGE, False)


@pytest.mark.parametrize(
    "table",
    [
        pytest.param("totals; DROP TABLE orders", id="statement-injection"),
        pytest.param("", id="empty"),
        pytest.param("1totals", id="leading-digit"),
    ],
)
def test_a_target_that_is_not_a_table_name_is_refused(table):
    operator = RefreshSQLOperator(task_id="refresh", conn_id="refresh_db", sql=TOTALS, target_table=table)
    with pytest.raises(ValueError, match="^target_table: "):
        operator.execute({})


@pytest.mark.parametrize("sql", [pytest.param("", id="empty"), pytest.param("   ", id="blank")])
def test_an_empty_query_is_refused_when_the_dag_is_parsed(sql):
    with pytest.raises(ValueError, match="^sql: "):
        RefreshSQLOperator(task_id="refresh", conn_id="refresh_db", sql=sql, target_table="totals")


values = st.one_of(st.integers(), st.text(max_size=5), st.floats(allow_nan=False), st.none())


@settings(max_examples=200)
@given(rows=st.lists(st.tuples(values, values), max_size=8), seed=st.integers())
def test_the_fingerprint_ignores_row_order_and_sees_every_change(rows, seed):
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    assert fingerprint(["a", "b"], rows) == fingerprint(["a", "b"], shuffled)
    assert fingerprint(["a", "b"], rows) != fingerprint(["a", "c"], rows)
    assert fingerprint(["a", "b"], rows) != fingerprint(["a", "b"], [*rows, ("extra", None)])
