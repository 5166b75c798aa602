"""Admission on the real scheduler code path: Forbid skips a tick during a fire; the cap skips only ticks.

A fire runs in its own process (a worker) and waits; meanwhile runs are queued in
the metadata DB and started by the scheduler's own ``_start_queued_dagruns``, with
tessera's listener registered in Airflow's listener manager exactly as the
plugin registers it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from tessera.operators.functions.status import function_status

from ..conftest import fire_record, stored_cursor, task_instance


@pytest.fixture
def admission() -> Iterator[None]:
    from airflow.listeners.listener import get_listener_manager

    from tessera.plugin import listener

    manager = get_listener_manager()
    registered = manager.pm.is_registered(listener)  # the plugin's entry point may have done it
    manager.add_listener(listener)
    yield
    if not registered:
        manager.pm.unregister(listener)


@pytest.fixture
def cap_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """``[tessera] max_concurrent_dispatches = 1``, set the way a deployment's environment would."""
    monkeypatch.setenv("AIRFLOW__TESSERA__MAX_CONCURRENT_DISPATCHES", "1")


def _queue_run(
    dag_id: str, run_type: str, *, late: datetime.timedelta | None = None, conf: dict[str, Any] | None = None
) -> str:
    """Queue a run the way the scheduler (scheduled) or the REST API (manual) creates one.

    ``late``: a scheduled run for the tick that far in the past (created in time, started late).
    ``conf``: the run's conf (a run-now's).
    """
    from airflow._shared.timezones.timezone import utcnow
    from airflow.models.dag import DagModel
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.timetables.base import TimeRestriction
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = False
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        kind = DagRunType(run_type)
        if kind == DagRunType.SCHEDULED:
            restriction = TimeRestriction(earliest=None, latest=None, catchup=False)
            info = dag.timetable.next_dagrun_info_v2(last_dagrun_info=None, restriction=restriction)
            run_after, interval, logical = info.run_after, info.data_interval, info.logical_date
            if late is not None:
                run_after = utcnow() - late
                interval = dag.timetable.infer_manual_data_interval(run_after=run_after)
                logical = run_after
            triggered_by = DagRunTriggeredByType.TIMETABLE
        else:
            # A second ago: the scheduler compares run_after with the DB clock, to the second on SQLite.
            run_after = utcnow() - datetime.timedelta(seconds=1)
            interval = dag.timetable.infer_manual_data_interval(run_after=run_after)
            logical, triggered_by = run_after, DagRunTriggeredByType.REST_API
        run = dag.create_dagrun(
            run_id=dag.timetable.generate_run_id(run_type=kind, run_after=run_after, data_interval=interval),
            logical_date=logical,
            data_interval=(interval.start, interval.end),
            run_after=run_after,
            run_type=kind,
            triggered_by=triggered_by,
            state=DagRunState.QUEUED,
            conf=conf,
            session=session,
        )
        return run.run_id


def _scheduler_starts_queued_runs() -> None:
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit

    runner = SchedulerJobRunner(job=Job())
    # A real scheduler examines 20 queued runs a loop and keeps looping; this one loop must reach the
    # test's runs past any queued runs other test modules left in the shared DB.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DagRun, "DEFAULT_DAGRUNS_TO_EXAMINE", 100_000)
        with create_session() as session, prohibit_commit(session) as guard:
            # As in the scheduler loop: under its commit guard, committed only through it.
            runner._start_queued_dagruns(session)
            guard.commit()


def _skip_reason(dag_id: str, run_id: str) -> Any:
    record = fire_record(dag_id, run_id)
    return task_instance(dag_id, run_id).state, None if record is None else record["reason"]


def test_forbid_skips_ticks_during_a_fire_and_the_cap_skips_only_scheduled_ticks(cursor_dags, admission, cap_of_one):
    from airflow.models.pool import Pool

    busy, other = "cursor_t_forbid", "cursor_t_capped"
    dag = cursor_dags.add(busy)
    cursor_dags.add(other, extra='concurrency="Allow",')
    cursor_dags.behave(busy, mode="wait", seconds=300)
    process = cursor_dags.start_fire(busy)
    try:
        cursor_dags.wait_started(busy, process)
        tick = _queue_run(busy, "scheduled")
        run_now = _queue_run(busy, "manual")
        other_run_now = _queue_run(other, "manual")
        other_tick = _queue_run(other, "scheduled")
        _scheduler_starts_queued_runs()

        assert _skip_reason(busy, tick) == ("skipped", "ConcurrencyForbidden")
        assert _skip_reason(busy, run_now) == ("skipped", "ConcurrencyForbidden")  # run-now obeys the policy
        assert _skip_reason(other, other_tick) == ("skipped", "DispatchCapReached")
        assert _skip_reason(other, other_run_now) == (None, None)  # admitted: it waits for a pool slot
        assert Pool.get_pool("tessera_dispatch").slots == 1

        status = function_status(busy)
        assert status.last_skip_reason == "ConcurrencyForbidden"
        assert status.last_schedule_time == task_instance(busy, tick).dag_run.run_after
        assert len(status.in_flight) == 1 and status.consecutive_failures == 0
        assert function_status(other).last_skip_reason == "DispatchCapReached"
    finally:
        cursor_dags.release(busy)
        process.wait(timeout=300)

    assert len(cursor_dags.calls(busy)) == 1  # no second fire
    assert stored_cursor(f"{busy}-state") == {"n": 1}
    status = function_status(busy)
    assert (status.last_outcome, status.last_skip_reason, status.consecutive_failures) == (
        "Succeeded",
        "ConcurrencyForbidden",
        0,
    )
    cursor_dags.behave(busy, mode="ok")
    assert cursor_dags.fire(dag).state == "success"  # with nothing in flight, a fire goes ahead


