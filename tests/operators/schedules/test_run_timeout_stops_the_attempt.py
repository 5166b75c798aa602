"""TIMEOUT stops the attempt: a task still running when its run times out is not started again until it stopped.

Found on a real scheduler: a declared schedule's TIMEOUT passed while a task ran; Airflow's
``dagrun_timeout`` marked the run's unfinished tasks skipped, the retry listener cleared them for
the next attempt, and the scheduler started the task's next copy while the old process still ran
(the old worker stops only at its next heartbeat). Here the scheduler's own timeout step
(``SchedulerJobRunner._schedule_dag_run``) runs against a real metadata DB, with the run's task
running and a second task queued (sent to a worker, not started), and the listener then queues the
next attempt: the running task waits in ``restarting`` (Airflow's state for a task cleared while it
runs: it becomes schedulable once the executor reports its process gone), the queued one is cleared
(its worker can no longer start it: its task-instance id is a new one).
"""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

DAG_ID = "timeout_stops_the_attempt"
DAG_FILE = f'''
from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([Schedule("timed", cron="0 0 1 1 *", retries=1, retry_delay=0, timeout=5)])

with DAG(dag_id="{DAG_ID}", start_date=None, **SCHEDULES.dag_kwargs("timed")) as dag:

    @task
    def running() -> None:
        pass

    @task
    def queued() -> None:
        pass

    running()
    queued()
SCHEDULES.apply(dag)
'''
OCCURRENCE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture
def timed_out_run(airflow_db: str, tmp_path: Path) -> Iterator[str]:
    """A running attempt of the DAG started a minute ago (TIMEOUT 5 s): its run id; removed afterwards."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.taskinstancehistory import TaskInstanceHistory
    from airflow.timetables.base import DataInterval
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType
    from sqlalchemy import delete, update

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    (tmp_path / "dag.py").write_text(textwrap.dedent(DAG_FILE))
    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    sync_bag_to_db(bag, "dags-folder", None)
    started = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
    with create_session() as session:
        session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(is_paused=False))
        run = SerializedDagModel.get_dag(DAG_ID, session=session).create_dagrun(
            run_id="scheduled__timed",
            logical_date=OCCURRENCE,
            data_interval=DataInterval(OCCURRENCE, OCCURRENCE),
            run_after=OCCURRENCE,
            run_type=DagRunType.SCHEDULED,
            triggered_by=DagRunTriggeredByType.TIMETABLE,
            state=DagRunState.RUNNING,
            session=session,
        )
        run.start_date = started
        for ti in run.get_task_instances(session=session):
            ti.try_number = 1
            if ti.task_id == "running":
                ti.state, ti.start_date = TaskInstanceState.RUNNING, started + datetime.timedelta(seconds=1)
            else:
                ti.state = TaskInstanceState.QUEUED
        run_id = run.run_id
    try:
        yield run_id
    finally:
        with create_session() as cleanup:
            for model in (TaskInstanceHistory, TaskInstance, DagRun):
                cleanup.execute(delete(model).where(model.dag_id == DAG_ID))


def test_a_task_running_when_the_attempt_timed_out_is_not_started_again_until_it_stopped(timed_out_run: str) -> None:
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from sqlalchemy import select

    from tessera.operators.schedules.run_retries import retry_failed_run

    with create_session() as session:
        run = session.scalar(select(DagRun).where(DagRun.dag_id == DAG_ID, DagRun.run_id == timed_out_run))
        before = {ti.task_id: ti.id for ti in run.get_task_instances(session=session)}
        SchedulerJobRunner(job=Job())._schedule_dag_run(run, session)  # Airflow's own dagrun_timeout step
        if run.state == DagRunState.FAILED:  # the plugin's listener is not loaded in this process: call it
            assert retry_failed_run(run, session, "timed_out")
        assert run.state == DagRunState.QUEUED, "the next attempt is queued"
        tis = {ti.task_id: ti for ti in run.get_task_instances(session=session)}
        assert tis["running"].state == TaskInstanceState.RESTARTING, (
            "still running when the attempt was stopped: not schedulable until its process is gone"
        )
        assert tis["queued"].state is None, "never started: cleared for the next attempt"
        assert tis["queued"].id != before["queued"], "the old worker cannot start it any more"
