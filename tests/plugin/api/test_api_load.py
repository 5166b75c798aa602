"""The Schedules page's other reads, through the app mounted in Airflow's API app on the real SQLite DB.

``/load`` counts every DAG (Airflow's own cron beside tessera's), ``/triggers`` says what an
asset-driven DAG runs after, ``/dags/{id}/backfill-preview`` is Airflow's own dry run with windows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .test_api_app import DAG_FILE, Api, airflow_api, store_dags

TESSERA = ("load_tessera",)
CRON_FILE = """
import datetime
from airflow.sdk import DAG

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule="0 * * * *", start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
        pass
"""
CRON = ("load_cron_a", "load_cron_b")
AFTER_FILE = """
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([
    Schedule("apc_daily", interval_seconds=86400),
    Schedule("norled_daily", interval_seconds=86400),
    Schedule("fan_in", after=["apc_daily", "norled_daily"]),
])
with DAG({dag_ids[0]!r}, start_date=None, **SCHEDULES.dag_kwargs("fan_in")):
    pass
"""
AFTER = ("load_fan_in",)


def _delete_every_dag() -> None:
    from airflow.api.common.delete_dag import delete_dag
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        dag_ids = list(session.scalars(select(DagModel.dag_id)))
    for dag_id in dag_ids:
        delete_dag(dag_id, keep_records_in_log=False)


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    # The load counts every DAG in the database: earlier modules' DAGs (the DB is shared by the
    # session) would add their runs and spikes, so this module starts from a fleet of its own.
    _delete_every_dag()
    folder = tmp_path_factory.mktemp("tessera-load")
    store_dags(folder, DAG_FILE, TESSERA)
    store_dags(folder, CRON_FILE, CRON)
    store_dags(folder, AFTER_FILE, AFTER)
    with airflow_api(folder) as api:
        yield api


def test_the_load_counts_airflow_cron_and_tessera_dags_and_names_the_herd(api):
    answer = api.call("GET", "/tessera/api/v1/load", user="viewer")
    assert answer.status_code == 200, answer.text
    load = answer.json()
    runs = {d["dag_id"]: (d["runs"], d["source"]) for d in load["dags"]}
    assert runs["load_cron_a"] == (24, "timetable") and runs["load_cron_b"] == (24, "timetable")
    assert runs["load_tessera"] == (288, "tessera")
    assert runs["load_fan_in"] == (0, "timetable")  # asset-driven: no clock-driven starts
    assert len(load["counts"]) == 1440 and sum(load["counts"]) == load["total_runs"]
    on_the_hour = [s for s in load["spikes"] if s["minute"].endswith(":00:00Z")]
    assert on_the_hour and {"load_cron_a", "load_cron_b"} <= set(on_the_hour[0]["dag_ids"])
    assert load["peak_to_mean"] == round(load["peak"] / (load["total_runs"] / 1440), 2)


def test_the_load_needs_a_signed_in_user(api):
    assert api.call("GET", "/tessera/api/v1/load", user=None).status_code == 401


def test_an_after_dag_is_described_by_its_parents(api):
    answer = api.call("GET", "/tessera/api/v1/triggers", user="viewer")
    assert answer.status_code == 200, answer.text
    (trigger,) = [d for d in answer.json()["dags"] if d["dag_id"] == "load_fan_in"]
    assert trigger["text"] == "after apc_daily and norled_daily"
    assert trigger["parents"] == ["apc_daily", "norled_daily"]


def test_the_backfill_preview_is_airflows_dry_run_with_windows(api):
    query = {"from_date": "2026-01-01T00:00:00Z", "to_date": "2026-01-01T00:29:59Z"}
    answer = api.call("GET", "/tessera/api/v1/dags/load_tessera/backfill-preview", user="viewer", params=query)
    assert answer.status_code == 200, answer.text
    runs = answer.json()["runs"]
    assert len(runs) == 6
    assert (runs[0]["logical_date"], runs[0]["window_end"], runs[0]["run_after"]) == (
        "2025-12-31T23:59:30Z",
        "2026-01-01T00:04:30Z",
        "2026-01-01T00:07:10Z",
    )


@pytest.mark.parametrize(
    ("query", "code"),
    [
        pytest.param({"from_date": "2026-01-02T00:00:00Z", "to_date": "2026-01-01T00:00:00Z"}, 400, id="backwards"),
        pytest.param({"from_date": "2999-01-01T00:00:00Z", "to_date": "2999-01-02T00:00:00Z"}, 400, id="future"),
        pytest.param({"from_date": "2026-01-01T00:00:00", "to_date": "2026-01-02T00:00:00Z"}, 422, id="naive"),
        pytest.param({"from_date": "2026-01-01T00:00:00Z"}, 422, id="no-to"),
    ],
)
def test_a_range_backfill_refuses_is_refused_with_its_reason(api, query, code):
    answer = api.call("GET", "/tessera/api/v1/dags/load_tessera/backfill-preview", user="viewer", params=query)
    assert answer.status_code == code, answer.text


def test_the_preview_of_an_unknown_dag_is_404(api):
    query = {"from_date": "2026-01-01T00:00:00Z", "to_date": "2026-01-01T01:00:00Z"}
    answer = api.call("GET", "/tessera/api/v1/dags/no_such_dag/backfill-preview", user="admin", params=query)
    assert answer.status_code == 404, answer.text


def test_a_paused_dag_is_left_out_unless_asked_for(api):
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        session.get(DagModel, "load_cron_b").is_paused = True
    try:
        active = api.call("GET", "/tessera/api/v1/load", user="viewer").json()
        every = api.call("GET", "/tessera/api/v1/load", user="viewer", params={"include_paused": "true"}).json()
    finally:
        with create_session() as session:
            session.get(DagModel, "load_cron_b").is_paused = False
    assert "load_cron_b" not in {d["dag_id"] for d in active["dags"]} and active["paused_left_out"] >= 1
    assert "load_cron_b" in {d["dag_id"] for d in every["dags"]} and every["paused_left_out"] == 0
    assert every["total_runs"] == active["total_runs"] + 24
