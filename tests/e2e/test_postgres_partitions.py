"""The partition end-to-end checks of ``test_partitions_e2e.py`` in the PostgreSQL tier.

Same DAGs (``dags_partitions/``), same CLI-driven steps and assertions, on a PostgreSQL
metadata DB with the production shape: a dag-processor, an API server for the workers and
TWO schedulers. Keys are computed identically by both schedulers, so a partition-range
backfill, the aligned consumers and the clears behave as on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .conftest import PostgresServer, api_server_healthy, keep_artifacts_if_failed, start_postgres_stack
from .harness import AirflowHome, _free_port
from .test_partitions_e2e import (  # noqa: F401 - collected here against this module's `stack`
    DAG_IDS,
    DAGS,
    test_a_partition_range_backfill_creates_exactly_the_missing_keys,
    test_asset_consumers_get_runs_aligned_by_key,
    test_clearing_one_key_reruns_that_window_and_its_aligned_consumer,
)

# About 2 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = pytest.mark.minutes(2)


@pytest.fixture(scope="module")
def stack(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[AirflowHome]:
    failed_before = request.session.testsfailed
    home = AirflowHome(
        tmp_path_factory.mktemp("airflow-postgres-partitions"),
        database_url=postgres_server.create_database("tessera_partitions"),
        dags_source=DAGS,
    )
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{_free_port()}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "p" * 64,
    )
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        start_postgres_stack(home)
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        for dag_id in DAG_IDS:
            home.wait_for(f"{dag_id} to be parsed", lambda d=dag_id: home.is_parsed(d), timeout=180)
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)
