"""The refresh decision in-process, on the real metadata DB, with a frozen clock: coalescing window and metrics.

``test_api.py`` drives the same code through a real API server; here time is frozen
with ``time_machine`` to pin the 60-second window to the second, and the metrics
Airflow's ``Stats`` receives are recorded.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import time_machine

from tessera.plugin.actions import metrics
from tests.compat.airflow_names import NoStatsLogger, core_stats, initialize_stats

NOW = datetime.datetime(2026, 3, 2, 12, 3, tzinfo=datetime.timezone.utc)
DAG_FILE = """
from airflow.sdk import DAG, task
from tessera.timetables import Every, Fixed

with DAG({dag_id!r}, schedule=Every("5m", delay="30s", phase=Fixed("2m10s")), start_date=None):
    @task
    def work():
        pass
    work()
"""


class Recorded(NoStatsLogger):
    """Airflow's no-op stats logger, keeping every counter it was asked to increment."""

    counters: ClassVar[list[tuple[str, dict[str, str]]]] = []

    @classmethod
    def incr(cls, stat: str, count: int = 1, rate: int = 1, *, tags: dict[str, str] | None = None) -> None:
        cls.counters.append((stat, tags or {}))


@pytest.fixture
def recorded() -> Iterator[type[Recorded]]:
    stats = core_stats()
    Recorded.counters.clear()
    initialize_stats(stats, Recorded)
    yield Recorded
    initialize_stats(stats, NoStatsLogger)


