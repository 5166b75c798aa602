"""Airflow's DAG list at 3,000 DAGs, asked again and again: the API server stays up (issue 37, item 6).

``GET /api/v2/dags?limit=3000`` repeated back to back killed ``airflow api-server --workers 1``
(SIGSEGV, or glibc's ``free(): invalid size``) on CPython 3.11: a use-after-free when the cycle
collector ran a weakref callback of SQLAlchemy's ``InstanceState`` inside a store on the same state
(:mod:`tessera.plugin.orm_state_keys` explains it, and reserves the state's names so no such store
allocates). The DAG list makes the garbage: each ``DagModel`` and its ``DagTag`` rows point at each
other, so every DAG here has tags.

Whether the collector runs inside one of those stores is a matter of timing. Left to CPython's
thresholds it did by about the 9th call in the report, and not within 40 calls on this machine,
so the API server here collects far more often (a ``sitecustomize`` sets generation 0's threshold
to 50 allocations, and every collection of a generation collects the next): the same code paths,
the same window, hit within a dozen calls.
Without the reservation (its call in ``tessera.plugin.policy`` removed) this test's server died on
the 6th call, and on the 12th in a second run; with it, the server must answer all 30.

The fleet is one parsed tessera DAG (``Every("1m")``, two tags) whose ``dag`` and ``dag_tag`` rows
are copied 3,000 times in SQL: the list reads nothing else.
"""

from __future__ import annotations

import json
import textwrap
import urllib.request
from collections.abc import Iterator

import pytest

from .conftest import PostgresServer, api_server_healthy, keep_artifacts_if_failed
from .harness import AirflowHome, _free_port

pytestmark = [pytest.mark.e2e, pytest.mark.minutes(1)]

FLEET = 3000
CALLS = 30
"""Back-to-back calls; before the fix the server died by the 12th."""
TEMPLATE = "dag_list_template"
DAGS = f"""
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("{TEMPLATE}", schedule=Every("1m"), start_date=None, tags=["tessera", "fleet"]):
    EmptyOperator(task_id="work")
"""
GC_PRESSURE = """
import gc

# Collect every 50 allocations, and each generation with the next: the collector runs inside the ORM's
# stores often enough that a window CPython's default thresholds hit about once in ten calls is hit at once.
gc.set_threshold(50, 1, 1)
"""


def _copy_rows(home: AirflowHome, table: str, count: int) -> None:
    """Copy the template DAG's rows of ``table`` ``count`` times, as DAGs ``dag_list_00000``... (every column)."""
    columns = [
        name
        for (name,) in home.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            table,
        )
    ]
    picked = ", ".join("'dag_list_' || lpad(n::text, 5, '0')" if name == "dag_id" else name for name in columns)
    home.execute(
        f"INSERT INTO {table} ({', '.join(columns)})"
        f" SELECT {picked} FROM {table}, generate_series(0, ? - 1) AS n WHERE dag_id = ?",
        count,
        TEMPLATE,
    )


@pytest.fixture(scope="module")
def dag_list_stack(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[AirflowHome]:
    """PostgreSQL with the fleet, and an API server (with tessera, and the GC pressure) that lists up to 5,000 DAGs."""
    source = tmp_path_factory.mktemp("dag-list-dags")
    (source / "dag_list_template.py").write_text(textwrap.dedent(DAGS))
    home = AirflowHome(
        tmp_path_factory.mktemp("airflow-postgres-dag-list"),
        database_url=postgres_server.create_database("tessera_dag_list"),
        dags_source=source,
    )
    pressure = home.root / "gc-pressure"
    pressure.mkdir()
    (pressure / "sitecustomize.py").write_text(textwrap.dedent(GC_PRESSURE))
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__API__MAXIMUM_PAGE_LIMIT="5000",
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        parsed = home.cli("dags", "reserialize", timeout=600)
        assert parsed.returncode == 0, parsed.stderr[-3000:]
        for table in ("dag", "dag_tag"):
            _copy_rows(home, table, FLEET)
        server_env = {
            "PYTHONPATH": f"{pressure}:{home.env['PYTHONPATH']}",
            "PYTHONFAULTHANDLER": "1",  # a crash leaves its stack in api-server.log
        }
        home.start(
            "api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1", env=server_env
        )
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def _list_dags(home: AirflowHome, limit: int) -> dict:
    base = home.env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].replace("/execution/", "")
    with urllib.request.urlopen(f"{base}/auth/token", timeout=60) as answer:
        token = json.loads(answer.read())["access_token"]
    request = urllib.request.Request(f"{base}/api/v2/dags?limit={limit}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def test_the_api_server_lists_3000_tagged_dags_again_and_again(dag_list_stack: AirflowHome) -> None:
    home = dag_list_stack
    for call in range(1, CALLS + 1):
        try:
            listed = _list_dags(home, FLEET)
        except OSError as lost:  # the connection dropped: the server died answering
            log = (home.process_logs / "api-server.log").read_text(errors="replace")
            crash = log[max(0, log.rfind("Fatal Python error")) :][:4000]  # faulthandler's report, if any
            raise AssertionError(f"call {call} of {CALLS}: {lost!r}; the API server's log:\n{crash}") from None
        assert listed["total_entries"] == FLEET + 1, "the fleet and its template"
        assert len(listed["dags"]) == FLEET
        assert {tag["name"] for tag in listed["dags"][0]["tags"]} == {"tessera", "fleet"}
    home.check_alive()


def test_the_fleet_is_tessera_scheduled(dag_list_stack: AirflowHome) -> None:
    """The DAGs are what the crash needed: tessera's timetable, two tags each, all listed by Airflow."""
    listed = _list_dags(dag_list_stack, 1)
    assert listed["total_entries"] == FLEET + 1
    assert listed["dags"][0]["timetable_summary"], listed["dags"][0]
    count = dag_list_stack.query("SELECT count(*) FROM dag_tag")[0][0]
    assert count == 2 * (FLEET + 1)
