"""``owed_windows_of_each``: DAGs' owed windows read from their runs in a real metadata database (SQLite)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from tessera import operators
from tessera.operators.coverage import owed_windows_of_each
from tessera.timetables import Every, Fixed

DAG_ID = "coverage_reader_probe"
OTHER = "coverage_reader_other"
T0 = datetime.datetime(2026, 3, 1, 10, tzinfo=datetime.timezone.utc)
MINUTE = datetime.timedelta(minutes=1)


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    """Two DAG rows and a session; their runs are removed after the test."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    DagBundlesManager().sync_bundles_to_db()
    with create_session() as setup:
        for dag_id in (DAG_ID, OTHER):
            setup.merge(DagModel(dag_id=dag_id, bundle_name="dags-folder", is_paused=False, is_stale=False))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        cleanup.execute(delete(DagRun).where(DagRun.dag_id.in_((DAG_ID, OTHER))))
        cleanup.execute(delete(DagModel).where(DagModel.dag_id.in_((DAG_ID, OTHER))))


def _run(session, run_type: str, start: int, end: int, dag_id: str = DAG_ID) -> None:
    from airflow.models.dagrun import DagRun

    window = (T0 + start * MINUTE, T0 + end * MINUTE)
    session.add(
        DagRun(
            dag_id=dag_id,
            run_id=f"{run_type}__{start}_{end}",
            run_type=run_type,
            logical_date=window[0],
            data_interval=window,
            run_after=window[1],
            state="success",
        )
    )
    session.flush()


def owed_windows_of(session, dag_id: str, plan, *, limit: int = 100):
    return owed_windows_of_each(session, {dag_id: plan}, limit=limit)[dag_id]


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


def test_dags_read_together_are_each_answered_as_alone_in_two_queries(session, monkeypatch):
    """Each DAG's newest runs are its own (ranked per DAG), and another DAG's runs fill none of its gaps."""
    from airflow.settings import engine
    from sqlalchemy import event

    plan = Every("1m", phase=Fixed("0s"), dropped="owe").plan
    for start in (0, 1, 4, 5, 8, 9):
        _run(session, "scheduled", start, start + 1)
    for start in (30, 33, 34):
        _run(session, "scheduled", start, start + 1, dag_id=OTHER)
    _run(session, "backfill", 6, 7, dag_id=OTHER)  # a gap of DAG_ID, in its span, but another DAG's run
    _run(session, "backfill", 31, 32, dag_id=OTHER)
    monkeypatch.setattr(operators.coverage, "MAX_RUNS_READ", 4)  # DAG_ID has 6 scheduled runs, OTHER 3
    alone = {dag_id: owed_windows_of(session, dag_id, plan) for dag_id in (DAG_ID, OTHER)}
    statements = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        together = owed_windows_of_each(session, {DAG_ID: plan, OTHER: plan})
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert together == alone
    assert len(statements) == 2
    # DAG_ID's newest 4 runs start at 4, 5, 8, 9: 10:06 and 10:07 owed, cut short (older runs unread)
    assert [run.window_start for run in alone[DAG_ID][0]] == [T0 + 6 * MINUTE, T0 + 7 * MINUTE]
    assert alone[DAG_ID][1]
    # OTHER: 10:31 backfilled, 10:32 owed; all 3 of its runs read
    assert [run.window_start for run in alone[OTHER][0]] == [T0 + 32 * MINUTE]
    assert not alone[OTHER][1]