def _store(tmp_path: Path, dag_id: str) -> None:
    """Parse a DAG file and store it unpaused, as the dag-processor would."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    path = tmp_path / f"{dag_id}.py"
    path.write_text(DAG_FILE.format(dag_id=dag_id))
    DagBundlesManager().sync_bundles_to_db()
    sync_bag_to_db(DagBag(str(path)), "dags-folder", None)
    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = False


def _refresh(dag_id: str) -> Any:
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from airflow.models.dagbag import DBDagBag
    from airflow.utils.types import DagRunTriggeredByType

    from tessera.plugin.actions.refresh import refresh

    user = SimpleAuthManagerUser(username="ops", role="user")
    return refresh(dag_id, user=user, triggered_by=DagRunTriggeredByType.REST_API, dag_bag=DBDagBag())


def _finish(dag_id: str, run_id: str, state: str, at: datetime.datetime) -> None:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import update

    with create_session() as session:
        session.execute(
            update(DagRun)
            .where(DagRun.dag_id == dag_id, DagRun.run_id == run_id)
            .values(state=state, start_date=at - datetime.timedelta(seconds=5), end_date=at)
        )


def _next_scheduled(dag_id: str) -> tuple[Any, ...]:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        model = session.get(DagModel, dag_id)
        return model.next_dagrun, model.next_dagrun_data_interval_end, model.next_dagrun_create_after


@pytest.mark.parametrize(
    ("finished_state", "seconds_later", "expected"),
    [
        pytest.param("success", 30, "coalesced", id="success-30s-ago"),
        pytest.param("success", 59, "coalesced", id="success-59s-ago"),
        pytest.param("success", 60, "started", id="success-60s-ago"),
        pytest.param("failed", 30, "started", id="failure-30s-ago"),
        pytest.param("failed", 1, "started", id="failure-1s-ago"),
    ],
)
def test_the_coalescing_window(tmp_path, airflow_db, finished_state, seconds_later, expected):
    dag_id = f"refresh_window_{finished_state}_{seconds_later}"
    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, dag_id)
        scheduled = _next_scheduled(dag_id)
        first = _refresh(dag_id)
        _finish(dag_id, first.run_id, finished_state, NOW)
    with time_machine.travel(NOW + datetime.timedelta(seconds=seconds_later), tick=False):
        second = _refresh(dag_id)
    assert second.outcome == expected
    assert (second.run_id == first.run_id) == (expected == "coalesced")
    assert _next_scheduled(dag_id) == scheduled, "an on-demand run never moves the next scheduled run"


def test_a_refresh_runs_the_window_of_the_newest_occurrence(tmp_path, airflow_db):
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, "refresh_window_of_run")
        decision = _refresh("refresh_window_of_run")
    with create_session() as session:
        mine = (DagRun.dag_id == "refresh_window_of_run", DagRun.run_id == decision.run_id)
        run = session.scalar(select(DagRun).where(*mine))
        window = (run.data_interval_start, run.data_interval_end)
        assert (run.run_type, run.triggered_by.value, run.triggering_user_name) == ("manual", "rest_api", "ops")
    # At 12:03 the newest occurrence is 12:00; with the 30 s delay its window is 11:54:30 -> 11:59:30.
    noon = NOW.replace(minute=0)
    assert window == (noon - datetime.timedelta(minutes=5, seconds=30), noon - datetime.timedelta(seconds=30))


def test_every_decision_is_counted_in_airflow_stats(tmp_path, airflow_db, recorded):
    dag_id = "refresh_metrics"
    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, dag_id)
        first = _refresh(dag_id)
        _refresh(dag_id)
        _finish(dag_id, first.run_id, "success", NOW)
        _refresh(dag_id)
    tagged = [stat for stat, tags in recorded.counters if tags == {"dag_id": dag_id}]
    assert tagged == [
        metrics.REQUESTED, metrics.OUTCOMES["started"],
        metrics.REQUESTED, metrics.OUTCOMES["joined"],
        metrics.REQUESTED, metrics.OUTCOMES["coalesced"],
    ]  # fmt: skip


def test_a_receipt_shows_only_its_metadata_and_the_version_the_run_executes(tmp_path, airflow_db):
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.plugin.actions.refresh_status import RECEIPT_KEY, refresh_status

    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, "refresh_receipt")
        decision = _refresh("refresh_receipt")
    reported = {"outcome": "No change", "rows": True, "duration_seconds": 2, "changed": False, "rows_data": [[1]]}
    XComModel.set(RECEIPT_KEY, reported, dag_id="refresh_receipt", task_id="work", run_id=decision.run_id)
    with create_session() as session:
        live = refresh_status("refresh_receipt", session).live_run
        mine = (DagRun.dag_id == "refresh_receipt", DagRun.run_id == decision.run_id)
        run = session.scalar(select(DagRun).where(*mine))
        assert live is not None and live.run_id == run.run_id
    (receipt,) = live.receipts
    assert receipt.model_dump() == {
        "task_id": "work",
        "outcome": "No change",
        "rows": None,  # a boolean is not a row count
        "duration_seconds": 2.0,
        "changed": False,
    }
    assert "rows_data" not in live.model_dump_json()
    assert (live.dag_version, live.current_dag_version, live.runs_current_version) == (1, 1, True)
    assert (live.run_type, live.triggered_by, live.triggering_user) == ("manual", "rest_api", "ops")


def _test_run(dag_id: str, *, dry_run: bool, finished: datetime.datetime | None) -> str:
    """A run as ``airflow dags test`` leaves it (triggered by ``test``), or a manual dry run."""
    from airflow.models.dagbag import DBDagBag
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    with create_session() as session:
        dag = DBDagBag().get_latest_version_of_dag(dag_id, session=session)
        started = NOW - datetime.timedelta(seconds=10)
        run = dag.create_dagrun(
            run_id=f"test_{dry_run}",
            logical_date=started,
            data_interval=dag.timetable.infer_manual_data_interval(run_after=started),
            run_after=started,
            conf={"dry_run": True} if dry_run else {},
            run_type=DagRunType.MANUAL,
            triggered_by=DagRunTriggeredByType.UI if dry_run else DagRunTriggeredByType.TEST,
            state=DagRunState.RUNNING,
            session=session,
        )
        run_id = run.run_id
    if finished is not None:
        _finish(dag_id, run_id, "success", finished)
    return run_id


@pytest.mark.parametrize("dry_run", [False, True], ids=["dags-test", "dry-run-conf"])
def test_a_test_run_that_just_succeeded_is_not_a_refresh(tmp_path, airflow_db, dry_run):
    dag_id = f"refresh_after_test_{dry_run}"
    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, dag_id)
        tested = _test_run(dag_id, dry_run=dry_run, finished=NOW - datetime.timedelta(seconds=5))
        decision = _refresh(dag_id)
    assert decision.outcome == "started", "a test run moved no cursor and refreshed no data"
    assert decision.run_id != tested


@pytest.mark.parametrize("dry_run", [False, True], ids=["dags-test", "dry-run-conf"])
def test_a_test_run_in_flight_is_not_joined(tmp_path, airflow_db, dry_run):
    dag_id = f"refresh_beside_test_{dry_run}"
    with time_machine.travel(NOW, tick=False):
        _store(tmp_path, dag_id)
        tested = _test_run(dag_id, dry_run=dry_run, finished=None)
        decision = _refresh(dag_id)
    assert decision.outcome == "started"
    assert decision.run_id != tested
