"""End-to-end fixtures: one migrated AIRFLOW_HOME and one dag-processor + scheduler per session."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import AirflowHome

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"


@pytest.fixture(scope="session")
def e2e_home(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[AirflowHome]:
    """A fresh AIRFLOW_HOME on SQLite, migrated by ``airflow db migrate``; DAGs from ``tests/e2e/dags``.

    Its processes are stopped at teardown whatever happened; if any test failed while it
    existed, the logs and the dag_run table are saved under ``test-artifacts/e2e/``.
    """
    home = AirflowHome(tmp_path_factory.mktemp("airflow-e2e"))
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        yield home
    finally:
        home.stop()
        if request.session.testsfailed > failed_before:
            stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
            home.save_artifacts(ARTIFACTS / stamp)


@pytest.fixture(scope="session")
def airflow_stack(e2e_home: AirflowHome) -> AirflowHome:
    """The real ``airflow dag-processor`` and ``airflow scheduler`` running against ``e2e_home``.

    The DAGs in the folder were never parsed before, so none of them existed before
    ``e2e_home.started_at``.
    """
    e2e_home.start("dag-processor", "dag-processor")
    e2e_home.start("scheduler", "scheduler")
    return e2e_home
