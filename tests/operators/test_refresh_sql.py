"""``RefreshSQLOperator`` run by Airflow (``dag.test()``) against real databases through Airflow connections.

The outcome tests use SQLite; the identifier-quoting tests run on SQLite and on a
throwaway PostgreSQL cluster (``scripts/postgres.sh``), whose quoting and parameter
markers differ.
"""

from __future__ import annotations

import json
import random
import sqlite3
import textwrap
import uuid
from collections.abc import Callable
from dataclasses import dataclass
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

from .conftest import BUNDLE_CONFIG, dags_folder_bundle, missing

TOTALS = "SELECT region, COUNT(*) AS n FROM orders GROUP BY region"
# Stands in for a newer version of the DAG writing the same table while this run is between
# its read and its write: the "query" itself bumps the table's generation, as that write would.
NEWER_VERSION_WRITES_MID_RUN = (
    f"UPDATE {STATE_TABLE} SET generation = generation + 1, query_fingerprint = 'a-newer-query'"
    " WHERE target = 'totals' RETURNING 'newer' AS region, generation AS n"
)
TOTALS_DDL = "CREATE TABLE IF NOT EXISTS totals (region TEXT, n INTEGER)"
DAG_FILE = """
from airflow.sdk import DAG
from tessera.operators.refresh_sql import RefreshSQLOperator
from tessera.timetables import Every

with DAG({dag_id!r}, schedule=Every("1h"), start_date=None, params={params!r}):
    RefreshSQLOperator(
        task_id="refresh",
        conn_id={conn_id!r},
        sql={sql!r},
        target_table={table!r},
        target_ddl={ddl!r},
    )
"""
SECRET = "tessera-secret-7f3a9c"


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


def _refresh(
    tmp_path: Path,
    dag_id: str,
    sql: str,
    *,
    conn_id: str = "refresh_db",
    table: str = "totals",
    ddl: str | None = TOTALS_DDL,
    params: dict[str, Any] | None = None,
) -> tuple[str, dict[str, Any] | None]:
    """Write a refresh DAG file and run it once: (task state, receipt)."""
    path = tmp_path / f"{dag_id}.py"
    source = DAG_FILE.format(dag_id=dag_id, sql=sql, conn_id=conn_id, table=table, ddl=ddl, params=params or {})
    path.write_text(textwrap.dedent(source))
    return _run(path, dag_id, "refresh", tmp_path)


