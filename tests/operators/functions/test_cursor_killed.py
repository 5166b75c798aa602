"""A fire whose process is killed mid-run: the cursor stays, the outcome is Unknown, no failure is counted."""

from __future__ import annotations

import datetime
import signal

from tessera.operators.functions.status import function_status

from ..conftest import fire_record, stored_cursor, task_instance


def test_a_fire_killed_mid_run_leaves_the_cursor_and_reads_unknown_without_counting_a_failure(cursor_dags):
    from airflow.configuration import conf
    from airflow.utils.state import TaskInstanceState

    dag_id = "cursor_t_killed"
    dag = cursor_dags.add(dag_id, extra='concurrency="Allow",')
    key = f"{dag_id}-state"
    cursor_dags.fire(dag)  # clean: n=1
    cursor_dags.behave(dag_id, mode="raise")
    cursor_dags.fire(dag)  # failed: 1 consecutive failure
    assert function_status(dag_id).consecutive_failures == 1

    cursor_dags.behave(dag_id, mode="sleep", seconds=600)
    process = cursor_dags.start_fire(dag_id)
    try:
        cursor_dags.wait_started(dag_id, process)
        running = function_status(dag_id)
        assert len(running.in_flight) == 1  # alive and heartbeating: in flight, not yet an outcome
        assert (running.last_outcome, running.consecutive_failures) == ("Failed", 1)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()

    killed_run = running.in_flight[0]
    ti = task_instance(dag_id, killed_run)
    assert ti.state == TaskInstanceState.RUNNING  # nobody observed the end: the DB still says running
    assert fire_record(dag_id, killed_run) is None  # no outcome was ever reported
    assert stored_cursor(key) == {"n": 1}

    # Once the heartbeat is older than Airflow's timeout, the fire is known lost.
    timeout = conf.getint("scheduler", "task_instance_heartbeat_timeout")
    later = ti.last_heartbeat_at + datetime.timedelta(seconds=timeout + 1)
    lost = function_status(dag_id, now=later)
    assert (lost.last_outcome, lost.consecutive_failures, lost.in_flight) == ("Unknown", 1, [])
    ready = lost.condition("Ready")
    assert (ready.status, ready.reason) == ("False", "FireLost")

    # The scheduler then fails the task instance; the fire stays Unknown, not Failed.
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import update

    with create_session() as session:
        session.execute(
            update(TaskInstance).where(TaskInstance.id == ti.id).values(state=TaskInstanceState.FAILED, end_date=later)
        )
    after = function_status(dag_id)
    assert (after.last_outcome, after.consecutive_failures) == ("Unknown", 1)

    # The next fire retries the same window and moves on.
    cursor_dags.behave(dag_id, mode="ok")
    assert cursor_dags.fire(dag).state == "success"
    assert cursor_dags.calls(dag_id)[-1]["cursor"] == {"n": 1}
    assert stored_cursor(key) == {"n": 2}
    assert function_status(dag_id).consecutive_failures == 0
