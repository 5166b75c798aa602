"""Skips that have no run of their own are recorded: ticks passed over after downtime or a pause, a paused run-now.

Runs are created in the metadata DB as the scheduler (a scheduled tick) or the REST
API (a run-now) creates them, started by the scheduler's own ``_start_queued_dagruns``
with tessera's listener registered; pauses go through Airflow's own CLI command, which
writes its audit log as ``airflow dags pause`` does.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
import time_machine

from tessera.operators.functions.status import function_status

from ..conftest import fire_record, task_instance
from .test_cursor_admission import _scheduler_starts_queued_runs, admission  # noqa: F401 - admission is a fixture

EVERY_5M = 'Cron("*/5 * * * *")'


def _create_run(dag_id: str, *, run_type: str, after: datetime.datetime | None = None, state: str = "queued") -> Any:
    """A run as the scheduler (``scheduled``: the first tick after ``after``) or the REST API (``manual``) makes it."""
    from airflow._shared.timezones.timezone import utcnow
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    with create_session() as session:
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        kind = DagRunType(run_type)
        if kind == DagRunType.SCHEDULED:
            (tick,) = dag.timetable.plan.upcoming(after=after, count=1)
            run_after, start, end = tick.run_after, tick.window_start, tick.window_end
            logical, triggered_by = start, DagRunTriggeredByType.TIMETABLE
        else:
            run_after = utcnow() - datetime.timedelta(seconds=1)
            interval = dag.timetable.infer_manual_data_interval(run_after=run_after)
            start, end, triggered_by = interval.start, interval.end, DagRunTriggeredByType.REST_API
            logical = run_after  # as the REST API sets it: one run-now per instant
        run = dag.create_dagrun(
            run_id=dag.timetable.generate_run_id(run_type=kind, run_after=run_after, data_interval=None),
            logical_date=logical,
            data_interval=(start, end),
            run_after=run_after,
            run_type=kind,
            triggered_by=triggered_by,
            state=DagRunState(state),
            session=session,
        )
        return run.run_id, run_after


def _airflow_dags(command: str, dag_id: str) -> None:
    """``airflow dags pause|unpause <dag_id>``, in this process: Airflow's command, audit log included."""
    from airflow.cli import cli_parser

    args = cli_parser.get_parser().parse_args(["dags", command, dag_id])
    args.func(args)


def _events(dag_id: str, event: str) -> list[dict[str, Any]]:
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.scalars(select(Log.extra).where(Log.dag_id == dag_id, Log.event == event).order_by(Log.id))
        return [json.loads(extra) for extra in rows]


def _set_paused(dag_id: str, paused: bool) -> None:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = paused


@pytest.mark.usefixtures("admission")
def test_ticks_passed_over_after_downtime_are_recorded_as_missed_deadline(cursor_dags) -> None:
    from airflow._shared.timezones.timezone import utcnow

    dag_id = "cursor_t_downtime"
    cursor_dags.add(dag_id, schedule=EVERY_5M)
    _set_paused(dag_id, False)
    now = utcnow()
    # The last tick before the scheduler went down, an hour ago; then the one it resumed with.
    before, _ = _create_run(dag_id, run_type="scheduled", after=now - datetime.timedelta(minutes=65), state="success")
    resumed, resumed_at = _create_run(dag_id, run_type="scheduled", after=now - datetime.timedelta(minutes=5))
    _scheduler_starts_queued_runs()

    assert task_instance(dag_id, resumed).state is None  # the resumed tick itself fires
    (event,) = _events(dag_id, "tessera.skip.passed_over")
    assert (event["reason"], event["count"], event["at_least"]) == ("MissedDeadline", 11, False)
    last_missed = resumed_at - datetime.timedelta(minutes=5)
    assert event["last"] == last_missed.isoformat()
    status = function_status(dag_id)
    assert (status.last_skip_reason, status.last_skip_time) == ("MissedDeadline", last_missed)
    assert status.last_schedule_time == resumed_at  # the resumed tick is newer than every skipped one
    assert (status.last_outcome, status.consecutive_failures) == (None, 0)  # a skip is not a fire


