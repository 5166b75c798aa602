"""A DAG with a RefreshSQLOperator task runs one run at a time, held by the dag policy at parse time."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

DAG_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.refresh_sql import RefreshSQLOperator

with DAG("refresh_default", schedule="@daily", start_date=None):
    RefreshSQLOperator(task_id="totals", conn_id="c", sql="SELECT 1 AS n", target_table="t")
with DAG("refresh_one", schedule=None, start_date=None, max_active_runs=1):
    RefreshSQLOperator(task_id="totals", conn_id="c", sql="SELECT 1 AS n", target_table="t")
with DAG("refresh_three", schedule=None, start_date=None, max_active_runs=3):
    EmptyOperator(task_id="prepare") >> RefreshSQLOperator(
        task_id="totals", conn_id="c", sql="SELECT 1 AS n", target_table="t"
    )
with DAG("plain_three", schedule=None, start_date=None, max_active_runs=3):
    EmptyOperator(task_id="work")
with DAG("plain_default", schedule=None, start_date=None):
    EmptyOperator(task_id="work")
"""


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory):
    from tests.compat.airflow_names import DagBag

    folder: Path = tmp_path_factory.mktemp("refresh-flight")
    (folder / "dags.py").write_text(textwrap.dedent(DAG_FILE))
    return DagBag(str(folder))


def test_a_refresh_dag_left_at_the_default_gets_one_active_run(bag) -> None:
    from tests.compat.airflow_names import DagSerialization

    stored = DagSerialization.from_dict(DagSerialization.to_dict(bag.dags["refresh_default"]))
    assert stored.max_active_runs == 1
    assert bag.dags["refresh_one"].max_active_runs == 1


def test_a_refresh_dag_asking_for_more_runs_is_an_import_error_naming_the_field(bag) -> None:
    assert "refresh_three" not in bag.dags
    (error,) = bag.import_errors.values()
    assert "max_active_runs: 3 on DAG 'refresh_three'; a DAG with a RefreshSQLOperator task (totals)" in error
    assert "remove max_active_runs or set it to 1" in error


def test_dags_without_a_refresh_task_keep_their_own_limit(bag) -> None:
    from airflow.configuration import conf

    assert bag.dags["plain_three"].max_active_runs == 3
    assert bag.dags["plain_default"].max_active_runs == conf.getint("core", "max_active_runs_per_dag") != 1
