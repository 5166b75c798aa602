"""Pause after N failed runs in a row: the one count of consecutive failures, and the pause on the real metadata DB."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.operators.backoff import consecutive_failures
from tessera.timetables import Every

DAG_ID = "failure_pause_probe"
T0 = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2)
"""Runs 1, 2, … end a minute apart from two days ago; runs 10_000 and up end after any pause made now."""


@given(
    states=st.lists(st.sampled_from(["failed", "success", "running", "skipped", None]), max_size=40),
    enough=st.integers(1, 50),
)
def test_consecutive_failures_counts_back_to_the_last_success(states, enough):
    expected = 0
    for state in states:  # the reference: a plain walk, newest first
        if state == "success" or expected >= enough:
            break
        expected += state == "failed"
    assert consecutive_failures(((s, 1) for s in states), enough=enough) == expected


def test_a_tasks_tries_add_up():
    assert consecutive_failures([("failed", 3), ("running", 0), ("failed", 2), ("success", 1)], enough=10) == 5


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    """A DAG row (unpaused) and a session; its runs and audit entries are removed after the test."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    DagBundlesManager().sync_bundles_to_db()
    with create_session() as setup:
        setup.merge(DagModel(dag_id=DAG_ID, bundle_name="dags-folder", is_paused=False, is_stale=False))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        for model in (DagRun, Log):
            cleanup.execute(delete(model).where(model.dag_id == DAG_ID))
        cleanup.execute(delete(DagModel).where(DagModel.dag_id == DAG_ID))


def _run(session, n: int, state: str, *, run_type: str = "scheduled", limit: int = 2):
    from airflow.models.dagrun import DagRun

    run = DagRun(dag_id=DAG_ID, run_id=f"{run_type}__{n}", run_type=run_type, state=state)
    run.end_date = T0 + datetime.timedelta(minutes=n)
    run.dag = SimpleNamespace(timetable=Every("5m", pause_after_failures=limit), default_args={})
    session.add(run)
    session.flush()
    return run


def _paused(session) -> bool:
    from airflow.models.dag import DagModel
    from sqlalchemy import select

    return bool(session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == DAG_ID)))


def _pause_entries(session) -> list[dict]:
    from airflow.models.log import Log
    from sqlalchemy import select

    session.flush()  # Airflow's sessions do not autoflush
    extras = session.scalars(select(Log.extra).where(Log.dag_id == DAG_ID, Log.event == "tessera.dag.pause"))
    return [json.loads(extra) for extra in extras]


def test_the_second_failure_in_a_row_pauses_with_a_recorded_reason(session):
    from tessera.operators.pauses.after_failures import pause_if_failing

    _run(session, 1, "failed")
    _run(session, 2, "success")
    first = _run(session, 3, "failed")
    assert pause_if_failing(first, session) is False, "a success stood between the two failures"
    _run(session, 4, "failed", run_type="backfill")  # a backfill's failure does not count
    second = _run(session, 5, "failed")
    assert pause_if_failing(second, session) is True
    assert _paused(session)
    (entry,) = _pause_entries(session)
    assert entry == {
        "is_paused": True,
        "note": "Paused by tessera: 2 runs failed in a row (pause_after_failures 2), the newest scheduled__5; "
        "unpause the DAG once the cause is fixed (it then gets 2 more tries).",
        "reason": "pause_after_failures",
        "failed_runs": ["scheduled__5", "scheduled__3"],
    }
    assert second.note == "Paused: the DAG is paused after 2 failed runs in a row (pause_after_failures 2)."


def test_unpausing_gives_n_more_tries_and_a_replaced_run_is_not_a_failure(session):
    from airflow.models.log import Log

    from tessera.operators.pauses.after_failures import pause_if_failing
    from tessera.operators.pauses.notes import set_paused

    for n in (1, 2):
        _run(session, n, "failed")
    assert pause_if_failing(_run(session, 3, "failed"), session) is True
    set_paused(session, DAG_ID, paused=False, note="fixed", by="ops")
    session.flush()
    replaced = _run(session, 10_000, "failed")  # ends after the pause; cancel_other replaced it
    session.add(Log("tessera.schedule.replaced", dag_id=DAG_ID, run_id=replaced.run_id, extra="{}"))
    assert pause_if_failing(_run(session, 10_001, "failed"), session) is False, "one failure since the unpause"
    assert not _paused(session)
    assert pause_if_failing(_run(session, 10_002, "failed"), session) is True
    assert len(_pause_entries(session)) == 2


def test_without_the_option_nothing_pauses(session):
    from tessera.operators.pauses.after_failures import pause_if_failing

    for n in range(1, 5):
        run = _run(session, n, "failed")
        run.dag = SimpleNamespace(timetable=Every("5m"), default_args={})
        assert pause_if_failing(run, session) is False
    assert not _paused(session) and _pause_entries(session) == []