@pytest.mark.usefixtures("admission")
def test_ticks_slept_through_while_paused_are_suspended_and_the_rest_missed(cursor_dags) -> None:
    from airflow._shared.timezones.timezone import utcnow

    dag_id = "cursor_t_slept"
    cursor_dags.add(dag_id, schedule=EVERY_5M)
    _set_paused(dag_id, False)
    now = utcnow()
    _, last_at = _create_run(dag_id, run_type="scheduled", after=now - datetime.timedelta(minutes=35), state="success")
    # Paused just after that run, unpaused 12 minutes later; then the scheduler was late by 2 ticks.
    with time_machine.travel(last_at + datetime.timedelta(seconds=30), tick=False):
        _airflow_dags("pause", dag_id)
    with time_machine.travel(last_at + datetime.timedelta(minutes=12), tick=False):
        _airflow_dags("unpause", dag_id)
    resumed, resumed_at = _create_run(dag_id, run_type="scheduled", after=last_at + datetime.timedelta(minutes=20))
    _scheduler_starts_queued_runs()

    suspended, missed = _events(dag_id, "tessera.skip.passed_over")
    assert (suspended["reason"], suspended["count"]) == ("Suspended", 2)  # +5m, +10m
    assert (missed["reason"], missed["count"]) == ("MissedDeadline", 2)  # +15m, +20m
    status = function_status(dag_id)
    assert (status.last_skip_reason, status.last_skip_time) == (
        "MissedDeadline",
        resumed_at - datetime.timedelta(minutes=5),
    )


@pytest.mark.usefixtures("admission")
def test_a_run_now_requested_while_paused_is_skipped_as_suspended_when_unpaused(cursor_dags) -> None:
    dag_id = "cursor_t_run_now_paused"
    cursor_dags.add(dag_id)
    _set_paused(dag_id, False)
    _airflow_dags("pause", dag_id)
    asked_while_paused, _ = _create_run(dag_id, run_type="manual")
    _airflow_dags("unpause", dag_id)
    asked_after, _ = _create_run(dag_id, run_type="manual")
    _scheduler_starts_queued_runs()

    assert task_instance(dag_id, asked_while_paused).state == "skipped"
    assert fire_record(dag_id, asked_while_paused)["reason"] == "Suspended"
    assert task_instance(dag_id, asked_after).state is None  # asked while running: it fires
    (event,) = _events(dag_id, "tessera.skip")
    assert event["reason"] == "Suspended" and "paused" in event["message"]
    assert function_status(dag_id).last_skip_reason == "Suspended"
    assert cursor_dags.calls(dag_id) == []


@pytest.mark.usefixtures("admission")
def test_a_run_now_of_a_dag_paused_at_creation_is_skipped_as_suspended(cursor_dags) -> None:
    dag_id = "cursor_t_run_now_created_paused"
    cursor_dags.add(dag_id)
    _set_paused(dag_id, True)  # as is_paused_upon_creation leaves it: no audit-log entry
    asked, _ = _create_run(dag_id, run_type="manual")
    _airflow_dags("unpause", dag_id)
    _scheduler_starts_queued_runs()
    assert (task_instance(dag_id, asked).state, fire_record(dag_id, asked)["reason"]) == ("skipped", "Suspended")


def test_a_gap_longer_than_the_bound_is_counted_as_at_least_the_bound(cursor_dags) -> None:
    """Ten days of a one-minute cron: 14399 ticks passed over, enumerated only up to the bound."""
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.operators.functions.missed_ticks import MAX_COUNTED, missed_ticks

    dag_id = "cursor_t_long_gap"
    cursor_dags.add(dag_id, schedule='Cron("* * * * *")')
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    _create_run(dag_id, run_type="scheduled", after=start, state="success")
    # Never started by a scheduler here (later tests' loops must not admit it): asked directly.
    resumed, resumed_at = _create_run(
        dag_id, run_type="scheduled", after=start + datetime.timedelta(days=10), state="success"
    )
    with create_session() as session:
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        run = session.scalar(select(DagRun).where(DagRun.run_id == resumed))
        (event,) = missed_ticks(session, dag, run)
    assert (event.reason, event.count, event.at_least) == ("MissedDeadline", MAX_COUNTED + 1, True)
    assert event.first == start + datetime.timedelta(minutes=2)
    assert event.last == resumed_at - datetime.timedelta(minutes=1)  # exact, though not enumerated
