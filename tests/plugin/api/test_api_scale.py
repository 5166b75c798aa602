"""The page's data calls answer for N DAGs in a constant number of SQL queries, whatever N.

Counted on the real SQLite metadata DB with a ``before_cursor_execute`` listener on
Airflow's engine, over whole requests through the tessera app mounted in Airflow's API
app, for 5 DAGs and again after 45 more were stored (mixed cadences: ``Every``, calendar,
``Cron``, declared schedules and Airflow's built-in cron, each with a run history).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from .test_api_app import Api, airflow_api, store_dags

KINDS = (
    'Every("5m", delay="30s")',
    'Every.day(at="07:00", timezone="Europe/Amsterdam")',
    'Every.month(on=31, at="06:00", timezone="UTC")',
    'Cron("0 6 * * *", timezone="Europe/London")',
    "declared",
    '"0 * * * *"',
)
FLEET_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Cron, Every

KINDS = KINDS_LITERAL
DAG_IDS = {dag_ids!r}
def kind_of(dag_id):
    return KINDS[int(dag_id.rsplit("_", 1)[1]) % len(KINDS)]
SCHEDULES = ScheduleSet([Schedule(d, interval_seconds=3600) for d in DAG_IDS if kind_of(d) == "declared"])
for dag_id in DAG_IDS:
    kind = kind_of(dag_id)
    kwargs = SCHEDULES.dag_kwargs(dag_id) if kind == "declared" else {{"schedule": eval(kind)}}
    with DAG(dag_id, start_date=None, **kwargs) as dag:
        EmptyOperator(task_id="work")
    if kind == "declared":
        SCHEDULES.apply(dag)
""".replace("KINDS_LITERAL", repr(KINDS))

UNTIL = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
PAGE_CALLS = {
    "plan?count=1": "/tessera/api/v1/plan?count=1",
    "plan?count=400&until": f"/tessera/api/v1/plan?count=400&until={UNTIL}",
    "status": "/tessera/api/v1/status",
}


def add_runs(dag_ids: list[str]) -> None:
    """Three runs per DAG: two scheduled (one failed, one succeeded) and a manual one still running."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType

    base = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
    hour = datetime.timedelta(hours=1)
    with create_session() as session:
        for dag_id in dag_ids:
            for k, state in enumerate((DagRunState.FAILED, DagRunState.SUCCESS)):
                start = base + k * hour
                run = DagRun(
                    dag_id,
                    f"scheduled__{k}",
                    logical_date=start,
                    run_after=start + hour,
                    run_type=DagRunType.SCHEDULED,
                    state=state,
                    data_interval=(start, start + hour),
                    start_date=start + hour,
                )
                run.end_date = start + hour + datetime.timedelta(minutes=1)
                session.add(run)
            session.add(DagRun(dag_id, "manual__1", run_after=base + 3 * hour, run_type=DagRunType.MANUAL))


def count_queries(api: Api, path: str) -> tuple[int, Any]:
    from airflow.settings import engine
    from sqlalchemy import event

    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        answer = api.call("GET", path, user="viewer")
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert answer.status_code == 200, answer.text
    return len(statements), answer.json()


@pytest.fixture(scope="module")
def fleet(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Any]]:
    """The app, and ``grow(prefix, first, count)``, which stores DAGs ``<prefix>_<first>`` onwards with their runs.

    Each test grows a fleet of its own prefix: what it counts does not depend on which test ran first.
    """
    folder = tmp_path_factory.mktemp("tessera-scale")

    def grow(prefix: str, first: int, count: int) -> list[str]:
        dag_ids = [f"{prefix}_{n:03d}" for n in range(first, first + count)]
        store_dags(folder, FLEET_FILE, tuple(dag_ids))
        add_runs(dag_ids)
        return dag_ids

    with airflow_api(folder) as api:
        yield api, grow


def queries_per_call(api: Api, expected_rows: int) -> dict[str, tuple[int, int]]:
    """(cold, warm) statements of each page call: the first call after DAGs were stored, then a reload."""
    counts = {}
    for name, path in PAGE_CALLS.items():
        cold, body = count_queries(api, path)
        warm, _ = count_queries(api, path)
        rows = [row for row in body["dags"] if row["dag_id"].startswith("scale_")]
        assert len(rows) == expected_rows, (name, sorted(row["dag_id"] for row in rows))
        assert all(row["error"] is None for row in rows), [row["error"] for row in rows if row["error"]]
        counts[name] = (cold, warm)
    return counts


def test_the_page_calls_cost_the_same_queries_for_5_and_for_50_dags(fleet):
    api, grow = fleet

    def on_page(dags: int) -> int:  # every kind but the built-in cron is a tessera DAG the page shows
        return sum(1 for n in range(dags) if KINDS[n % len(KINDS)] != '"0 * * * *"')

    grow("scale", 0, 5)
    small = queries_per_call(api, expected_rows=on_page(5))
    grow("scale", 5, 45)
    large = queries_per_call(api, expected_rows=on_page(50))
    assert large == small
    assert all(warm <= 12 for _, warm in small.values()), small


def test_the_status_rows_read_the_runs_the_grouped_queries_found(fleet):
    api, grow = fleet
    grow("status", 0, 5)
    _, body = count_queries(api, "/tessera/api/v1/status")
    rows = {row["dag_id"]: row for row in body["dags"] if row["dag_id"].startswith("status_")}
    assert len(rows) == 5, sorted(rows)  # kinds 0-4: all tessera DAGs
    for row in rows.values():
        assert row["last_fire"]["run_id"] == "scheduled__1"
        assert row["last_run"]["run_id"] == "manual__1"
        assert row["last_outcome"] == "success"
        assert row["consecutive_failures"] == 0
