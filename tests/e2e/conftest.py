"""End-to-end fixtures: a SQLite deployment with one scheduler, and a PostgreSQL one with two.

Each is created once per session. The PostgreSQL deployment is shared by
``test_postgres_dispatch_pool.py``, ``test_postgres_faults.py`` and then
``test_postgres_ha.py`` (pytest runs them in that order), whose last test stops and
restarts it.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import subprocess
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tessera.plugin.sqlite_settings import BUSY_TIMEOUT_SECONDS

from ..conftest import SHARED_STACKS
from .harness import AirflowHome, _free_port
from .test_fan_in_e2e import DAGS as FAN_IN_DAGS

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"
POSTGRES_DAGS = Path(__file__).resolve().parent / "dags_postgres"
POSTGRES_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres.sh"
SCHEDULERS = ("scheduler-a", "scheduler-b")


def one_deployment(home: AirflowHome, request: pytest.FixtureRequest, **env: str) -> Iterator[AirflowHome]:
    """``home`` migrated and running its own API server, dag-processor and scheduler (``env`` added to its
    environment); stopped afterwards, its artifacts kept if a test failed. A module fixture yields from it."""
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        **env,
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        home.start("dag-processor", "dag-processor")
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        home.start("scheduler", "scheduler")
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def keep_artifacts_if_failed(home: AirflowHome, request: pytest.FixtureRequest, failed_before: int) -> None:
    """Save ``home``'s logs and tables under ``test-artifacts/e2e/`` if a test failed since ``failed_before``."""
    if request.session.testsfailed > failed_before:
        stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
        home.save_artifacts(ARTIFACTS / f"{stamp}-{home.root.name}")


@pytest.fixture(scope="session")
def e2e_home(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
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
        keep_artifacts_if_failed(home, request, failed_before)


@pytest.fixture(scope="session")
def airflow_stack(e2e_home: AirflowHome) -> AirflowHome:
    """The real ``airflow dag-processor`` and ``airflow scheduler`` running against ``e2e_home``.

    The DAGs in the folder were never parsed before, so none of them existed before
    ``e2e_home.started_at``. An API server serves the workers (LocalExecutor) that run
    the cursor functions; the other DAGs' ``EmptyOperator``s need none.
    """
    port = _free_port()
    e2e_home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        # The scheduler signs the workers' tokens and the API server checks them: one shared secret.
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
    )
    e2e_home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
    e2e_home.start("dag-processor", "dag-processor")
    # A worker the scheduler starts before the API server listens fails its task at once.
    e2e_home.wait_for("the API server", lambda: api_server_healthy(e2e_home), timeout=300)
    e2e_home.start("scheduler", "scheduler")
    return e2e_home