def _run(path: Path, dag_id: str, task_id: str, tmp_path: Path) -> tuple[str, dict[str, Any] | None]:
    """Parse a DAG file, store it, run it once with ``dag.test()``: (state of ``task_id``, its receipt or None).

    ``dag.test()`` runs with no sibling DAG files to re-sync (``dags_folder_bundle``, a folder under
    ``tmp_path``): it re-parsed every example DAG on each run otherwise.
    """
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(path))
    assert bag.import_errors == {}
    sync_bag_to_db(bag, "dags-folder", None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(BUNDLE_CONFIG, dags_folder_bundle(tmp_path / "no-siblings"))
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
        return str(state), None if row is None else XComModel.deserialize_value(row)


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
    state, first = _run(example, "tessera_refresh_dashboard", "refresh_totals", tmp_path)
    assert (state, first["outcome"], first["rows"]) == ("success", REFRESHED, 2)
    assert _rows(path, "SELECT region, orders, revenue FROM dashboard_totals") == [
        ("apac", 1, 80.5),
        ("emea", 1, 120.0),
    ]
    state, second = _run(example, "tessera_refresh_dashboard", "refresh_totals", tmp_path)
    assert (state, second["outcome"], second["changed"]) == ("success", NO_CHANGE, False)


@pytest.mark.parametrize(
    ("table", "error"),
    [
        pytest.param("totals; DROP TABLE orders", ValueError, id="statement-injection"),
        pytest.param("", ValueError, id="empty"),
        pytest.param("1totals", ValueError, id="leading-digit"),
        pytest.param('"totals"', ValueError, id="already-quoted"),
        pytest.param("a.b.c", ValueError, id="three-parts"),
        pytest.param("reporting.", ValueError, id="empty-name"),
        pytest.param(7, TypeError, id="not-a-string"),
    ],
)
def test_a_target_that_is_not_a_table_name_is_refused_when_the_dag_is_parsed(table, error):
    with pytest.raises(error, match="^target_table: "):
        RefreshSQLOperator(task_id="refresh", conn_id="refresh_db", sql=TOTALS, target_table=table)


def test_a_templated_target_is_checked_after_rendering(tmp_path, database, airflow_db):
    # Accepted when the DAG is parsed (its value is not known yet), refused once rendered.
    templated = "{{ params.table }}"
    RefreshSQLOperator(task_id="refresh", conn_id="refresh_db", sql=TOTALS, target_table=templated)
    injected = {"table": "totals; DROP TABLE orders"}
    state, receipt = _refresh(tmp_path, "refresh_templated", TOTALS, table=templated, params=injected)
    assert (state, receipt) == ("failed", None)
    assert _rows(database, "SELECT COUNT(*) FROM orders") == [(3,)]

    state, receipt = _refresh(tmp_path, "refresh_templated", TOTALS, table=templated, params={"table": "totals"})
    assert state == "success" and receipt is not None and receipt["outcome"] == REFRESHED
    assert _rows(database, "SELECT region, n FROM totals") == [("apac", 1), ("emea", 2)]


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


# Identifiers on SQLite and PostgreSQL: the result's column names and the target table reach the
# target connection as SQL text, so they are quoted by the target's own dialect.


@dataclass
class Target:
    """A target database reachable as the Airflow connection ``conn_id``, and a direct line to it."""

    backend: str
    conn_id: str
    schema: str
    """The name of the default schema, to write a schema-qualified target."""
    mark: str
    """The driver's parameter marker, which an injected column name plants in the INSERT."""
    run: Callable[[str], list[tuple[Any, ...]]]
    """Execute one statement, commit, and return its rows (sorted), if any."""


def _sqlite_run(path: Path) -> Callable[[str], list[tuple[Any, ...]]]:
    def run(sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(path) as conn:
            return sorted(conn.execute(sql).fetchall())

    return run


def _postgres_run(url: str) -> Callable[[str], list[tuple[Any, ...]]]:
    import psycopg2

    def run(sql: str) -> list[tuple[Any, ...]]:
        conn = psycopg2.connect(url.replace("+psycopg2", ""))
        try:
            with conn, conn.cursor() as cursor:
                cursor.execute(sql)
                return sorted(cursor.fetchall()) if cursor.description else []
        finally:
            conn.close()

    return run


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, airflow_db: str) -> Target:
    """An empty target database (a new one per test), as the Airflow connection ``refresh_target``."""
    if request.param == "sqlite":
        path = tmp_path / "target.db"
        monkeypatch.setenv("AIRFLOW_CONN_REFRESH_TARGET", json.dumps({"conn_type": "sqlite", "host": str(path)}))
        return Target("sqlite", "refresh_target", "main", "?", _sqlite_run(path))
    from sqlalchemy.engine import make_url

    try:
        import airflow.providers.postgres.hooks.postgres  # noqa: F401
    except ImportError:
        missing("no Airflow provider for PostgreSQL connections: pip install apache-airflow-providers-postgres")
    url = request.getfixturevalue("postgres_server").create_database(f"refresh_{uuid.uuid4().hex[:12]}")
    parts = make_url(url)
    connection = {"conn_type": "postgres", "host": parts.host, "port": parts.port, "login": parts.username}
    monkeypatch.setenv("AIRFLOW_CONN_REFRESH_TARGET", json.dumps({**connection, "schema": parts.database}))
    return Target("postgres", "refresh_target", "public", "%s", _postgres_run(url))


def test_a_column_name_cannot_inject_sql_into_the_target(tmp_path, target, capfd):
    target.run("CREATE TABLE creds (secret TEXT)")
    target.run(f"INSERT INTO creds VALUES ('{SECRET}')")
    target.run("CREATE TABLE loot (a TEXT)")
    target.run("INSERT INTO loot VALUES ('kept')")
    # Unquoted, this name turns "INSERT INTO loot (<name>) VALUES (<mark>)" into
    # "INSERT INTO loot (a) SELECT secret || <mark> FROM creds --) VALUES (<mark>)".
    column = f"a) SELECT secret || {target.mark} FROM creds --"
    sql = f"SELECT 'x' AS \"{column}\""

    state, receipt = _refresh(tmp_path, f"refresh_inject_{target.backend}", sql, conn_id=target.conn_id, table="loot")

    assert (state, receipt) == ("failed", None), "the task fails and reports no outcome"
    assert target.run("SELECT a FROM loot") == [("kept",)], "nothing written, nothing deleted"
    assert target.run(f"SELECT generation FROM {STATE_TABLE}") == [(0,)]
    output = capfd.readouterr()
    log = output.out + output.err
    assert "could not be written into 'loot'" in log and column in log, log[-3000:]
    assert SECRET not in log


@pytest.mark.parametrize("table", ["order", "{schema}.order"], ids=["reserved-table", "schema-qualified"])
def test_reserved_and_mixed_case_column_names_are_written(tmp_path, target, table):
    # A "%" in a name must reach PostgreSQL's driver doubled, or it reads as a parameter marker.
    table = table.format(schema=target.schema)
    ddl = 'CREATE TABLE IF NOT EXISTS "order" ("order" TEXT, "select" INTEGER, "MixedCase" TEXT, "share %" REAL)'
    target.run(ddl)
    target.run("""INSERT INTO "order" VALUES ('stale', 0, 'stale', 0)""")
    sql = (
        """SELECT 'emea' AS "order", 2 AS "select", 'Emea' AS "MixedCase", 0.5 AS "share %" """
        """UNION ALL SELECT 'apac', 1, 'Apac', 0.25"""
    )
    dag_id = f"refresh_quoted_{target.backend}_{table.count('.')}"

    state, receipt = _refresh(tmp_path, dag_id, sql, conn_id=target.conn_id, table=table, ddl=ddl)

    assert state == "success" and receipt is not None
    assert (receipt["outcome"], receipt["rows"]) == (REFRESHED, 2)
    rows = target.run('SELECT "order", "select", "MixedCase", "share %" FROM "order"')
    assert rows == [("apac", 1, "Apac", 0.25), ("emea", 2, "Emea", 0.5)]
    state, receipt = _refresh(tmp_path, dag_id, sql, conn_id=target.conn_id, table=table, ddl=ddl)
    assert state == "success" and receipt is not None and receipt["outcome"] == NO_CHANGE
    assert target.run(f"SELECT target, generation FROM {STATE_TABLE}") == [(table, 1)]
