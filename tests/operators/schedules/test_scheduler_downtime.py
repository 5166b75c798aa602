"""Scheduler downtime read from Airflow's ``job`` table, and what a run after a restart records (real metadata DB).

Found on a real scheduler (LocalExecutor): killed with a run in flight and restarted minutes
later, it took the downtime for overlap: ``buffer_one`` ran the stale tick after the killed run
and noted the others ``BufferFull``, ``skip`` noted them ``ConcurrencyForbidden``, and after
``Backfill(limit=3)`` catch-up runs were noted "Queued". Each ``SchedulerJob`` row heartbeats from
its ``start_date`` to its ``latest_heartbeat``; a stretch longer than the health-check grace with
no row heartbeating is downtime, with several schedulers only when none of them was.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tessera.operators.schedules.activity import read_activity
from tessera.timetables import Backfill, Every, Fixed
from tessera.timetables.owed_runs import treatments

DAG_ID = "scheduler_downtime_probe"
T0 = datetime.datetime(2026, 3, 1, 10, 0, tzinfo=datetime.timezone.utc)
SECOND = datetime.timedelta(seconds=1)
PERIOD = 10 * SECOND


def t(seconds: float) -> datetime.datetime:
    return T0 + seconds * SECOND


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    """A session with the DAG's row; its runs, audit entries and every scheduler job are removed afterwards."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.jobs.job import Job
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    DagBundlesManager().sync_bundles_to_db()
    with create_session() as setup:
        setup.execute(delete(Job).where(Job.job_type == "SchedulerJob"))
        setup.merge(DagModel(dag_id=DAG_ID, bundle_name="dags-folder", is_paused=False, is_stale=False))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        for model in (DagRun, Log):
            cleanup.execute(delete(model).where(model.dag_id == DAG_ID))
        cleanup.execute(delete(DagModel).where(DagModel.dag_id == DAG_ID))
        cleanup.execute(delete(Job).where(Job.job_type == "SchedulerJob"))


def _scheduler(session, started: datetime.datetime, last_beat: datetime.datetime, state: str = "running") -> None:
    from airflow.jobs.job import Job

    job = Job()
    job.job_type, job.state, job.start_date, job.latest_heartbeat = "SchedulerJob", state, started, last_beat
    session.add(job)
    session.flush()


def _downtime(session, since: datetime.datetime, until: datetime.datetime | None = None):
    from tessera.operators.schedules.activity import scheduler_downtime

    return scheduler_downtime(session, since=since, until=until)


def test_a_killed_scheduler_restarted_later_leaves_one_span_from_its_last_heartbeat(session) -> None:
    _scheduler(session, t(0), t(60), "failed")
    _scheduler(session, t(120), t(300))
    assert _downtime(session, since=t(30)) == ((t(60), t(120)),)


def test_a_downtime_that_began_before_the_run_was_due_starts_at_the_last_heartbeat(session) -> None:
    _scheduler(session, t(0), t(60), "failed")
    _scheduler(session, t(200), t(300))
    assert _downtime(session, since=t(100)) == ((t(60), t(200)),)


def test_a_restart_within_the_grace_is_no_downtime(session) -> None:
    _scheduler(session, t(0), t(60), "success")
    _scheduler(session, t(80), t(300))  # 20 s: within the default 30 s grace
    assert _downtime(session, since=t(30)) == ()


def test_with_several_schedulers_downtime_is_when_none_was_heartbeating(session) -> None:
    _scheduler(session, t(0), t(300))  # the survivor
    _scheduler(session, t(10), t(60), "failed")  # killed, restarted at 150
    _scheduler(session, t(150), t(300))
    assert _downtime(session, since=t(30)) == ()
    session.rollback()
    _scheduler(session, t(0), t(70), "failed")
    _scheduler(session, t(10), t(60), "failed")
    _scheduler(session, t(150), t(300))
    _scheduler(session, t(155), t(300))
    assert _downtime(session, since=t(30)) == ((t(70), t(150)),)


def test_after_the_job_rows_were_cleaned_nothing_before_the_oldest_row_is_called_downtime(session) -> None:
    # ``airflow db clean --tables job`` removed every row heartbeating before 10:01:50.
    _scheduler(session, t(120), t(300))
    assert _downtime(session, since=t(30)) == ()


def test_only_what_the_scheduler_knew_before_a_moment_is_read(session) -> None:
    _scheduler(session, t(0), t(60), "failed")
    _scheduler(session, t(120), t(300))
    assert _downtime(session, since=t(30), until=t(100)) == (), "the restart came after: a stretch still open"


def test_a_scheduler_restarting_in_a_loop_is_read_a_bounded_number_of_rows(session) -> None:
    from tessera.operators.schedules.activity import MAX_SCHEDULER_JOBS_READ

    # 150 scheduler processes, each up 5 s and down 60 s: only the newest rows are read.
    for k in range(150):
        _scheduler(session, t(65 * k), t(65 * k + 5), "failed")
    spans = _downtime(session, since=t(0))
    assert len(spans) == MAX_SCHEDULER_JOBS_READ - 1
    assert spans[-1] == (t(65 * 148 + 5), t(65 * 149))


