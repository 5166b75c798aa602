"""``owed_windows_of``: a DAG's owed windows read from its runs in a real metadata database (SQLite)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from tessera.operators.coverage import owed_windows_of
from tessera.timetables import Every, Fixed

DAG_ID = "coverage_reader_probe"
T0 = datetime.datetime(2026, 3, 1, 10, tzinfo=datetime.timezone.utc)
MINUTE = datetime.timedelta(minutes=1)


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    """A DAG row and a session; its runs are removed after the test."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    DagBundlesManager().sync_bundles_to_db()
    with create_session() as setup:
        setup.merge(DagModel(dag_id=DAG_ID, bundle_name="dags-folder", is_paused=False, is_stale=False))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        cleanup.execute(delete(DagRun).where(DagRun.dag_id == DAG_ID))
        cleanup.execute(delete(DagModel).where(DagModel.dag_id == DAG_ID))


def _run(session, run_type: str, start: int, end: int) -> None:
    from airflow.models.dagrun import DagRun

    window = (T0 + start * MINUTE, T0 + end * MINUTE)
    session.add(
        DagRun(
            dag_id=DAG_ID,
            run_id=f"{run_type}__{start}_{end}",
            run_type=run_type,
            logical_date=window[0],
            data_interval=window,
            run_after=window[1],
            state="success",
        )
    )
    session.flush()


def test_the_gaps_between_scheduled_runs_are_owed_unless_another_run_evaluated_them(session):
    plan = Every("1m", phase=Fixed("0s"), dropped="owe").plan
    for start in (0, 1, 4, 5, 8):  # 10:02, 10:03 dropped; 10:06, 10:07 dropped
        _run(session, "scheduled", start, start + 1)
    _run(session, "backfill", 6, 7)  # 10:06's window backfilled since
    _run(session, "manual", 20, 21)  # outside the span: changes nothing
    owed, truncated = owed_windows_of(session, DAG_ID, plan)
    assert [(run.window_start, run.window_end) for run in owed] == [
        (T0 + 2 * MINUTE, T0 + 3 * MINUTE),
        (T0 + 3 * MINUTE, T0 + 4 * MINUTE),
        (T0 + 7 * MINUTE, T0 + 8 * MINUTE),
    ]
    assert not truncated
    assert owed_windows_of(session, DAG_ID, plan, limit=2) == (owed[:2], True)


def test_a_covering_run_leaves_nothing_owed(session):
    plan = Every("1m", phase=Fixed("0s")).plan
    _run(session, "scheduled", 0, 1)
    _run(session, "scheduled", 1, 5)  # covered 10:02 to 10:04
    assert owed_windows_of(session, DAG_ID, plan) == ([], False)


def test_no_runs_nothing_owed(session):
    assert owed_windows_of(session, DAG_ID, Every("1m").plan) == ([], False)