class PostgresServer:
    """A PostgreSQL cluster started by ``scripts/postgres.sh`` on a free loopback port."""

    def __init__(self) -> None:
        started = subprocess.run(["bash", str(POSTGRES_SCRIPT), "start"], capture_output=True, text=True)
        if started.returncode != 0:
            raise RuntimeError(f"scripts/postgres.sh start failed:\n{started.stderr[-3000:]}")
        values = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
        self.data_dir = values["TESSERA_PG_DATA"]
        self.url = values["TESSERA_PG_URL"]
        """The SQLAlchemy URL of the database ``airflow`` (psycopg2 driver)."""

    def create_database(self, name: str) -> str:
        """A new empty database on this server; its SQLAlchemy URL."""
        import psycopg2

        conn = psycopg2.connect(self.url.replace("+psycopg2", ""))
        try:
            conn.autocommit = True
            with conn.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        subprocess.run(["bash", str(POSTGRES_SCRIPT), "stop", self.data_dir], capture_output=True, check=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on loopback (``scripts/postgres.sh``), stopped and deleted at teardown.

    Without the server binaries the PostgreSQL tests are skipped on a laptop, and fail
    in CI (``CI`` set), where ``.ci/run`` installs them.
    """
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        reason = "PostgreSQL server binaries not installed (/usr/lib/postgresql/*/bin); run scripts/postgres.sh install"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


def start_postgres_stack(home: AirflowHome) -> None:
    """Start the deployment's processes: dag-processor, API server (for workers) and two schedulers."""
    port = home.env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].split(":")[2].split("/")[0]
    home.start("dag-processor", "dag-processor")
    home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", port, "--workers", "1")
    for name in SCHEDULERS:
        # Named in the job table, and serving its workers' logs on its own port, as on separate machines.
        own = {"TESSERA_E2E_HOSTNAME": name, "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(_free_port())}
        home.start(name, "scheduler", env=own)


ADMIN_ANSWER_BOUND = 3 * BUSY_TIMEOUT_SECONDS
"""How long :func:`admin_api` waits for an answer. On SQLite a write waits for the one write lock, up to
``BUSY_TIMEOUT_SECONDS``, and on a loaded host the holder can keep it that long: a 30 s bound gave up on
a trigger the API server was still about to make (stop 33's CI), so the bound covers a full lock wait."""


def admin_api(home: AirflowHome, method: str, path: str, body: dict | None = None) -> dict:
    """Call a deployment's REST API as an admin (``SIMPLE_AUTH_MANAGER_ALL_ADMINS``: no credentials)."""
    base = home.env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].replace("/execution/", "")
    with urllib.request.urlopen(f"{base}/auth/token", timeout=ADMIN_ANSWER_BOUND) as answer:
        token = json.loads(answer.read())["access_token"]
    request = urllib.request.Request(
        f"{base}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=ADMIN_ANSWER_BOUND) as answer:
        return json.loads(answer.read())


def api_server_healthy(home: AirflowHome) -> bool:
    url = home.env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].replace("/execution/", "/api/v2/monitor/health")
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="session")
def postgres_stack(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[AirflowHome]:
    """A deployment on PostgreSQL: dag-processor, API server and two schedulers (``SCHEDULERS``).

    DAGs: ``tests/e2e/dags_postgres`` and the fan-in DAGs of ``test_fan_in_e2e.py``. Workers
    (LocalExecutor) run the cursor function's tasks through the API server.
    """
    home = AirflowHome(
        tmp_path_factory.mktemp("airflow-postgres"),
        database_url=postgres_server.create_database("tessera_e2e"),
        dags_source=POSTGRES_DAGS,
    )
    (home.dags / "fan_in_e2e_dags.py").write_text(textwrap.dedent(FAN_IN_DAGS))
    (home.root / "cursor-control").mkdir()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{_free_port()}/execution/",
        # Every scheduler signs the workers' tokens and the API server checks them: one shared secret.
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        # A worker that stops heartbeating is declared lost after 20 s (default 5 min).
        AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT="20",
        # A refused Execution API call is retried for seconds, not the default half minute.
        AIRFLOW__WORKERS__EXECUTION_API_RETRY_WAIT_MIN="0.2",
        AIRFLOW__WORKERS__EXECUTION_API_RETRY_WAIT_MAX="1",
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        start_postgres_stack(home)
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


# The Celery tier's deployment, shared by every test_celery_*.py module (a session fixture must be
# defined once, here, or each module importing it would start its own). Imported last: it uses the above.
from .celery_stack import celery_stack  # noqa: E402, F401


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop a shared deployment once the last test using it is done, not at the end of the session.

    Its processes would otherwise share the machine's cores with every later test on that worker (the
    PostgreSQL tier's timing among them): its schedulers go on making runs of its 10-second schedules and
    its workers go on running them for the rest of the session. The tests sharing one run one after the
    other (one xdist group, in file order), so the first test after them that does not use it marks the end.
    The fixture's own teardown still runs at the end of the session; stopping twice is harmless.
    """
    for name in SHARED_STACKS:  # each set of files sharing one is a single xdist group (tests/conftest.py)
        if name not in getattr(item, "fixturenames", ()):
            continue
        if nextitem is not None and name in getattr(nextitem, "fixturenames", ()):
            continue
        home = getattr(item, "funcargs", {}).get(name)
        if home is not None:
            home.stop()
            if hasattr(home, "redis"):
                home.redis.stop()