def _run(session, due, *, created, ended, timetable, slots: int | None = None) -> object:
    from airflow.models.dagrun import DagRun

    run = DagRun(
        dag_id=DAG_ID,
        run_id=f"scheduled__{due.isoformat()}",
        run_type="scheduled",
        state="success" if ended else "running",
        logical_date=due - PERIOD,
        data_interval=(due - PERIOD, due),
        run_after=due,
        start_date=created,
    )
    run.created_at, run.end_date = created, ended
    run.dag = SimpleNamespace(timetable=timetable, max_active_runs=slots or timetable_slots(timetable), default_args={})
    session.add(run)
    session.flush()
    return run


def timetable_slots(timetable) -> int:
    return 16 if timetable.run_policy.overlap == "allow_all" else 1


def _records(session) -> list[str]:
    from airflow.models.log import Log
    from sqlalchemy import select

    return list(session.scalars(select(Log.event).where(Log.dag_id == DAG_ID)))


@pytest.mark.parametrize("overlap", ["buffer_one", "skip"])
def test_the_newest_run_after_a_restart_records_no_overlap(session, overlap) -> None:
    from tessera.operators.schedules.held_fires import fires_before

    # 10:00:00's 20 s run was in flight when the scheduler died (last heartbeat 10:00:05); it
    # restarted at 10:01:00 and ran that task again, to 10:01:25. 10:01:20, the newest due, is created then.
    every = Every("10s", phase=Fixed("0s"), overlap=overlap)
    _scheduler(session, t(-100), t(5), "failed")
    _scheduler(session, t(60), t(100))
    _run(session, t(0), created=t(0.5), ended=t(85), timetable=every)
    newest = _run(session, t(80), created=t(85.5), ended=None, timetable=every)
    assert fires_before(newest, session) is None
    assert _records(session) == []
    # What the scheduler decided when it created 10:01:20: the catch-up's newest; the rest missed, not held.
    activity = read_activity(session, DAG_ID, slots=1, before=t(85.5))
    assert activity.down == ((t(5), t(60)),)
    found, _ = treatments(every, activity, now=t(85.5), through=t(80), limit=100)
    assert found[-1] == (t(80), "due")
    assert {how for _, how in found[:-1]} == {"MissedDeadline"}


def test_a_restart_within_the_grace_leaves_the_overlap_policy_to_decide(session) -> None:
    every = Every("10s", phase=Fixed("0s"), overlap="buffer_one")
    _scheduler(session, t(-100), t(5), "success")
    _scheduler(session, t(20), t(100))
    _run(session, t(0), created=t(0.5), ended=t(85), timetable=every)
    activity = read_activity(session, DAG_ID, slots=1, before=t(85.5))
    found, _ = treatments(every, activity, now=t(85.5), through=t(10), limit=100)
    assert activity.down == () and found == [(t(10), "queued")]


def test_backfill_catch_up_runs_after_a_restart_carry_no_queue_record(session) -> None:
    from tessera.operators.schedules.held_fires import fires_before

    every = Every("10s", phase=Fixed("0s"), catch_up=Backfill(limit=3))
    _scheduler(session, t(-100), t(5), "failed")
    _scheduler(session, t(60), t(100))
    _run(session, t(0), created=t(0.5), ended=t(85), timetable=every)  # in flight at the kill, run again
    for k, due in enumerate((t(30), t(40), t(50), t(60))):  # the newest at 10:01:01 and the three before it
        caught_up = _run(session, due, created=t(61 + k), ended=None, timetable=every)
        assert fires_before(caught_up, session) is None, due
    assert _records(session) == []


def test_a_queued_run_names_when_its_slot_freed_not_when_the_run_before_it_was_created(session) -> None:
    from tessera.operators.schedules.held_fires import fires_before

    # max_active_runs 2, the scheduler up throughout: 10:00:00 and 10:00:10 held both slots, so
    # 10:00:20 waited; both ended (10:00:39.5, 10:00:40.5) before it was created at 10:00:41.5,
    # and 10:00:30, due meanwhile, waited behind it.
    every = Every("10s", phase=Fixed("0s"))
    _scheduler(session, t(-100), t(100))
    _run(session, t(0), created=t(0.5), ended=t(39.5), timetable=every, slots=2)
    _run(session, t(10), created=t(10.5), ended=t(40.5), timetable=every, slots=2)
    _run(session, t(20), created=t(41.5), ended=None, timetable=every, slots=2)
    queued = _run(session, t(30), created=t(41.7), ended=None, timetable=every, slots=2)
    assert fires_before(queued, session) == (
        "Queued: this fire came due at 2026-03-01 10:00:30 UTC while max_active_runs 2 run(s) of "
        f"{DAG_ID} were in flight (overlap allow_all); it was created when a slot freed at 2026-03-01 10:00:40 UTC."
    )