def test_the_dispatch_pool_is_created_once_when_one_transaction_asks_twice(airflow_db):
    """A fresh deployment has no dispatch pool; two admissions in one scheduler loop both ask for it."""
    from airflow.models.pool import Pool
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from sqlalchemy import delete, select, update

    from tessera.operators.functions.admission import ensure_dispatch_pool

    with create_session() as session:  # as freshly migrated: only Airflow's default_pool
        session.execute(delete(Pool).where(Pool.pool == "tessera_dispatch"))
    with create_session() as session, prohibit_commit(session) as guard:
        # The scheduler's session: no autoflush, no savepoint, committed once through its guard.
        ensure_dispatch_pool(session)
        ensure_dispatch_pool(session)
        guard.commit()
    with create_session() as session:
        session.execute(update(Pool).where(Pool.pool == "tessera_dispatch").values(slots=3))
    with create_session() as session, prohibit_commit(session) as guard:
        ensure_dispatch_pool(session)  # resized back to the configured cap
        ensure_dispatch_pool(session)
        guard.commit()
    with create_session() as session:
        pools = session.scalars(select(Pool).where(Pool.pool == "tessera_dispatch")).all()
        assert [(pool.slots, pool.include_deferred) for pool in pools] == [(10, True)]


def test_a_dry_run_as_the_first_run_of_a_fresh_deployment_gets_the_dispatch_pool(cursor_dags, admission):
    """Never declined, but its fire still waits for a slot: without the pool it would wait forever."""
    from airflow.models.pool import Pool
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    dag_id = "cursor_t_first_dry_run"
    cursor_dags.add(dag_id)
    with create_session() as session:  # as freshly migrated: only Airflow's default_pool
        session.execute(delete(Pool).where(Pool.pool == "tessera_dispatch"))
    dry_run = _queue_run(dag_id, "manual", conf={"dry_run": True})
    _scheduler_starts_queued_runs()
    assert _skip_reason(dag_id, dry_run) == (None, None)
    assert Pool.get_pool("tessera_dispatch").slots == 10


def test_forbid_admits_one_of_several_ticks_started_in_the_same_scheduler_loop(cursor_dags, admission):
    """After a scheduler restart, queued ticks of one function start together: only the oldest may fire."""
    dag_id = "cursor_t_forbid_burst"
    cursor_dags.add(dag_id)
    ticks = [_queue_run(dag_id, "scheduled", late=datetime.timedelta(minutes=m)) for m in (3, 2, 1)]
    _scheduler_starts_queued_runs()  # one loop, one transaction: all three go from queued to running
    assert [_skip_reason(dag_id, tick) for tick in ticks] == [
        (None, None),
        ("skipped", "ConcurrencyForbidden"),
        ("skipped", "ConcurrencyForbidden"),
    ]


def test_a_tick_that_starts_later_than_its_starting_deadline_is_skipped(cursor_dags, admission):
    dag_id = "cursor_t_deadline"
    cursor_dags.add(dag_id, schedule='Cron("@hourly", starting_deadline="10m")')
    stale = _queue_run(dag_id, "scheduled", late=datetime.timedelta(minutes=30))
    _scheduler_starts_queued_runs()
    assert _skip_reason(dag_id, stale) == ("skipped", "MissedDeadline")
    fresh = _queue_run(dag_id, "scheduled", late=datetime.timedelta(minutes=3))
    _scheduler_starts_queued_runs()
    assert _skip_reason(dag_id, fresh) == (None, None)
    status = function_status(dag_id)
    assert (status.last_skip_reason, status.last_outcome, status.consecutive_failures) == ("MissedDeadline", None, 0)


def test_a_paused_function_reports_its_ticks_as_suspended(cursor_dags):
    from airflow._shared.timezones.timezone import utcnow
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    dag_id = "cursor_t_paused"
    cursor_dags.fire(cursor_dags.add(dag_id))
    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = True
    status = function_status(dag_id)
    assert (status.paused, status.last_skip_reason, status.last_outcome) == (True, "Suspended", "Succeeded")
    hour = utcnow().replace(minute=0, second=0, microsecond=0)
    # Every("1h") with its default phase: the newest tick due is within the last hour and a bit.
    assert hour - datetime.timedelta(hours=1) <= status.last_skip_time <= utcnow()
    assert status.last_schedule_time == status.last_skip_time  # a declined tick is still a handled one
    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = False
    assert function_status(dag_id).last_skip_reason is None


def test_an_unstarted_fire_of_a_paused_function_does_not_hold_the_cap(cursor_dags, admission, cap_of_one):
    # Found by the Celery tier: functions paused mid-fire left their admitted, never-scheduled
    # task instances in running runs, which the scheduler no longer looks at; counted as in
    # flight, they held the whole cap and every other function's ticks were skipped for good.
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import update

    with create_session() as session:  # the earlier tests' runs still in flight would hold the cap of one
        session.execute(update(DagRun).where(DagRun.state == "running").values(state="failed"))
    parked, other = "cursor_t_parked", "cursor_t_other"
    cursor_dags.add(parked)
    cursor_dags.add(other)
    waiting = _queue_run(parked, "scheduled")
    _scheduler_starts_queued_runs()
    assert _skip_reason(parked, waiting) == (None, None)  # admitted; its task not scheduled yet
    with create_session() as session:
        session.get(DagModel, parked).is_paused = True
    tick = _queue_run(other, "scheduled")
    _scheduler_starts_queued_runs()
    assert _skip_reason(other, tick) == (None, None)
