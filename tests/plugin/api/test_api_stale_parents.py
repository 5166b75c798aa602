"""The schedule row names its stale AFTER parents (seed 003: "named on the schedule row"), with age and bound.

In-process API app on the real SQLite metadata DB; the parents' completed fires are the
asset events the scheduler-side listener records, written here with chosen timestamps.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from tessera.operators.schedules.identity import asset_uri

from .test_api_app import Api, airflow_api, store_dags

CHILD, FRESH_CHILD, UNCHECKED_CHILD = "sp_gold_fact", "sp_fresh_fact", "sp_unchecked_fact"
DECLARED_FILE = """
from airflow.sdk import DAG, task
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("sp_fresh", interval_seconds=3600),
    Schedule("sp_stale", interval_seconds=3600),
    Schedule("sp_never", interval_seconds=3600),
    Schedule("sp_gold", after=["sp_fresh", "sp_stale", "sp_never"], parent_freshness=2),
    Schedule("sp_fresh_only", after=["sp_fresh"], parent_freshness=2),
    Schedule("sp_unchecked", after=["sp_stale"]),
])
PIPELINES = {{"sp_fresh": "sp_fresh_load", "sp_stale": "sp_stale_load", "sp_never": "sp_never_load",
             "sp_gold": {dag_ids[0]!r}, "sp_fresh_only": {dag_ids[1]!r}, "sp_unchecked": {dag_ids[2]!r}}}
for name, dag_id in PIPELINES.items():
    with DAG(dag_id, start_date=None, **S.dag_kwargs(name)):
        @task
        def work():
            pass
        work()
"""
# Set when the module's fixture writes the fires (not at collection: the whole suite runs in between).
NOW = datetime.datetime.now(datetime.timezone.utc)


def completed_fire(schedule: str, at: datetime.datetime) -> None:
    """A completed fire of ``schedule``: the event the listener records on the schedule's asset."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        asset_id = session.scalar(select(AssetModel.id).where(AssetModel.uri == asset_uri(schedule)))
        session.add(AssetEvent(asset_id=asset_id, timestamp=at, extra={"tessera": {"schedule": schedule}}))


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    global NOW
    NOW = datetime.datetime.now(datetime.timezone.utc)
    folder = tmp_path_factory.mktemp("tessera-stale")
    store_dags(folder, DECLARED_FILE, (CHILD, FRESH_CHILD, UNCHECKED_CHILD))
    completed_fire("sp_fresh", NOW - datetime.timedelta(minutes=30))
    completed_fire("sp_stale", NOW - datetime.timedelta(hours=5))
    completed_fire("sp_stale", NOW - datetime.timedelta(hours=3))
    with airflow_api(folder) as api:
        yield api


def _row(api: Api, dag_id: str) -> dict[str, Any]:
    answer = api.call("GET", f"/tessera/api/v1/dags/{dag_id}/status", user="viewer")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_row_lists_each_stale_parent_with_its_age_and_the_bound(api: Api) -> None:
    stale = _row(api, CHILD)["stale_parents"]
    assert [parent["schedule"] for parent in stale] == ["sp_stale", "sp_never"]
    newest = stale[0]
    assert datetime.datetime.fromisoformat(newest["last_completed"]) == NOW - datetime.timedelta(hours=3)
    assert 3 * 3600 <= newest["age_seconds"] < 3 * 3600 + 600
    assert newest["bound_hours"] == 2
    assert stale[1] == {"schedule": "sp_never", "last_completed": None, "age_seconds": None, "bound_hours": 2}


def test_the_list_of_every_row_carries_it_too(api: Api) -> None:
    answer = api.call("GET", "/tessera/api/v1/status", user="viewer")
    rows = {row["dag_id"]: row for row in answer.json()["dags"]}
    assert [parent["schedule"] for parent in rows[CHILD]["stale_parents"]] == ["sp_stale", "sp_never"]


def test_fresh_parents_and_an_unchecked_window_name_nothing(api: Api) -> None:
    assert _row(api, FRESH_CHILD)["stale_parents"] == []
    assert _row(api, UNCHECKED_CHILD)["stale_parents"] == [], "PARENT_FRESHNESS 0 (unset) turns the check off"
    assert _row(api, "sp_fresh_load")["stale_parents"] == [], "a clock-driven schedule has no parents"
